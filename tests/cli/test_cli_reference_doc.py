"""docs/cli.md documents every subcommand and every long option of the ``unisim`` parser."""

from __future__ import annotations

import argparse
from pathlib import Path

from unisim_core.tools.cli import build_parser

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_cli_reference_names_every_subcommand_and_option():
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    text = DOC.read_text()
    missing = [f"unisim {name}" for name in sub.choices if f"unisim {name}" not in text]
    missing += [f"unisim {name} {opt}" for name, parser in sub.choices.items() for action in parser._actions
                for opt in action.option_strings if opt.startswith("--") and opt != "--help" and opt not in text]
    assert not missing, f"docs/cli.md does not mention: {missing}"
