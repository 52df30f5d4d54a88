"""WorkerClient against real worker subprocesses: round trips, faults, teardown."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from unisim_core.plugin.worker import (
    ShmSlot,
    WorkerCallError,
    WorkerClient,
    WorkerCrashedError,
    WorkerFaultedError,
    WorkerProtocolError,
    WorkerStartupError,
    WorkerTimeoutError,
    WorkerVersionError,
)
from unisim_core.plugin.worker import protocol as protocol_module

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)])}


def module_argv(factory: str) -> list[str]:
    """Launch through `python -m unisim_core.plugin.worker sample_workers:<factory>`."""
    return [sys.executable, "-m", "unisim_core.plugin.worker", f"sample_workers:{factory}"]


def script_argv(factory: str, *extra: str) -> list[str]:
    """Launch sample_workers.py as a script (safe_errors=(ValueError,), optional version)."""
    return [sys.executable, str(HERE / "sample_workers.py"), factory, *extra]


def shm_names() -> set[str]:
    return {n for n in os.listdir("/dev/shm") if n.startswith("unisim-")}


def reaped(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@pytest.fixture
def start():
    """start(argv, **kw) -> WorkerClient; every client is closed at teardown."""
    clients: list[WorkerClient] = []

    def _start(argv: list[str], **kw) -> WorkerClient:
        kw.setdefault("init_timeout", 20.0)
        kw.setdefault("call_timeout", 10.0)
        client = WorkerClient(argv, env=ENV, **kw)
        clients.append(client)
        return client

    yield _start
    for c in clients:
        c.close()


VALUE = {
    "i": [0, -(2**63), 2**70],
    "f": 1.25,
    "s": "ünï",
    "b": b"\x00\x01",
    "n": None,
    "t": True,
    "nested": {"k": [[], {}, [{"deep": b""}]], 3: "int key"},
}


def test_round_trip_init_args_and_ops(start):
    c = start(module_argv("basic"), init_args={"scene": "x", "n": 4})
    assert {"echo", "noop", "step"} <= set(c.ops)
    assert c.call("init_args") == {"scene": "x", "n": 4}
    assert c.call("echo", value=VALUE) == VALUE
    assert c.request("echo", {"value": b"z" * 100_000}, timeout=5) == b"z" * 100_000


def test_large_arrays_in_shared_memory(start):
    c = start(module_argv("basic"))
    act = c.slots.add("act", (512, 19), np.float32)
    obs = c.slots.add("obs", (512, 19), np.float32)
    assert c.call("attach", slots=c.slots.descriptors) == ["act", "obs"]
    for k in range(3):
        act[:] = np.arange(act.size, dtype=np.float32).reshape(act.shape) + k
        c.call("step", scale=0.5)
        np.testing.assert_array_equal(obs, act * 0.5)


def test_bad_slot_descriptor_is_rejected_by_the_worker(start):
    c = start(module_argv("basic"))
    c.slots.add("act", (4, 3), np.float64)
    desc = c.slots.descriptors
    desc["act"]["shape"] = [400, 3]  # larger than the segment
    with pytest.raises(WorkerCallError, match="holds 96 bytes"):
        c.call("attach", slots=desc)
    with pytest.raises(ValueError, match="plain numeric"):
        ShmSlot.attach({**c.slots.descriptors["act"], "dtype": "O"})


@pytest.mark.parametrize("host, worker", [(1, 99), (98, 1)])
def test_protocol_version_mismatch_names_both(start, monkeypatch, host, worker):
    monkeypatch.setattr(protocol_module, "PROTOCOL_VERSION", host)
    argv = script_argv("basic", str(worker)) if worker != 1 else script_argv("basic")
    with pytest.raises(WorkerVersionError, match=f"host speaks {host}, worker speaks {worker}"):
        start(argv)


def test_stray_stdout_does_not_corrupt_framing(start):
    c = start(module_argv("basic"))
    assert c.call("noisy") == "fine"
    assert c.call("echo", value=VALUE) == VALUE
    c.close()
    c._worker.stderr.drain(30)  # returns at EOF: the tail is then complete (no sleep race)
    assert "banner from print()" in c.stderr_tail()
    assert "raw write to fd 1" in c.stderr_tail()


def _assert_poisoned(c: WorkerClient, cause: type[BaseException]) -> None:
    with pytest.raises(WorkerFaultedError, match=cause.__name__) as info:
        c.call("noop")
    assert isinstance(info.value.fault, cause)
    assert reaped(c.pid)


def test_garbage_on_the_channel(start):
    c = start(module_argv("basic"))
    with pytest.raises(WorkerProtocolError, match="non-protocol bytes"):
        c.call("garbage")
    _assert_poisoned(c, WorkerProtocolError)


def test_oversize_header_from_worker(start):
    c = start(module_argv("basic"))
    with pytest.raises(WorkerProtocolError, match="announces 4294967295 bytes"):
        c.call("huge_header")
    _assert_poisoned(c, WorkerProtocolError)


def test_partial_frame_then_eof_while_alive(start):
    c = start(module_argv("basic"))
    with pytest.raises(WorkerProtocolError, match="incomplete frame"):
        c.call("partial", then="close")
    _assert_poisoned(c, WorkerProtocolError)


def test_partial_frame_then_exit(start):
    c = start(module_argv("basic"))
    with pytest.raises(WorkerCrashedError, match="exited with code 3") as info:
        c.call("partial", then="die")
    assert info.value.returncode == 3
    _assert_poisoned(c, WorkerCrashedError)


def test_exit_during_init_reports_stderr_tail(start):
    with pytest.raises(WorkerStartupError, match="exited with code 3 during INIT") as info:
        start(module_argv("exit_in_init"))
    assert info.value.returncode == 3
    assert "libfake.so not found" in str(info.value)


def test_exception_during_init(start):
    with pytest.raises(WorkerStartupError, match="RuntimeError: no license server") as info:
        start(module_argv("fail_in_init"))
    assert "fail_in_init" in str(info.value)  # the remote traceback


def test_unimportable_target(start):
    with pytest.raises(WorkerStartupError, match="ModuleNotFoundError"):
        start([sys.executable, "-m", "unisim_core.plugin.worker", "no_such_module:f"])


def test_hang_times_out_and_poisons(start):
    c = start(module_argv("basic"), call_timeout=0.5)
    with pytest.raises(WorkerTimeoutError, match="within 0.5 s"):
        c.call("hang")
    _assert_poisoned(c, WorkerTimeoutError)


def test_segfault_mid_call(start):
    c = start(module_argv("basic"))
    with pytest.raises(WorkerCrashedError, match="killed by SIGSEGV") as info:
        c.call("segfault")
    assert info.value.returncode < 0
    assert "Segmentation fault" in str(info.value)  # faulthandler's dump in the stderr tail
    _assert_poisoned(c, WorkerCrashedError)


def test_remote_exception_poisons_unless_declared_safe(start):
    c = start(script_argv("basic"))
    with pytest.raises(WorkerCallError, match="ValueError: bad input 5") as info:
        c.call("reject", x=5)
    assert not info.value.poisoned and info.value.remote_type == "ValueError"
    with pytest.raises(WorkerCallError, match="unknown op 'nope'"):
        c.call("nope")
    with pytest.raises(TypeError, match="not plain data"):
        c.call("echo", value=object())  # refused on the host, nothing sent
    assert c.call("echo", value=1) == 1
    with pytest.raises(WorkerCallError, match="engine exploded") as info:
        c.call("fail")
    assert info.value.poisoned and "in fail" in info.value.remote_traceback
    _assert_poisoned(c, WorkerCallError)


def test_progress_rearms_the_init_deadline(start):
    seen = []
    # INIT lasts 4 s, longer than the 2.5 s deadline (which also covers the interpreter's start,
    # slow on a loaded machine): only the progress messages every 0.4 s keep it alive.
    c = start(
        module_argv("slow_init"),
        init_args={"seconds": 4.0, "every": 0.4},
        init_timeout=2.5,
        on_progress=seen.append,
    )
    assert c.ops == ["noop"] and len(seen) >= 4 and "left" in seen[0]
    with pytest.raises(WorkerTimeoutError, match="INIT"):
        start(module_argv("slow_init"), init_args={"seconds": 4.0, "every": None}, init_timeout=2.5)


def _segments(c: WorkerClient) -> set[str]:
    return {d["name"] for d in c.slots.descriptors.values()}


def test_teardown_leaves_no_segment_and_no_process():
    with WorkerClient(module_argv("basic"), env=ENV) as c:
        c.slots.add("a", (1000,), np.float64)
        c.slots.add("b", (3, 3), np.int32)
        c.call("attach", slots=c.slots.descriptors)
        ours = _segments(c)
        assert len(ours) == 2 and ours <= shm_names()
        pid = c.pid
    assert not ours & shm_names() and reaped(pid) and c.returncode == 0
    c.close()  # idempotent


def test_finalizer_cleans_up_a_dropped_client():
    c = WorkerClient(module_argv("basic"), env=ENV)
    c.slots.add("a", (10,), np.float32)
    ours, pid = _segments(c), c.pid
    assert ours <= shm_names()
    del c
    assert not ours & shm_names() and reaped(pid)


def test_teardown_escalates_to_sigkill(start):
    c = start(module_argv("basic"), call_timeout=0.3)
    with pytest.raises(WorkerTimeoutError):
        c.call("stubborn_hang")  # ignores SIGTERM
    assert c.returncode == -9 and reaped(c.pid)


def test_child_attaching_and_exiting_does_not_unlink():
    slot = ShmSlot.create((8,), np.int64)
    try:
        code = (
            "import sys; from unisim_core.plugin.worker import ShmSlot\n"
            f"s = ShmSlot.attach({slot.descriptor!r}); s.array[:] = 42; s.close()"
        )
        subprocess.run([sys.executable, "-c", code], env=ENV, check=True, timeout=20)
        time.sleep(0.3)  # the child's resource tracker would unlink asynchronously
        assert os.path.exists(f"/dev/shm/{slot.name}")
        assert (slot.array == 42).all()
    finally:
        slot.close()
    assert not os.path.exists(f"/dev/shm/{slot.name}")
