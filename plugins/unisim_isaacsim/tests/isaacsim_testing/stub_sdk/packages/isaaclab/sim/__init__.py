"""STUB ``isaaclab.sim``: configs, spawners and ``SimulationContext`` the worker uses.

Isaac Lab 2.3.2: ``SimulationCfg(physx=PhysxCfg)`` and ``sim.get_physics_context().prim_path``
(``isaaclab/sim/simulation_cfg.py``, ``simulation_context.py``). Isaac Lab 3.0.0:
``SimulationCfg(physics=...)``, ``cfg.physics_prim_path`` and no ``PhysxCfg`` here (it moved to
``isaaclab_physx.physics``).
"""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Any

import omni.usd
from isaacsim_testing.stub_sdk import lab_major
from pxr import UsdLux, UsdPhysics

from isaaclab._cfg import MISSING, PHYSX_FIELDS, cfg_class
from unisim_isaacsim._usd_helpers import _physx_schema

PhysxSchema = _physx_schema()  # Isaac Sim ships pxr.PhysxSchema; stock USD gets physx-usd-schemas

V2 = lab_major() == 2
_COMMON = {"dt": 1.0 / 60.0, "device": "cuda:0", "gravity": (0.0, 0.0, -9.81)}
if V2:
    PhysxCfg = cfg_class("PhysxCfg", PHYSX_FIELDS)
    SimulationCfg = cfg_class("SimulationCfg", {**_COMMON, "physx": None})
else:
    SimulationCfg = cfg_class("SimulationCfg", {**_COMMON, "physics": None, "physics_prim_path": "/physicsScene"})

ArticulationRootPropertiesCfg = cfg_class("ArticulationRootPropertiesCfg", {
    "solver_position_iteration_count": None, "solver_velocity_iteration_count": None, "sleep_threshold": None})
#: Isaac Lab 2.3.2 ``isaaclab/sim/schemas/schemas_cfg.py`` (the fields the worker sets).
RigidBodyPropertiesCfg = cfg_class("RigidBodyPropertiesCfg", {
    "linear_damping": None, "angular_damping": None, "max_linear_velocity": None, "max_angular_velocity": None,
    "sleep_threshold": None})
_RIGID = {"linear_damping": "LinearDamping", "angular_damping": "AngularDamping",
          "max_linear_velocity": "MaxLinearVelocity", "max_angular_velocity": "MaxAngularVelocity",
          "sleep_threshold": "SleepThreshold"}


def _spawn_usd(prim_path: str, cfg: Any) -> Any:
    """Isaac Lab 2.3.2 ``isaaclab/sim/spawners/from_files/from_files.py`` ``spawn_from_usd``: the file
    must exist; the articulation props go on every ArticulationRootAPI prim below (``apply_nested``)."""
    from pxr import Usd

    if not os.path.isfile(cfg.usd_path):
        raise FileNotFoundError(f"USD file not found at path: '{cfg.usd_path}'.")
    stage = omni.usd.get_context().get_stage()
    prim = stage.DefinePrim(prim_path, "Xform")
    prim.GetReferences().AddReference(cfg.usd_path)
    props = cfg.articulation_props
    if props is not None:
        for p in Usd.PrimRange(prim):
            if p.HasAPI(UsdPhysics.ArticulationRootAPI):
                api = PhysxSchema.PhysxArticulationAPI.Apply(p)
                if props.solver_position_iteration_count is not None:
                    api.CreateSolverPositionIterationCountAttr(props.solver_position_iteration_count)
                if props.solver_velocity_iteration_count is not None:
                    api.CreateSolverVelocityIterationCountAttr(props.solver_velocity_iteration_count)
                if props.sleep_threshold is not None:
                    api.CreateSleepThresholdAttr(props.sleep_threshold)
    rigid = cfg.rigid_props
    if rigid is not None:  # schemas.py modify_rigid_body_properties: every RigidBodyAPI prim below
        for p in Usd.PrimRange(prim):
            if p.HasAPI(UsdPhysics.RigidBodyAPI):
                api = PhysxSchema.PhysxRigidBodyAPI.Apply(p)
                for field, name in _RIGID.items():
                    if getattr(rigid, field) is not None:
                        getattr(api, f"Create{name}Attr")(getattr(rigid, field))
    return prim


def _spawn_dome_light(prim_path: str, cfg: Any) -> Any:
    light = UsdLux.DomeLight.Define(omni.usd.get_context().get_stage(), prim_path)
    light.CreateIntensityAttr(cfg.intensity)
    return light.GetPrim()


UsdFileCfg = cfg_class("UsdFileCfg", {"usd_path": MISSING, "articulation_props": None, "rigid_props": None,
                                      "func": _spawn_usd})
DomeLightCfg = cfg_class("DomeLightCfg", {"intensity": 1000.0, "color": (1.0, 1.0, 1.0), "func": _spawn_dome_light})


class SimulationContext:
    """STUB: one physics scene on the ``omni.usd`` stage; ``reset`` initializes the assets (their
    ``_initialize_impl``, as Isaac Lab's PLAY callback does), ``step`` advances the stub engine."""

    instance_: SimulationContext | None = None

    def __init__(self, cfg: Any) -> None:
        self.cfg = cfg
        self.device = cfg.device
        self.stage = omni.usd.get_context().get_stage()
        self.scene_path = "/physicsScene" if V2 else cfg.physics_prim_path
        physx = cfg.physx if V2 else cfg.physics
        scene = UsdPhysics.Scene.Define(self.stage, self.scene_path)
        api = PhysxSchema.PhysxSceneAPI.Apply(scene.GetPrim())  # Isaac Sim's PhysicsContext authors these
        api.CreateMinPositionIterationCountAttr(physx.min_position_iteration_count)
        api.CreateMaxPositionIterationCountAttr(physx.max_position_iteration_count)
        api.CreateMinVelocityIterationCountAttr(physx.min_velocity_iteration_count)
        api.CreateMaxVelocityIterationCountAttr(physx.max_velocity_iteration_count)
        api.CreateBounceThresholdAttr(physx.bounce_threshold_velocity)
        api.CreateGpuMaxRigidContactCountAttr(physx.gpu_max_rigid_contact_count)
        api.CreateGpuMaxRigidPatchCountAttr(physx.gpu_max_rigid_patch_count)
        api.CreateSolverTypeAttr(("PGS", "TGS")[physx.solver_type])
        self.assets: list[Any] = []
        self.sensors: list[Any] = []  # initialized by reset after the assets (isaaclab.sensors)
        self.kinematic = None  # the kinematic rigid bodies, from sim.reset() (PLAY) on
        self.time = 0.0
        self.renders = 0
        SimulationContext.instance_ = self

    if V2:
        def get_physics_context(self) -> Any:
            return SimpleNamespace(prim_path=self.scene_path)

    def reset(self) -> None:
        from isaacsim_testing.stub_sdk.engine import KinematicBodies

        self.kinematic = KinematicBodies(self.stage)
        for asset in self.assets + self.sensors:
            asset._initialize_impl()

    def forward(self) -> None:
        for asset in self.assets:
            asset._view.update_articulations_kinematic()

    def step(self, render: bool = True) -> None:
        for asset in self.assets:
            asset._view.simulate(self.cfg.dt)
        if self.kinematic is not None:
            self.kinematic.simulate()
        self.time += self.cfg.dt
        if render:
            self.render()

    def render(self) -> None:
        import omni.replicator.core as rep

        rep.RENDERS[0] += 1
