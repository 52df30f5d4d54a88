"""Shard actor reuse (``RayOptions.reuse_actors``) on a real local Ray instance with real MuJoCo inside.

A backend that closes normally parks its healthy shard actors in the process's idle pool
(``unisim_ray._pool``); the next backend whose actors would be created alike takes them, so it pays
no process start. What a reused actor must not change: the results (bit for bit those of fresh
actors and of in-process MuJoCo), the env range it serves (another backend's layout), and nothing of
the previous backend may survive in it (inner backend closed, scene files removed). A parked actor
that died is replaced; ``reuse_actors=False`` kills on close; the pool is bounded; a forked child
leaves the parent's pool alone.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("unisim_mujoco")

import unisim_core  # noqa: E402
from unisim_core import SceneCfg, create_backend  # noqa: E402
from unisim_ray import _pool, release_idle_actors  # noqa: E402

pytestmark = pytest.mark.usefixtures("local_ray")

SCENES = Path(unisim_core.__file__).parent / "scenes"
QUADRUPED = SceneCfg(SCENES / "quadruped.xml", default_keyframe="home")


@pytest.fixture(autouse=True)
def empty_pool():
    """Each test starts and ends with no idle actor (their pids are the tests' evidence)."""
    release_idle_actors()
    yield
    release_idle_actors()


def make(made: list, num_envs: int = 6, scene: SceneCfg = QUADRUPED, **opts):
    opts.setdefault("progress", False)
    b = create_backend("ray", scene, num_envs, 0.005, inner="mujoco", shards=2, inner_options={"threads": 1},
                       np_dtype=np.float64, seed=4, **opts)
    made.append(b)
    return b


def pids(b) -> list[int]:
    return [s.pid for s in b.describe_shards()]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def gone(pid_list: list[int], within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not any(alive(p) for p in pid_list):
            return True
        time.sleep(0.05)
    return False


def trajectory(b) -> list[np.ndarray]:
    """Reads after a set_state, steps under varying controls and a wrench: every field the cache holds."""
    n, nu = b.num_envs, b.num_actuators
    rng = np.random.default_rng(2)
    q = np.tile(b.get_keyframe_qpos("home"), (n, 1))
    q[:, 2] += 0.02 * np.arange(n)
    b.set_state(np.arange(n), q, np.zeros((n, b.nv)))
    out = []
    ids = np.arange(b.num_bodies)
    for i in range(6):
        if i == 2:
            b.apply_body_force(np.array([b.base_body_id]), rng.normal(0, 5, (n, 1, 3)))
        b.step((q[:, 7:] + rng.uniform(-0.2, 0.2, (n, nu))).astype(np.float32), 3)
        out += [b.get_qpos(), b.get_qvel(), *b.get_body_state_w(ids), b.get_physics_state()]
    return out


def test_a_second_backend_reuses_the_first_ones_actors_and_matches_fresh_actors(made):
    first = make(made, 6)  # envs [0:3) [3:6)
    first.step(np.zeros((6, first.num_actuators), np.float32), 5)
    actors = list(first._actors)
    workdirs = ray.get([a.__ray_call__.remote(lambda self: self.host._workdir) for a in actors])
    assert all(Path(w).is_dir() for w in workdirs)
    before = pids(first)
    first.close()
    assert _pool.idle_count() == 2 and all(alive(p) for p in before)
    # parked: inner backend closed, scene files removed
    assert ray.get([a.__ray_call__.remote(lambda self: self.host.backend is None) for a in actors]) == [True, True]
    assert not any(Path(w).exists() for w in workdirs)
    del actors

    # another layout (5 envs: [0:3) [3:5)) on the same actors, shard k on the actor shard k left
    reused = make(made, 5)
    assert pids(reused) == before and [s.reused for s in reused.describe_shards()] == [True, True]
    assert [(s.env_start, s.env_stop) for s in reused.describe_shards()] == [(0, 3), (3, 5)]
    assert _pool.idle_count() == 0
    fresh = make(made, 5, reuse_actors=False)
    assert set(pids(fresh)).isdisjoint(before) and not any(s.reused for s in fresh.describe_shards())
    ref = create_backend("mujoco", QUADRUPED, 5, 0.005, threads=1, np_dtype=np.float64, seed=4)
    made.append(ref)
    want = trajectory(ref)
    for b in (reused, fresh):
        got = trajectory(b)
        assert all(np.array_equal(g, w) for g, w in zip(got, want))


def test_a_parked_actor_that_died_is_replaced_by_a_fresh_one(made):
    first = make(made, 4)
    old = pids(first)
    first.close()
    os.kill(old[1], signal.SIGKILL)  # shard 1's idle actor dies in the pool
    assert gone([old[1]])
    b = make(made, 4)
    shards = b.describe_shards()
    assert shards[0].pid == old[0] and shards[0].reused
    assert shards[1].pid != old[1] and not shards[1].reused
    b.step(np.zeros((4, b.num_actuators), np.float32), 2)
    assert np.isfinite(b.get_qpos()).all()
    # and the fresh actor is pooled like any other
    new = pids(b)
    b.close()
    assert pids(make(made, 4)) == new


def test_reuse_actors_false_kills_on_close_and_faults_kill(made):
    b = make(made, 4, reuse_actors=False)
    off = pids(b)
    b.close()
    assert gone(off) and _pool.idle_count() == 0
    # a backend poisoned by a fault kills its surviving shards too (their state is unknown)
    b = make(made, 4)
    live = pids(b)
    os.kill(live[0], signal.SIGKILL)
    with pytest.raises(unisim_core.EngineError, match="died during step"):
        b.step(np.zeros((4, b.num_actuators), np.float32), 1)
    b.close()
    assert gone(live) and _pool.idle_count() == 0


def test_the_pool_is_bounded_and_released(made, monkeypatch):
    monkeypatch.setattr(_pool, "MAX_IDLE_PER_KEY", 1)
    b = make(made, 4)
    first = pids(b)
    b.close()
    assert _pool.idle_count() == 1
    assert alive(first[0]) and gone([first[1]])  # shard 0's actor kept, shard 1's killed
    # MAX_IDLE across keys: the oldest key's actors make room (killed)
    monkeypatch.setattr(_pool, "MAX_IDLE", 1)
    other = make(made, 4, actor_options={"runtime_env": {"env_vars": {"UNISIM_TEST_POOL_KEY": "b"}}})
    assert not any(s.reused for s in other.describe_shards())  # another key: fresh actors
    second = pids(other)
    other.close()
    assert _pool.idle_count() == 1 and gone([first[0], second[1]]) and alive(second[0])
    assert release_idle_actors() == 1 and gone([second[0]]) and _pool.idle_count() == 0


def test_a_forked_child_leaves_the_parents_pool_alone(made):
    b = make(made, 4)
    parked = pids(b)
    b.close()
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: sees an empty pool, kills nothing, runs the pool's exit handler
        try:
            msg = f"{_pool.idle_count()} {release_idle_actors()}"
            _pool._at_exit()
            os.write(wfd, msg.encode())
        finally:
            os._exit(0)
    os.close(wfd)
    os.waitpid(pid, 0)
    assert os.read(rfd, 100).decode() == "0 0"
    os.close(rfd)
    assert _pool.idle_count() == 2 and all(alive(p) for p in parked)
    assert pids(make(made, 4)) == parked  # still usable by the parent
