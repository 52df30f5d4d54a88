"""Scenes shipped with unisim-core (MJCF text; no engine needed to read them)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["scene_path", "SCENES_DIR"]

SCENES_DIR = Path(__file__).resolve().parent


def scene_path(name: str) -> Path:
    """Path of a shipped scene: ``"quadruped"`` or ``"quadruped_hfield"``.

    Returns a :class:`pathlib.Path`, like ``unisim_conformance.scene_path`` (``SceneCfg`` accepts
    either a ``Path`` or a ``str``). Unknown names raise ``FileNotFoundError`` listing the shipped ones.
    """
    path = SCENES_DIR / f"{name}.xml"
    if not path.is_file():
        known = sorted(p.stem for p in SCENES_DIR.glob("*.xml"))
        raise FileNotFoundError(f"no shipped scene {name!r}; shipped scenes: {known}")
    return path
