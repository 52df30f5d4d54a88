"""Suite-wide guards: no worker process and no UniSim shared-memory segment may outlive the run, and
in CI (``CI`` set) nothing may skip but the GPU-only checks (``@pytest.mark.gpu``): a dependency
CI installs that goes missing fails instead of hiding tests. ``UNISIM_ALLOW_SKIPS=<why>`` lifts
the second rule for a deliberately partial environment (``.ci/run``'s numpy 1.26 subset);
``UNISIM_ALLOW_SKIPS_NAMING=<text>`` lifts it only for skips whose reason contains that text
(``.ci/run``'s Quick start stage: tests of the heavy extra, run again once it is installed)."""

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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "gpu: needs an NVIDIA GPU (the only checks CI lets skip)")


def _skip_fails(reason: str) -> bool:
    """Whether a skip with this reason fails the run (in CI, unless lifted as the module says)."""
    allowed_naming = os.environ.get("UNISIM_ALLOW_SKIPS_NAMING")
    return (bool(os.environ.get("CI")) and not os.environ.get("UNISIM_ALLOW_SKIPS")
            and not (allowed_naming and allowed_naming in reason))


def _fail_skip(report) -> None:
    """Turn a skipped test or collection report into a failure when the CI rule says so."""
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if _skip_fails(reason):
        report.outcome = "failed"
        report.longrepr = (f"skipped in CI: {reason}\nIn CI nothing may skip but GPU-only checks "
                           "(@pytest.mark.gpu): install what the test needs in .ci/run")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    kit_check = "unisim_conformance" in Path(str(item.path)).parts  # the kit's own capability skips
    if report.skipped and not hasattr(report, "wasxfail") and not kit_check and not item.get_closest_marker("gpu"):
        _fail_skip(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    """A test module skipped at collection (``pytest.importorskip`` at module level) obeys the same rule."""
    report = yield
    kit_check = "unisim_conformance" in Path(str(collector.path)).parts
    if report.skipped and isinstance(collector, pytest.Module) and not kit_check:
        _fail_skip(report)
    return report


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
