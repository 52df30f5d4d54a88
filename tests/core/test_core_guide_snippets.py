"""docs/user-guide.md's snippets for randomization, terrain and height scans, and site Jacobians run
as written (on MuJoCo, the backend they name)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "user-guide.md"
SECTIONS = ("Domain randomization", "Terrain and height scans", "Site Jacobians")


def _snippet(section: str) -> str:
    text = GUIDE.read_text()
    body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", body, re.S).group(1)


@pytest.mark.parametrize("section", SECTIONS)
def test_snippet_runs(section, capsys):
    pytest.importorskip("unisim_mujoco", reason="the snippets name the mujoco backend")
    exec(compile(_snippet(section), f"user-guide.md: {section}", "exec"), {})
    assert capsys.readouterr().out  # each prints what it computed
