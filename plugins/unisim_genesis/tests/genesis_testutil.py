"""Paths shared by the unisim-genesis tests."""

from __future__ import annotations

from pathlib import Path

#: The shipped quadruped (12 position actuators, IMU sensors, floor contacts, ``home`` keyframe).
QUADRUPED = Path(__file__).resolve().parents[3] / "unisim_core" / "scenes" / "quadruped.xml"
