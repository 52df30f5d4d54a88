"""Paths shared by the unisim-newton tests."""

from pathlib import Path

QUADRUPED = Path(__file__).resolve().parents[3] / "unisim_core" / "scenes" / "quadruped.xml"
