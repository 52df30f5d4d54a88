"""Helpers for the kit's own tests: run the kit in a subprocess and read its JSON report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent


class KitRun:
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


@pytest.fixture
def run_kit(tmp_path):
    """``run_kit(*args, cwd=None)``: ``python -m pytest --pyargs unisim_conformance *args`` with
    ``conformance/tests`` on ``PYTHONPATH`` (for ``broken_backends``) and a JSON report."""

    def run(*args: str, cwd: Path | None = None, report: bool = True, pyargs: bool = True,
            env_path: Path | None = None) -> KitRun:
        rep = tmp_path / "report.json"
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        if pyargs:
            cmd += ["--pyargs", "unisim_conformance"]
        if report:
            cmd.append(f"--unisim-report={rep}")
        cmd += list(args)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(HERE)] + ([str(env_path)] if env_path else []) + [env.get("PYTHONPATH", "")])
        env.pop("PYTEST_ADDOPTS", None)
        proc = subprocess.run(cmd, cwd=cwd or tmp_path, env=env, capture_output=True, text=True, timeout=300)
        data = json.loads(rep.read_text()) if rep.is_file() else None
        return KitRun(proc, data)

    return run
