"""UniSim conformance kit: portable scenes plus layered pytest checks for any ``SimBackend``.

Run it with ``pytest --pyargs unisim_conformance --unisim-backend=NAME``. The checks live in
``unisim_conformance.checks`` and are collected only when the kit is activated (see ``plugin``).

This module is the scene registry: the kit's own scenes (``scenes/*.xml``), the quadruped
shipped with ``unisim_core``, scenes registered with :func:`register_scene`, and scenes
contributed by plugins through the ``unisim_conformance_scenes()`` hook of ``unisim_core.contract.hooks``.
"""

from __future__ import annotations

import os
from pathlib import Path

__version__ = "0.1.0"
__all__ = ["SCENES_DIR", "scene_path", "scene_cfg", "list_scenes", "register_scene", "contributed_scenes"]

SCENES_DIR = Path(__file__).parent / "scenes"

#: Built-in scenes: name -> (path, sim_dt the scene is written for, s).
_BUILTIN: dict[str, tuple[Path, float]] = {
    "pendulum": (SCENES_DIR / "pendulum.xml", 0.001),
    "double_pendulum": (SCENES_DIR / "double_pendulum.xml", 0.001),
    "free_body": (SCENES_DIR / "free_body.xml", 0.002),
    "box_on_plane": (SCENES_DIR / "box_on_plane.xml", 0.002),
    "box_stack": (SCENES_DIR / "box_stack.xml", 0.002),
    "box_grid": (SCENES_DIR / "box_grid.xml", 0.002),
    "fixed_arm": (SCENES_DIR / "fixed_arm.xml", 0.002),
    "hfield_terrain": (SCENES_DIR / "hfield_terrain.xml", 0.002),
    "actuated_hinges": (SCENES_DIR / "actuated_hinges.xml", 0.001),
    "frictionloss_hinge": (SCENES_DIR / "frictionloss_hinge.xml", 0.001),
    "sensor_probe": (SCENES_DIR / "sensor_probe.xml", 0.002),
}
#: Scenes with joints between bodies (a backend must load at least one of them to pass the kit).
ARTICULATED = ("pendulum", "double_pendulum", "fixed_arm", "actuated_hinges", "frictionloss_hinge", "sensor_probe",
               "quadruped")
_REGISTERED: dict[str, tuple[Path, float]] = {}


def _core_scene(name: str) -> Path:
    import unisim_core

    return Path(unisim_core.__file__).parent / "scenes" / f"{name}.xml"


def _all() -> dict[str, tuple[Path, float]]:
    table = dict(_BUILTIN)
    table["quadruped"] = (_core_scene("quadruped"), 0.002)
    for name, path in _contributed_cached().items():
        table.setdefault(name, (Path(path), 0.002))
    table.update(_REGISTERED)
    return table


def register_scene(name: str, path: str | os.PathLike, sim_dt: float = 0.002) -> None:
    """Add an extra scene (e.g. from a backend's conftest); it joins the scene-load checks."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"register_scene: file not found for scene {name!r}: {p}")
    _REGISTERED[str(name)] = (p, float(sim_dt))


def contributed_scenes() -> dict[str, str]:
    """``{name: path}`` from every loaded backend plugin implementing the
    ``unisim_conformance_scenes()`` hook (``unisim_core.contract.hooks``), via
    ``unisim_core.contract.registry.conformance_scenes``. ``{}`` when the core has no registry;
    a plugin whose hook fails is left out (never breaks the kit).
    """
    try:
        from unisim_core.contract.registry import conformance_scenes
    except ImportError:
        return {}
    try:
        scenes = conformance_scenes()
    except Exception:  # noqa: BLE001 - a broken plugin never breaks the kit
        return {}
    return {str(k): os.fspath(v) for k, v in (scenes or {}).items() if Path(os.fspath(v)).is_file()}


_CONTRIBUTED: dict[str, str] | None = None


def _contributed_cached() -> dict[str, str]:
    global _CONTRIBUTED
    if _CONTRIBUTED is None:
        _CONTRIBUTED = contributed_scenes()
    return _CONTRIBUTED


def list_scenes() -> list[str]:
    """Names of every scene the kit knows."""
    return sorted(_all())


def scene_path(name: str) -> Path:
    """Path of a scene by name (``KeyError`` listing the known names otherwise)."""
    table = _all()
    if name not in table:
        raise KeyError(f"unknown conformance scene {name!r}; known: {sorted(table)}")
    return table[name][0]


def scene_dt(name: str) -> float:
    """The time step (s) a scene is written for."""
    return _all()[name][1]


def scene_cfg(name: str, **kwargs):
    """``unisim_core.SceneCfg`` for a named scene (``kwargs`` go to ``SceneCfg``)."""
    from unisim_core import SceneCfg

    return SceneCfg(str(scene_path(name)), **kwargs)
