"""The kit's session guards (entry point ``pytest11: unisim_guards``): they hold wherever pytest
starts (a repository root, ``pytest plugins/unisim_X`` with that distribution's own config, a
third-party backend's tests). ``-p no:unisim_guards`` switches them off.

- No UniSim worker process (``unisim_core.plugin.worker``, ``unisim_isaacsim.worker``) and no UniSim
  shared-memory segment (``/dev/shm/unisim-*``) may outlive the session: one that does fails it
  (idle workers kept for reuse, ``unisim_core.plugin.worker.pool``, are stopped first).
  The session marks its children (``UNISIM_GUARD_SESSION`` in their environment), so the workers
  and the still-mapped segments of another session running beside it on the machine are not its.
- In CI (``CI`` set) nothing may skip but the GPU-only checks (``@pytest.mark.gpu``) and the kit's
  own capability skips: a dependency CI installs that goes missing fails instead of hiding tests.
  ``UNISIM_ALLOW_SKIPS=<why>`` lifts the rule for a deliberately partial environment;
  ``UNISIM_ALLOW_SKIPS_NAMING=<text>`` lifts it only for skips whose reason contains that text.
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

import pytest

__all__ = ["GPU_MARKER", "skip_fails"]

SHM = Path("/dev/shm")
GPU_MARKER = "gpu: needs an NVIDIA GPU (the only checks CI lets skip)"
TOKEN_ENV = "UNISIM_GUARD_SESSION"
_LEAKS = pytest.StashKey[tuple]()


def _segments() -> set[str]:
    return {p.name for p in SHM.glob("unisim-*")} if SHM.is_dir() else set()


def _worker_pids() -> set[int]:
    """Processes running a UniSim worker (``python -m unisim_core.plugin.worker`` or an Isaac Sim worker)."""
    pids = set()
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if b"unisim_core.plugin.worker" in cmd or b"unisim_isaacsim.worker" in cmd:
            pids.add(int(proc.name))
    return pids


def _environ(pid: int) -> bytes | None:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None


def _ours(pid: int, token: str) -> bool:
    """Whether process ``pid`` is this one or descends from the session that set ``token`` (its
    environment at start says so)."""
    if pid == os.getpid():
        return True
    env = _environ(pid)
    return env is not None and f"{TOKEN_ENV}={token}".encode() in env.split(b"\0")


def _mapped_by_others(segments: set[str], token: str) -> set[str]:
    """The ``segments`` a live process of another session still maps."""
    found: set[str] = set()
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            maps = (proc / "maps").read_text()
        except (OSError, UnicodeDecodeError):
            continue
        hits = {name for name in segments if f"/dev/shm/{name}" in maps}
        if hits and not _ours(int(proc.name), token):
            found |= hits
    return found


def _leaks(before: tuple[set[str], set[int]], token: str) -> tuple[set[str], set[int]]:
    segs = _segments() - before[0]
    pids = {pid for pid in _worker_pids() - before[1] if _ours(pid, token)}
    if segs:
        segs -= _mapped_by_others(segs, token)
    return segs, pids


def skip_fails(reason: str) -> bool:
    """Whether a skip with this reason fails the run (in CI, unless lifted as the module says)."""
    allowed_naming = os.environ.get("UNISIM_ALLOW_SKIPS_NAMING")
    return (bool(os.environ.get("CI")) and not os.environ.get("UNISIM_ALLOW_SKIPS")
            and not (allowed_naming and allowed_naming in reason))


def _fail_skip(report) -> None:
    """Turn a skipped test or collection report into a failure when the CI rule says so."""
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if skip_fails(reason):
        report.outcome = "failed"
        report.longrepr = (f"skipped in CI: {reason}\nIn CI nothing may skip but GPU-only checks "
                           "(@pytest.mark.gpu): install what the test needs in .ci/run")


def _is_kit_check(path) -> bool:
    return "unisim_conformance" in Path(str(path)).parts  # the kit's own capability skips


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", GPU_MARKER)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    if (report.skipped and not hasattr(report, "wasxfail") and not _is_kit_check(item.path)
            and not item.get_closest_marker("gpu")):
        _fail_skip(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    """A test module skipped at collection (``pytest.importorskip`` at module level) obeys the same rule."""
    report = yield
    if report.skipped and isinstance(collector, pytest.Module) and not _is_kit_check(collector.path):
        _fail_skip(report)
    return report


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist starts its workers: they inherit the mark
def pytest_sessionstart(session: pytest.Session) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):  # the controlling session checks
        return
    token = f"{os.getpid()}-{secrets.token_hex(4)}"
    session.config.stash[_LEAKS] = (_segments(), _worker_pids(), token, os.environ.get(TOKEN_ENV))
    os.environ[TOKEN_ENV] = token


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    from unisim_core.plugin.worker import pool

    pool.drain()  # idle workers kept for reuse are this process's until it exits: stop them first
    stashed = session.config.stash.get(_LEAKS, None)
    if stashed is None:
        return
    *before, token, outer = stashed
    deadline = time.monotonic() + 5.0  # teardown of the last worker may still be reaping
    while True:
        segs, pids = _leaks(tuple(before), token)
        if not (segs or pids) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    if outer is None:
        os.environ.pop(TOKEN_ENV, None)
    else:
        os.environ[TOKEN_ENV] = outer
    if segs or pids:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"LEAK: shared-memory segments {sorted(segs)} and worker processes "
                                f"{sorted(pids)} outlived the test session", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
