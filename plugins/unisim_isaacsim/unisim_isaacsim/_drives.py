"""Isaac Lab configs carrying ``unisim_physx``'s MJCF-to-PhysX mapping (used by the worker).

The mapping itself (decided once, tested on a real PhysX through unisim-sapien) is
:func:`unisim_physx.physx_drives` and :data:`unisim_physx.MUJOCO_BODY_PROPERTIES`:

- one implicit actuator per MJCF hinge/slide joint with **stiffness 0** and damping ``joint
  damping + Σ gear² kv`` (implicit, as MuJoCo's ``implicitfast``), no effort limit, no joint
  friction coefficient, no joint velocity cap (a joint with frictionloss f: damping
  ``FRICTION_DAMPING`` limited to f, MuJoCo's dry friction; the host still refuses frictionloss
  scenes, the worker's reader does not accept them yet); the actuators' remaining force (a servo's ``kp`` term, motors,
  saturation) is an explicit effort the worker recomputes before every substep
  (:meth:`~unisim_physx.PhysxDrives.efforts`). An implicit drive stiffness would integrate
  ``kp`` implicitly: an undamped servo then loses energy that MuJoCo's keeps (measured on PhysX:
  0.027 rad off MuJoCo after 0.29 s, docs/sapien.md);
- every rigid body without PhysX's default link damping (0.05) and velocity caps, and never
  asleep (``RigidBodyPropertiesCfg``, ``ArticulationRootPropertiesCfg``), read back from the stage
  (:func:`read_body_properties`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from unisim_physx import MUJOCO_BODY_PROPERTIES, PhysxDrives, PhysxSolverConfig

__all__ = ["BODY_ATTRIBUTES", "articulation_props", "joint_actuator_cfgs", "read_body_properties",
           "rigid_body_props"]

P = MUJOCO_BODY_PROPERTIES
#: USD attribute of each rigid-body property (``PhysxSchema.PhysxRigidBodyAPI``). The angular cap is
#: authored in degrees per second; 1e10 stands for "none" in either unit.
BODY_ATTRIBUTES = {"linear_damping": "physxRigidBody:linearDamping",
                   "angular_damping": "physxRigidBody:angularDamping",
                   "max_linear_velocity": "physxRigidBody:maxLinearVelocity",
                   "max_angular_velocity": "physxRigidBody:maxAngularVelocity",
                   "sleep_threshold": "physxRigidBody:sleepThreshold"}


def joint_actuator_cfgs(implicit_actuator_cfg: Any, drives: PhysxDrives, expr: dict[str, str],
                        unlimited: float) -> dict[str, Any]:
    """``{group: ImplicitActuatorCfg}``, one per hinge/slide joint (``expr``: joint name -> regex); the
    drive's effort limit is the joint's frictionloss where it has one (``unlimited`` otherwise)."""
    limits = np.where(np.isfinite(drives.force_limit), drives.force_limit, unlimited)
    return {
        f"j{c}": implicit_actuator_cfg(
            joint_names_expr=[expr[name]], stiffness=0.0, damping=float(drives.damping[c]),
            armature=float(drives.armature[c]), effort_limit_sim=float(limits[c]), friction=P["joint_friction"],
            velocity_limit_sim=P["max_joint_velocity"])
        for c, name in enumerate(drives.joints)}


def articulation_props(sim_utils: Any, cfg: PhysxSolverConfig) -> Any:
    """The articulation root: never asleep, and the requested solver iteration counts."""
    return sim_utils.ArticulationRootPropertiesCfg(
        solver_position_iteration_count=cfg.solver_position_iteration_count,
        solver_velocity_iteration_count=cfg.solver_velocity_iteration_count, sleep_threshold=P["sleep_threshold"])


def rigid_body_props(sim_utils: Any) -> Any:
    """Every rigid body: no link damping, no velocity caps, never asleep."""
    return sim_utils.RigidBodyPropertiesCfg(**{key: P[key] for key in BODY_ATTRIBUTES})


def read_body_properties(stage: Any, path: str) -> dict[str, float]:
    """The value of each :data:`BODY_ATTRIBUTES` property on every rigid body under ``path`` (the
    articulation root), read from the stage; unauthored or non-uniform values fail closed."""
    from pxr import Usd, UsdPhysics

    root = stage.GetPrimAtPath(path)
    bodies = [p for p in Usd.PrimRange(root, Usd.TraverseInstanceProxies()) if p.HasAPI(UsdPhysics.RigidBodyAPI)]
    if not bodies:
        raise ValueError(f"no UsdPhysics.RigidBodyAPI prim under {path!r}")
    out = {}
    for key, attr_name in BODY_ATTRIBUTES.items():
        values = set()
        for prim in bodies:
            attr = prim.GetAttribute(attr_name)
            if not (attr and attr.HasAuthoredValue()):
                raise ValueError(f"{attr_name} is not authored on rigid body {prim.GetPath()}")
            values.add(float(attr.Get()))
        if len(values) != 1:
            raise ValueError(f"{attr_name} differs across the rigid bodies under {path!r}: {sorted(values)}")
        out[key] = values.pop()
    return out
