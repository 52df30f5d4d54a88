"""Helpers for the kit's own tests: run the kit in a subprocess and read its JSON report."""

from __future__ import annotations

from pathlib import Path

import pytest

from unisim_conformance import runner

HERE = Path(__file__).parent


@pytest.fixture
def run_kit(tmp_path):
    """``run_kit(*args, cwd=None)``: ``python -m pytest --pyargs unisim_conformance *args`` with
    ``conformance/tests`` on ``PYTHONPATH`` (for ``broken_backends``) and a JSON report."""

    def run(*args: str, cwd: Path | None = None, report: bool = True, pyargs: bool = True,
            env_path: Path | None = None) -> runner.KitRun:
        extra = [str(env_path)] if env_path else []
        return runner.run_kit(*args, cwd=cwd or tmp_path, pythonpath=[str(HERE), *extra],
                       pyargs=pyargs, report=report, timeout=300)

    return run
