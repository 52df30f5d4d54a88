"""docs/tasks.md: every ```python block runs, top to bottom in one namespace (few envs and steps)."""

from __future__ import annotations

import re
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "tasks.md"


def test_every_snippet_of_the_guide_runs():
    blocks = re.findall(r"^```python\n(.*?)^```", GUIDE.read_text(), flags=re.S | re.M)
    assert len(blocks) >= 8
    namespace: dict = {"__name__": "tasks_guide"}
    for i, code in enumerate(blocks):
        exec(compile(code, f"{GUIDE}:block{i}", "exec"), namespace)  # noqa: S102 - the guide's own code
