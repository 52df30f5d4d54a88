"""Scenes: those shipped with unisim-contract (MJCF text; no engine needed to read them), and what a
``--scene`` argument names (a file, a shipped scene or a conformance-kit / plugin scene).

``scenes.mjcf_file`` reads and patches an MJCF scene file (timestep, keyframes, ``<option>``).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["scene_path", "resolve_scene", "SCENES_DIR"]

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


def resolve_scene(scene: str) -> tuple[str, str]:
    """``(path, name)`` of a scene given as a path, a shipped scene name (``quadruped``)
    or a conformance-kit scene name (``pendulum``; needs ``unisim-conformance``)."""
    p = Path(scene).expanduser()
    if p.suffix == ".xml" or os.sep in scene or p.is_file():
        if not p.is_file():
            raise FileNotFoundError(f"--scene: no such file {scene!r}")
        return str(p.resolve()), p.stem
    if (SCENES_DIR / f"{scene}.xml").is_file():
        return str(scene_path(scene)), scene
    known = sorted(x.stem for x in SCENES_DIR.glob("*.xml"))
    from unisim_core.contract.registry import conformance_scenes

    contributed = conformance_scenes()  # the kit's scenes and those plugins contribute (hook)
    if scene in contributed:
        return str(Path(contributed[scene]).resolve()), scene
    hint = (f"conformance-kit and plugin scenes: {sorted(contributed)}" if contributed else
            "conformance-kit scenes (pendulum, double_pendulum, free_body, ...) need `pip install unisim-conformance`")
    raise FileNotFoundError(f"--scene: {scene!r} is neither a file nor a shipped scene {known}; {hint}")
