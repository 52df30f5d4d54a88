"""Paths shared by the unisim-genesis tests."""

from __future__ import annotations

from pathlib import Path

#: The shipped quadruped (12 position actuators, IMU sensors, floor contacts, ``home`` keyframe).
QUADRUPED = Path(__file__).resolve().parents[3] / "unisim_core" / "scenes" / "quadruped.xml"

#: The kit's layers run by test_kit_on_genesis.py (test_kit_on_genesis_dynamics.py runs the others):
#: two runs of about equal length that ``-n 2 --dist loadfile`` puts on the two workers.
KIT_HALF = "reference or parity or coverage or surface or bad_input"

#: Why the Genesis tests skip where the heavy extra is not installed (the reason names the file).
HEAVY_EXTRA = ("Genesis is not installed: pip install -r requirements-heavy.txt "
               "(genesis-world and the CPU torch build)")


def require_genesis() -> None:
    """Skip the calling test module at collection unless Genesis imports (call it at module level)."""
    import pytest

    pytest.importorskip("genesis", reason=HEAVY_EXTRA)
