"""Loading an MJCF file into an ``mjModel`` and describing it as a ``ModelInfo``."""

from __future__ import annotations

import mujoco
import numpy as np

from unisim_core.contract.errors import EngineError, InvalidInputError
from unisim_core.contract.model import ModelInfo

from ._options import INTEGRATORS, MujocoOptions

__all__ = ["load_model", "build_model_info", "GEOM_TYPES", "JOINT_TYPES"]

JOINT_TYPES = {int(mujoco.mjtJoint.mjJNT_FREE): "free", int(mujoco.mjtJoint.mjJNT_BALL): "ball",
               int(mujoco.mjtJoint.mjJNT_SLIDE): "slide", int(mujoco.mjtJoint.mjJNT_HINGE): "hinge"}
GEOM_TYPES = {int(t): n[len("mjGEOM_"):].lower() for n, t in mujoco.mjtGeom.__members__.items()
              if n.startswith("mjGEOM_") and int(t) < int(mujoco.mjtGeom.mjNGEOMTYPES)}

#: Frame sensors added per body by ``add_body_sensors``: (suffix, sensor type).
_BODY_SENSORS = (("pos", mujoco.mjtSensor.mjSENS_FRAMEPOS), ("quat", mujoco.mjtSensor.mjSENS_FRAMEQUAT),
                 ("linvel", mujoco.mjtSensor.mjSENS_FRAMELINVEL),
                 ("angvel", mujoco.mjtSensor.mjSENS_FRAMEANGVEL))


def load_model(path: str, sim_dt: float, options: MujocoOptions) -> mujoco.MjModel:
    """Compile ``path`` and apply the options (time step, integrator, iterations)."""
    try:
        if options.add_body_sensors:
            spec = mujoco.MjSpec.from_file(path)
            existing = {s.name for s in spec.sensors}
            for body in spec.bodies:
                if body is spec.worldbody or not body.name:
                    continue
                for suffix, stype in _BODY_SENSORS:
                    name = f"{body.name}_{suffix}"
                    if name in existing:
                        raise InvalidInputError(
                            f"add_body_sensors: the model already has a sensor named {name!r}")
                    # xbody: the body frame (origin), not the inertial frame
                    spec.add_sensor(name=name, type=stype, objtype=mujoco.mjtObj.mjOBJ_XBODY, objname=body.name)
            model = spec.compile()
        else:
            model = mujoco.MjModel.from_xml_path(path)
    except (ValueError, mujoco.FatalError) as exc:
        if isinstance(exc, InvalidInputError):
            raise
        raise EngineError(f"MuJoCo could not load {path!r}: {exc}") from exc
    model.opt.timestep = sim_dt
    if options.integrator is not None:
        model.opt.integrator = getattr(mujoco.mjtIntegrator, INTEGRATORS[options.integrator])
    if options.iterations is not None:
        model.opt.iterations = options.iterations
    if options.ls_iterations is not None:
        model.opt.ls_iterations = options.ls_iterations
    if options.noslip_iterations is not None:
        model.opt.noslip_iterations = options.noslip_iterations
    return model


def _names(m: mujoco.MjModel, obj: mujoco.mjtObj, count: int) -> list[str]:
    return [mujoco.mj_id2name(m, obj, i) or "" for i in range(count)]


def actuator_gains(m: mujoco.MjModel, biasprm: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(kp, kd)`` of affine-bias actuators (position/velocity); 0 for the others."""
    biasprm = m.actuator_biasprm if biasprm is None else biasprm
    affine = m.actuator_biastype == int(mujoco.mjtBias.mjBIAS_AFFINE)
    kp = np.where(affine, -biasprm[..., 1], 0.0)
    kd = np.where(affine, -biasprm[..., 2], 0.0)
    return kp, kd


def build_model_info(m: mujoco.MjModel) -> ModelInfo:
    """Engine-neutral tables of ``m`` (cold path)."""
    limited = m.jnt_limited.astype(bool)
    jrange = np.where(limited[:, None], m.jnt_range, np.array([-np.inf, np.inf]))
    ctrl_limited = m.actuator_ctrllimited.astype(bool)
    crange = np.where(ctrl_limited[:, None], m.actuator_ctrlrange, np.array([-np.inf, np.inf]))
    act_joint = np.where(m.actuator_trntype == int(mujoco.mjtTrn.mjTRN_JOINT), m.actuator_trnid[:, 0], -1)
    kp, kd = actuator_gains(m)
    keyframes = {}
    for k in range(m.nkey):
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_KEY, k)
        if name:
            keyframes[name] = m.key_qpos[k]
    return ModelInfo(
        nq=m.nq, nv=m.nv,
        body_names=_names(m, mujoco.mjtObj.mjOBJ_BODY, m.nbody),
        body_parent=m.body_parentid, body_mass=m.body_mass, body_ipos=m.body_ipos, body_inertia=m.body_inertia,
        joint_names=_names(m, mujoco.mjtObj.mjOBJ_JOINT, m.njnt),
        joint_types=[JOINT_TYPES[int(t)] for t in m.jnt_type],
        joint_body=m.jnt_bodyid, joint_qposadr=m.jnt_qposadr, joint_dofadr=m.jnt_dofadr, joint_range=jrange,
        dof_damping=m.dof_damping, dof_armature=m.dof_armature, dof_frictionloss=m.dof_frictionloss,
        actuator_names=_names(m, mujoco.mjtObj.mjOBJ_ACTUATOR, m.nu),
        actuator_joint=act_joint, actuator_ctrl_range=crange, actuator_kp=kp, actuator_kd=kd,
        sensor_names=_names(m, mujoco.mjtObj.mjOBJ_SENSOR, m.nsensor), sensor_dims=m.sensor_dim,
        site_names=_names(m, mujoco.mjtObj.mjOBJ_SITE, m.nsite), site_body=m.site_bodyid, site_pos=m.site_pos,
        joint_pos=m.jnt_pos, joint_axis=m.jnt_axis,
        geom_names=_names(m, mujoco.mjtObj.mjOBJ_GEOM, m.ngeom),
        geom_types=[GEOM_TYPES[int(t)] for t in m.geom_type], geom_body=m.geom_bodyid,
        geom_size=m.geom_size, geom_friction=m.geom_friction, geom_solref=m.geom_solref,
        geom_solimp=m.geom_solimp, geom_contype=m.geom_contype, geom_conaffinity=m.geom_conaffinity,
        gravity=m.opt.gravity, qpos0=m.qpos0, keyframes=keyframes,
        mocap_body_names=[mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) or ""
                          for b in np.argsort(np.where(m.body_mocapid >= 0, m.body_mocapid, 1 << 30))
                          if m.body_mocapid[b] >= 0],
    )
