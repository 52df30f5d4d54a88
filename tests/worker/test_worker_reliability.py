"""Worker-hosted backends fail closed like in-process ones (issue #13): no read of released
shared memory after close or a crash, errors keep their class, only a dead worker faults the
backend, startup errors are the in-process ones, and Ctrl-C leaves the backend usable."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import numpy as np
import pytest

from unisim_core import SceneCfg, create_backend
from unisim_core.contract.errors import BackendClosedError, EngineError, UnknownNameError
from unisim_core.plugin.worker import WorkerCrashedError, WorkerFaultedError
from unisim_core.scenes import scene_path

pytest.importorskip("unisim_mujoco", reason="the worker hosts the MuJoCo plugin here")

HERE = Path(__file__).resolve().parent
QUAD = SceneCfg(scene_path("quadruped"), default_keyframe="home")


@pytest.fixture(autouse=True)
def importable(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.syspath_prepend(str(HERE))


@pytest.fixture
def hosted():
    made = []

    def make(scene=QUAD, n=2, target="mujoco", **options):
        b = create_backend(target, scene, n, 0.005, isolation="subprocess", **options)
        made.append(b)
        return b

    yield make
    for b in made:
        b.close()


def test_getters_after_close_raise_instead_of_reading_released_memory(hosted):
    """Before #13 any getter on a closed worker-hosted backend segfaulted the process."""
    b = hosted()
    get_qpos, view = b.get_qpos, b.bind_sensor_data(["imu_acc"])  # bound before close
    b.close()
    for call in (b.get_qpos, b.get_qvel, lambda: b.get_body_pos_w(np.array([1])), get_qpos, view.read,
                 lambda: b.get_sensor_data("imu_acc")):
        with pytest.raises(BackendClosedError):
            call()


def test_worker_crash_then_close_never_touches_released_memory(hosted):
    """Before #13 a worker crash followed by close() and a getter segfaulted."""
    b = hosted()
    get_qvel = b.get_qvel
    os.kill(b.worker_pid, signal.SIGKILL)
    with pytest.raises(WorkerCrashedError, match="killed by SIGKILL") as info:
        b.step(np.zeros((2, b.num_actuators)))
    assert isinstance(info.value, EngineError)  # a UniSimError
    with pytest.raises(WorkerFaultedError):
        b.get_body_pos_w(np.array([1]))
    b.close()
    for call in (b.get_qpos, get_qvel, lambda: b.step(np.zeros((2, b.num_actuators)))):
        with pytest.raises(BackendClosedError):
            call()


def test_engine_error_in_the_worker_keeps_its_class_and_does_not_fault(hosted):
    """Before #13 an EngineError became WorkerCallError (not a UniSimError) and faulted the backend."""
    b = hosted(target="sample_backends:PickyFake")
    qpos, qvel = b.get_default_qpos()[None].astype(np.float64), np.zeros((1, b.nv))
    qvel[0, -1] = 777.0
    with pytest.raises(EngineError, match="engine failed on qvel 777") as info:
        b.set_state(np.array([0]), qpos, qvel)
    assert type(info.value) is EngineError
    b.step(np.zeros((2, b.num_actuators)), 2)  # still usable
    assert np.isfinite(b.get_qpos()).all()


@pytest.mark.parametrize(("scene", "options"), [
    (QUAD, {"base_name": "no_such_body"}),
    (SceneCfg(scene_path("quadruped"), default_keyframe="no_such_key"), {}),
])
def test_startup_errors_are_the_in_process_ones(hosted, scene, options):
    """Before #13 they arrived as WorkerStartupError."""
    with pytest.raises(UnknownNameError) as in_process:
        create_backend("mujoco", scene, 1, 0.005, **options)
    with pytest.raises(UnknownNameError) as isolated:
        hosted(scene, 1, **options)
    assert str(isolated.value) == str(in_process.value)


def test_malformed_model_file_is_the_in_process_error(hosted, tmp_path):
    bad = tmp_path / "broken.xml"
    bad.write_text("<mujoco><worldbody><body>")
    with pytest.raises(EngineError) as in_process:
        create_backend("mujoco", SceneCfg(bad), 1, 0.005)
    with pytest.raises(type(in_process.value), match="broken.xml"):
        hosted(SceneCfg(bad), 1)


@pytest.mark.parametrize("isolated", [True, False], ids=["subprocess", "in-process"])
def test_ctrl_c_during_a_long_step_lands_and_leaves_the_backend_usable(hosted, isolated):
    """Before #13 Ctrl-C landed when the whole call ended (and left a worker-hosted backend
    unusable). A real SIGINT from a timer interrupts a call of 10^8 substeps (hours); the state
    is a whole number of substeps and the next calls work."""
    b = hosted(n=1) if isolated else create_backend("mujoco", QUAD, 1, 0.005)
    nsteps = 10**8
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt, match="step interrupted after"):
            b.step(np.zeros((1, b.num_actuators)), nsteps)
    finally:
        timer.cancel()
    done = b.get_physics_state()[0, 0] / b.sim_dt
    assert 0 < done < nsteps and done == pytest.approx(round(done), abs=1e-6)
    b.step(np.zeros((1, b.num_actuators)), 2)
    assert b.get_physics_state()[0, 0] / b.sim_dt == pytest.approx(round(done) + 2, abs=1e-6)
    b.close()


# ----------------------------------------------------------------------------- round three (#28)
def test_fork_is_refused_in_the_child_never_hangs_and_leaves_the_parent_alone():
    """Before #28 a forked child stepping an in-process MuJoCo or MotrixSim backend hung, a MuJoCo
    child that never touched its backend hung at exit, and a child stepped the parent's worker.
    Now with os.fork (the child exits normally) and multiprocessing's fork start method, each
    child's step raises ForkedBackendError naming the remedy, the children exit, and the parent's
    backends (a worker-hosted one too) are unchanged and keep stepping."""
    import json
    import subprocess
    import sys

    specs = ["mujoco", "mujoco@subprocess"]
    try:
        import unisim_motrix  # noqa: F401
        specs.append("motrix")
    except ImportError:
        pass
    run = subprocess.run([sys.executable, str(HERE / "fork_probe.py"), *specs], capture_output=True, text=True,
                         timeout=150)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["fork_exit"] == 0, f"the os.fork child did not exit promptly: {out['fork_exit']}"
    for spec in specs:
        for how in ("fork", "multiprocessing"):
            got = out[how][spec]
            assert got.startswith("ForkedBackendError") and "'spawn'" in got, f"{spec}, {how} child: {got}"
        assert out["parent"][spec] == {"unchanged": True, "steps": True, "worker_alive": True}, (spec, out["parent"])


def test_ctrl_c_during_reads_and_writes_of_a_worker_backend_leaves_it_usable(hosted):
    """Before #28 a SIGINT that landed during a round trip other than a step (set_state, a body
    read) left the request without its reply and faulted the backend. Now the reply is awaited,
    then KeyboardInterrupt is raised, and the backend is usable."""
    b = hosted(n=1)
    q, v = b.get_qpos().astype(np.float64), b.get_qvel().astype(np.float64)
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            for _ in range(100_000):  # round trips only: each set_state and body read is one
                b.set_state(np.array([0]), q, v)
                b.get_body_pos_w(np.array([1]))
    finally:
        timer.cancel()
    assert b._client.faulted is None
    b.step(np.zeros((1, b.num_actuators)), 2)
    assert np.isfinite(b.get_body_pos_w(np.array([1]))).all()


def test_pickling_a_worker_backend_is_refused_in_unisim_terms(hosted):
    """Before #28: TypeError "cannot pickle '_thread.lock' object"."""
    import copy
    import pickle

    from unisim_core.contract.errors import InvalidTypeError

    b = hosted(n=1)
    with pytest.raises(InvalidTypeError, match=f"worker process {b.worker_pid}"):
        pickle.dumps(b)
    with pytest.raises(InvalidTypeError, match="cannot be copied"):
        copy.copy(b)
    with pytest.raises(InvalidTypeError, match="cannot be pickled"):
        copy.deepcopy(b)
    b.step(np.zeros((1, b.num_actuators)))


# ----------------------------------------------------------------------------- round four (#39)
def _stopped_step(b, nsteps=4):
    """SIGSTOP the worker, then call ``step``: the call waits for an answer that never comes."""
    os.kill(b.worker_pid, signal.SIGSTOP)
    return lambda: b.step(np.zeros((b.num_envs, b.num_actuators)), nsteps)


def test_ctrl_c_interrupts_a_hung_worker_within_two_seconds(hosted):
    """Before #39 a SIGSTOPped worker kept a Ctrl-C held for the whole 60 s call timeout, which then
    dropped it (no KeyboardInterrupt). Now the worker gets INTERRUPT_GRACE (1 s) to answer after the
    interrupt, is killed, and KeyboardInterrupt is raised from a WorkerInterruptedError; the backend
    is faulted with that error and its worker process is gone."""
    import time

    from unisim_core.plugin.worker import WorkerInterruptedError

    b = hosted(n=2)
    pid, step = b.worker_pid, _stopped_step(b)
    fired = []
    timer = threading.Timer(0.3, lambda: (fired.append(time.monotonic()), os.kill(os.getpid(), signal.SIGINT)))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt, match="no answer to op 'step' within 1 s of the interrupt") as info:
            step()
    finally:
        timer.cancel()
    assert time.monotonic() - fired[0] < 2.0, "Ctrl-C took 2 s or more to land"
    assert isinstance(info.value.__cause__, WorkerInterruptedError)
    with pytest.raises(WorkerFaultedError, match="WorkerInterruptedError"):
        b.step(np.zeros((2, b.num_actuators)), 1)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # killed and reaped


def test_call_timeout_is_an_option_of_a_subprocess_backend(hosted):
    """``create_backend(..., isolation="subprocess", call_timeout_s=...)`` (before #39 the 60 s
    deadline could not be set): a stopped worker faults the backend after it, not after 60 s."""
    import time

    from unisim_core.contract.errors import InvalidInputError
    from unisim_core.plugin.worker import WorkerTimeoutError

    b = hosted(n=1, call_timeout_s=0.5)
    step = _stopped_step(b)
    t0 = time.monotonic()
    with pytest.raises(WorkerTimeoutError, match="no answer to op 'step' within 0.5 s"):
        step()
    assert time.monotonic() - t0 < 5.0
    with pytest.raises(InvalidInputError, match=r"call_timeout_s: expected a positive finite number .* got -1"):
        hosted(n=1, call_timeout_s=-1)
    with pytest.raises(TypeError, match="call_timeout_s"):  # in-process: not an option of MuJoCo's
        create_backend("mujoco", QUAD, 1, 0.005, call_timeout_s=5.0)
