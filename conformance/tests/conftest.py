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


@pytest.fixture
def assert_fails_check(run_kit):
    """``assert_fails_check("module:Class", layer, check)``: the kit run on that broken backend, with
    only ``check`` selected (``layer::name[param]``), fails exactly where it should."""

    def check_fails(backend: str, layer: str, check: str) -> None:
        name, _, param = check.split("::")[1].partition("[")
        select = f"test_{name}" + (f" and {param.rstrip(']')}" if param else "")
        r = run_kit(f"--unisim-backend={backend}", "-m", layer, "-k", select)
        assert r.rc == 1, r.out[-3000:]
        failed = r.failed()
        assert check in failed, f"{backend}: expected {check} to fail; failed: {sorted(failed)}\n{r.out[-3000:]}"

    return check_fails
