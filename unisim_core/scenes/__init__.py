"""Scenes shipped with unisim-core (MJCF text; no engine needed to read them)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["scene_path", "SCENES_DIR"]

SCENES_DIR = Path(__file__).resolve().parent


def scene_path(name: str) -> str:
    """Path of a shipped scene: ``"quadruped"`` or ``"quadruped_hfield"``."""
    path = SCENES_DIR / f"{name}.xml"
    if not path.is_file():
        known = sorted(p.stem for p in SCENES_DIR.glob("*.xml"))
        raise FileNotFoundError(f"no shipped scene {name!r}; shipped scenes: {known}")
    return str(path)
