"""Running the conformance kit on an engine for the integration tests (one file per engine, so the
suite's two processes share the slow kit runs)."""

from __future__ import annotations

from pathlib import Path

from unisim_conformance.runner import run_kit

__all__ = ["MOTRIX_XFAIL", "assert_green", "run_kit"]

ROOT = Path(__file__).resolve().parents[2]
MOTRIX_XFAIL = ROOT / "plugins/unisim_motrix/conformance_xfail.txt"


def assert_green(run):
    """The outcomes of a kit run that exited 0 with no failed check."""
    assert run.rc == 0, run.out[-4000:]
    assert run.failed() == set()
    return run.outcomes()
