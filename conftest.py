"""Suite-wide leak check: no worker process and no UniSim shared-memory segment may outlive the run."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

SHM = Path("/dev/shm")


def _segments() -> set[str]:
    return {p.name for p in SHM.glob("unisim-*")} if SHM.is_dir() else set()


def _worker_pids() -> set[int]:
    """Processes running a UniSim worker (``python -m unisim_core.worker`` or an Isaac Sim worker)."""
    pids = set()
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if b"unisim_core.worker" in cmd or b"unisim_isaacsim.worker" in cmd:
            pids.add(int(proc.name))
    return pids


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config._unisim_leaks_before = (_segments(), _worker_pids())


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    before = getattr(session.config, "_unisim_leaks_before", None)
    if before is None or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    deadline = time.monotonic() + 5.0  # teardown of the last worker may still be reaping
    while True:
        segs, pids = _segments() - before[0], _worker_pids() - before[1]
        if not (segs or pids) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    if segs or pids:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"LEAK: shared-memory segments {sorted(segs)} and worker processes "
                                f"{sorted(pids)} outlived the test session", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
