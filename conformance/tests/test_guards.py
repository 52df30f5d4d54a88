"""The session guards (``unisim_conformance.guards``, entry point ``unisim_guards``) hold in a pytest
started anywhere: here a fresh project directory with its own config, as ``pytest plugins/unisim_X`` is."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

SEGMENT = Path(f"/dev/shm/unisim-guardtest-{os.getpid()}")

TESTS = """\
import os
from pathlib import Path

import pytest


def test_skips():
    pytest.skip("needs a package CI installs")


@pytest.mark.gpu
def test_gpu_only():
    pytest.skip("no NVIDIA GPU")


def test_leaks_a_segment():
    if os.environ.get("LEAK_SEGMENT"):
        Path(os.environ["LEAK_SEGMENT"]).write_bytes(b"")


def test_starts_a_process_of_another_session():
    if os.environ.get("FOREIGN_PID_FILE"):  # a "worker" mapping a segment, without this session's mark
        import subprocess
        import sys

        env = {k: v for k, v in os.environ.items() if k != "UNISIM_GUARD_SESSION"}
        argv = [sys.executable, "-c", FOREIGN, os.environ["FOREIGN_SEGMENT"], "unisim_core.plugin.worker"]
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True, start_new_session=True)
        assert proc.stdout.readline().strip() == "up"
        Path(os.environ["FOREIGN_PID_FILE"]).write_text(str(proc.pid))


FOREIGN = ("import sys, time; from multiprocessing.shared_memory import SharedMemory; "
           "shm = SharedMemory(sys.argv[1], create=True, size=8); print('up', flush=True); time.sleep(120)")
"""


def _pytest(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\ntestpaths = ['.']\n")
    (tmp_path / "test_guarded.py").write_text(textwrap.dedent(TESTS))
    base = {k: v for k, v in os.environ.items()
            if k not in ("CI", "UNISIM_ALLOW_SKIPS", "UNISIM_ALLOW_SKIPS_NAMING", "PYTEST_ADDOPTS")
            and not k.startswith("PYTEST_XDIST")}
    cmd = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-p", "no:quadrants"]
    return subprocess.run(cmd, cwd=tmp_path, env={**base, **env}, capture_output=True, text=True, timeout=120)


# Outcomes are read from the summary line: a UniSim session running beside this one on the machine
# may leave its segments in the window (the guard compares /dev/shm before and after the session).

def test_a_segment_outliving_the_session_fails_it_and_skips_stay_skips_outside_ci(tmp_path):
    try:
        proc = _pytest(tmp_path, LEAK_SEGMENT=str(SEGMENT))
        assert proc.returncode == 1 and "2 passed, 2 skipped" in proc.stdout, proc.stdout
        leak = next(line for line in proc.stdout.splitlines() if "LEAK: shared-memory segments" in line)
        assert repr(SEGMENT.name) in leak and "outlived the test session" in leak
        SEGMENT.unlink()
        off = _pytest(tmp_path, CI="1", PYTEST_ADDOPTS="-p no:unisim_guards", LEAK_SEGMENT=str(SEGMENT))
        assert "LEAK" not in off.stdout and "2 passed, 2 skipped" in off.stdout  # -p no:unisim_guards: all off
    finally:
        SEGMENT.unlink(missing_ok=True)


def test_the_workers_and_mapped_segments_of_another_session_are_not_leaks(tmp_path):
    pid_file, segment = tmp_path / "foreign.pid", SEGMENT.with_name(SEGMENT.name + "-foreign")
    try:
        proc = _pytest(tmp_path, FOREIGN_PID_FILE=str(pid_file), FOREIGN_SEGMENT=segment.name)
        assert segment.exists() and pid_file.exists(), proc.stdout  # alive through the session's end
        assert "2 passed, 2 skipped" in proc.stdout and segment.name not in proc.stdout, proc.stdout
        assert pid_file.read_text() not in proc.stdout
    finally:
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
        segment.unlink(missing_ok=True)


def test_in_ci_a_skip_fails_except_a_gpu_check(tmp_path):
    out = _pytest(tmp_path, CI="1").stdout
    assert "skipped in CI: Skipped: needs a package CI installs" in out
    assert "1 failed, 2 passed, 1 skipped" in out  # the gpu-marked skip stays a skip


def test_the_ci_rule_is_lifted_by_name_or_wholly(tmp_path):
    assert "2 passed, 2 skipped" in _pytest(tmp_path, CI="1", UNISIM_ALLOW_SKIPS_NAMING="CI installs").stdout
    assert "2 passed, 2 skipped" in _pytest(tmp_path, CI="1", UNISIM_ALLOW_SKIPS="a partial environment").stdout
