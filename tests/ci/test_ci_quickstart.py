"""``.ci/run`` runs the README's Quick start as written: its parser (``.ci/quickstart.py``) finds exactly
the two fenced commands under ``## Quick start``, and the script takes them from there, not from a copy."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / ".ci" / "quickstart.py"


@pytest.fixture(scope="module")
def quickstart():
    spec = importlib.util.spec_from_file_location("ci_quickstart", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _readme(*blocks: str, heading: str = "## Quick start") -> str:
    fenced = "\n\n".join(f"```bash\n{b}\n```" for b in blocks)
    later = "## Next\n\n```bash\nnot this\n```\n"
    return f"# P\n\nintro\n\n{heading}\n\nOn a fresh machine:\n\n{fenced}\n\nprose\n\n{later}"


def test_the_readme_holds_the_two_commands(quickstart):
    setup, tests = quickstart.quick_start_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    assert setup.startswith("python3 -m venv .venv && .venv/bin/pip install -r requirements-dev.txt")
    assert "unisim run" in setup
    assert tests.startswith(".venv/bin/python -m pytest")


def test_the_section_ends_at_the_next_heading(quickstart):
    assert quickstart.quick_start_commands(_readme("a", "b")) == ["a", "b"]


@pytest.mark.parametrize("blocks, message", [(("a",), "found 1"), (("a", "b", "c"), "found 3"),
                                             (("a", "b\nc"), "one command on one line")])
def test_anything_but_two_one_line_commands_is_refused(quickstart, blocks, message):
    with pytest.raises(quickstart.QuickStartError, match=message):
        quickstart.quick_start_commands(_readme(*blocks))


def test_a_readme_without_the_section_is_refused(quickstart):
    with pytest.raises(quickstart.QuickStartError, match="no '## Quick start' section"):
        quickstart.quick_start_commands(_readme("a", "b", heading="## Quickstart"))


def test_the_command_line_prints_each_command(quickstart):
    out = [subprocess.run([sys.executable, str(SCRIPT), n], capture_output=True, text=True, check=True).stdout.strip()
           for n in ("1", "2")]
    assert out == quickstart.quick_start_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    bad = subprocess.run([sys.executable, str(SCRIPT), "3"], capture_output=True, text=True)
    assert bad.returncode == 2 and "usage" in bad.stderr


def test_ci_runs_the_commands_it_reads_not_a_copy(quickstart):
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "quickstart.py 1" in run and "quickstart.py 2" in run
    lines = {line.strip() for line in run.splitlines()}
    for command in quickstart.quick_start_commands((ROOT / "README.md").read_text(encoding="utf-8")):
        assert command not in lines
