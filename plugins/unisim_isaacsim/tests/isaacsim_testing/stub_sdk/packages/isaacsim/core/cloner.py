"""STUB ``isaacsim.core.cloner.GridCloner``: the calls and keywords Isaac Lab 2.3.2's
``isaaclab/scene/interactive_scene.py`` makes (``GridCloner(spacing=...)``, ``define_base_env``,
``generate_paths``, ``clone(source_prim_path=, prim_paths=, replicate_physics=, copy_from_source=,
enable_env_ids=)`` returning the env origins, ``filter_collisions(scene, "/World/collisions",
paths)``); the source must exist and the physics scene must be a ``UsdPhysics.Scene``. Clones are
copies of the source prim's specs on a square grid centred on the origin (Isaac Sim's own cloner
source was not available to read).
"""

from __future__ import annotations

import math

import numpy as np
import omni.usd
from pxr import Gf, Sdf, UsdGeom, UsdPhysics


class GridCloner:
    def __init__(self, spacing: float) -> None:
        self.spacing = float(spacing)

    def define_base_env(self, base_env_path: str) -> None:
        UsdGeom.Scope.Define(omni.usd.get_context().get_stage(), base_env_path)

    def generate_paths(self, root_path: str, num_paths: int) -> list[str]:
        return [f"{root_path}_{i}" for i in range(num_paths)]

    def clone(self, source_prim_path: str, prim_paths: list[str], replicate_physics: bool = False,
              copy_from_source: bool = False, enable_env_ids: bool = False) -> np.ndarray:
        stage = omni.usd.get_context().get_stage()
        if not stage.GetPrimAtPath(source_prim_path):
            raise RuntimeError(f"GridCloner.clone: source prim {source_prim_path!r} does not exist")
        n = len(prim_paths)
        side = math.ceil(math.sqrt(n))
        pos = np.zeros((n, 3))
        for i in range(n):
            pos[i, 0] = (i // side - (side - 1) / 2) * self.spacing
            pos[i, 1] = (i % side - (side - 1) / 2) * self.spacing
        layer = stage.GetRootLayer()
        for i, path in enumerate(prim_paths):
            if path != source_prim_path:
                Sdf.CopySpec(layer, source_prim_path, layer, path)
            xf = UsdGeom.Xformable(stage.GetPrimAtPath(path))
            xf.ClearXformOpOrder()
            xf.AddTranslateOp().Set(Gf.Vec3d(*pos[i]))
        self.replicated = replicate_physics
        return pos

    def filter_collisions(self, physicsscene_path: str, collision_root_path: str, prim_paths: list[str],
                          global_paths: list[str] | None = None) -> None:
        stage = omni.usd.get_context().get_stage()
        if not stage.GetPrimAtPath(physicsscene_path).IsA(UsdPhysics.Scene):
            raise RuntimeError(f"filter_collisions: no physics scene at {physicsscene_path!r}")
        for i, _ in enumerate(prim_paths):
            UsdPhysics.CollisionGroup.Define(stage, f"{collision_root_path}/group{i}")
