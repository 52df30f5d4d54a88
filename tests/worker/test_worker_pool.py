"""Worker reuse (``unisim_core.plugin.worker.pool``): a closed backend's healthy worker serves the next
backend of the same launch instead of a new process; faulted, surplus, dead or differently
launched workers never do, and a forked child never touches its parent's idle workers."""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

from unisim_core import SceneCfg, create_backend
from unisim_core.contract.errors import UnknownNameError
from unisim_core.plugin.worker import WorkerCrashedError, pool
from unisim_core.scenes import scene_path

pytest.importorskip("unisim_mujoco", reason="the worker hosts the MuJoCo plugin here")

QUAD = SceneCfg(scene_path("quadruped"), default_keyframe="home")


@pytest.fixture(autouse=True)
def empty_pool(monkeypatch):
    monkeypatch.delenv(pool.POOL_ENV, raising=False)
    pool.drain()
    yield
    pool.drain()


def _hosted(n=2, **options):
    return create_backend("mujoco", QUAD, n, 0.005, isolation="subprocess", **options)


def _trajectory(b, steps=5):
    rng = np.random.default_rng(0)
    out = []
    for _ in range(steps):
        b.step(rng.uniform(-1, 1, (b.num_envs, b.num_actuators)).astype(np.float32), 2)
        out.append(np.concatenate([b.get_qpos(), b.get_qvel()], axis=1))
    return np.stack(out)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


def test_a_closed_backends_worker_serves_the_next_one_bit_for_bit():
    """The second backend reuses the first's worker (same pid) and steps exactly as in-process."""
    first = _hosted()
    pid = first.worker_pid
    first.step(np.ones((2, first.num_actuators), dtype=np.float32), 3)  # state the next one must not see
    first.close()
    assert pool.idle_count() == 1 and _alive(pid)
    second = _hosted()
    try:
        assert second.worker_pid == pid and pool.idle_count() == 0
        with create_backend("mujoco", QUAD, 2, 0.005) as local:
            np.testing.assert_array_equal(_trajectory(second), _trajectory(local))
    finally:
        second.close()


def test_pool_off_bounded_and_keyed_by_launch(monkeypatch):
    """``UNISIM_WORKER_POOL=0``: every close stops its worker. Default: at most 2 idle workers (a
    third is stopped). Workers are interchangeable only under the same argv, explicit environment,
    working directory and frame cap."""
    monkeypatch.setenv(pool.POOL_ENV, "0")
    b = _hosted()
    pid = b.worker_pid
    b.close()
    assert pool.idle_count() == 0 and not _alive(pid)
    monkeypatch.delenv(pool.POOL_ENV)
    three = [_hosted() for _ in range(3)]
    pids = [b.worker_pid for b in three]
    for b in three:
        b.close()
    assert pool.idle_count() == 2 and [_alive(p) for p in pids] == [True, True, False]
    argv = ("python", "-m", "unisim_core.plugin.worker", "unisim_core.plugin.worker.hosted:factory")
    key = pool.launch_key(argv, None, None, 1 << 20)
    assert key == pool.launch_key(list(argv), None, None, 1 << 20)
    assert len({key, pool.launch_key(argv, {"A": "1"}, None, 1 << 20), pool.launch_key(argv, None, "/tmp", 1 << 20),
                pool.launch_key(argv[:-1], None, None, 1 << 20), pool.launch_key(argv, None, None, 1 << 10)}) == 5
    monkeypatch.setenv(pool.POOL_ENV, "many")
    with pytest.raises(ValueError, match="UNISIM_WORKER_POOL: expected a non-negative integer"):
        pool.max_idle()


def test_dead_idle_workers_are_replaced_and_faulted_ones_never_kept():
    """An idle worker killed in the pool is skipped (a new one starts); a backend whose worker
    crashed is closed without giving anything to the pool."""
    b = _hosted()
    pid = b.worker_pid
    b.close()
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    fresh = _hosted()
    assert fresh.worker_pid != pid
    os.kill(fresh.worker_pid, signal.SIGKILL)
    with pytest.raises(WorkerCrashedError):
        fresh.step(np.zeros((2, fresh.num_actuators), dtype=np.float32))
    fresh.close()
    assert pool.idle_count() == 0


def test_a_refusal_on_a_reused_worker_is_the_in_process_error():
    """The next backend's INIT fails on the idle worker exactly as it would on a new one (its error
    class), and that worker is not kept."""
    b = _hosted()
    b.close()
    with pytest.raises(UnknownNameError, match="no_such_key"):
        create_backend("mujoco", SceneCfg(scene_path("quadruped"), default_keyframe="no_such_key"), 2, 0.005,
                       isolation="subprocess")
    assert pool.idle_count() == 0


def test_a_forked_child_starts_its_own_worker_and_leaves_the_parents_idle_one():
    """After ``os.fork()`` the child's backend gets a new worker; the parent's idle worker is still
    alive and still serves the parent's next backend."""
    b = _hosted()
    pid = b.worker_pid
    b.close()
    r, w = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        code = 1
        try:
            c = _hosted()
            os.write(w, str(c.worker_pid).encode())
            c.close()
            pool.drain()  # os._exit skips atexit
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    child_pid = int(os.read(r, 64) or b"0")
    os.close(r)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0 and child_pid not in (0, pid)
    assert _alive(pid) and pool.idle_count() == 1
    again = _hosted()
    try:
        assert again.worker_pid == pid
    finally:
        again.close()
