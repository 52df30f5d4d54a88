"""The README's Quick start commands, read from README.md so that CI runs exactly what a newcomer types.

``python3 .ci/quickstart.py N`` prints the N-th command (1: set up and run the main job, 2: the tests).
The Quick start is the ``## Quick start`` section of README.md; its commands are its fenced ``bash``
blocks, one command each, and there must be exactly two. Standard library only: it runs before any
virtual environment exists.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"^```bash\n(.*?)^```$", re.MULTILINE | re.DOTALL)


class QuickStartError(ValueError):
    """README.md's Quick start is not two fenced bash commands."""


def quick_start_commands(text: str) -> list[str]:
    """The commands of the ``## Quick start`` section of a README's text, in order (exactly two)."""
    match = re.search(r"^## Quick start\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    if match is None:
        raise QuickStartError("README.md has no '## Quick start' section")
    blocks = [block.strip() for block in FENCE.findall(match.group(1))]
    if len(blocks) != 2:
        raise QuickStartError(f"README.md's Quick start must hold exactly 2 fenced bash commands, found {len(blocks)}")
    for block in blocks:
        if not block or "\n" in block:
            raise QuickStartError(f"each Quick start block must be one command on one line, got {block!r}")
    return blocks


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in ("1", "2"):
        print("usage: quickstart.py 1|2", file=sys.stderr)
        return 2
    try:
        print(quick_start_commands(README.read_text(encoding="utf-8"))[int(argv[0]) - 1])
    except QuickStartError as exc:
        print(f"quickstart.py: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
