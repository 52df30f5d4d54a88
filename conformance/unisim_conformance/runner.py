"""Run the kit in a fresh pytest process and read its JSON report (for CI and tests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

__all__ = ["KitRun", "run_kit"]


class KitRun:
    """Outcome of one kit run: ``rc``, combined output ``out`` and the parsed ``report``."""

    def __init__(self, proc: subprocess.CompletedProcess, report: dict | None):
        self.rc = proc.returncode
        self.out = proc.stdout + proc.stderr
        self.report = report or {}

    def outcomes(self) -> dict[str, str]:
        return {c["check"]: c["outcome"] for c in self.report.get("checks", [])}

    def failed(self) -> set[str]:
        return {k for k, v in self.outcomes().items() if v == "failed"}

    def reason(self, check: str) -> str:
        return next(c["reason"] for c in self.report["checks"] if c["check"] == check)

    def assert_green(self) -> dict[str, str]:
        """:meth:`outcomes` of a run that exited 0 with no failed check; else ``AssertionError`` (the output's tail)."""
        if self.rc != 0 or self.failed():
            raise AssertionError(f"kit run: exit status {self.rc}, failed {sorted(self.failed())}\n{self.out[-4000:]}")
        return self.outcomes()


def run_kit(*args: str, cwd: Path | str | None = None, pythonpath: Sequence[str] = (), pyargs: bool = True,
            report: bool = True, timeout: float = 600) -> KitRun:
    """``python -m pytest --pyargs unisim_conformance *args`` in a subprocess.

    ``pythonpath`` entries are prepended to ``PYTHONPATH`` (e.g. for test-only backends).
    """
    with tempfile.TemporaryDirectory() as tmp:
        rep = Path(tmp) / "report.json"
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        if pyargs:
            cmd += ["--pyargs", "unisim_conformance"]
        if report:
            cmd.append(f"--unisim-report={rep}")
        cmd += list(args)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([*map(str, pythonpath), env.get("PYTHONPATH", "")])
        env.pop("PYTEST_ADDOPTS", None)
        proc = subprocess.run(cmd, cwd=cwd or tmp, env=env, capture_output=True, text=True, timeout=timeout)
        data = json.loads(rep.read_text()) if rep.is_file() else None
    return KitRun(proc, data)
