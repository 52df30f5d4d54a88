"""Build the engine-neutral ``ModelInfo`` and the MuJoCo<->MotrixSim state layout.

Derived from MotrixSim's model API only (no MuJoCo import):

- bodies: MuJoCo body ``b`` is MotrixSim link ``b - 1`` (body 0 is the world);
- joints: free joints are MotrixSim *floating bases*, the others ``SceneModel.joints``;
  MuJoCo orders joints by body (depth-first) then declaration, so they are sorted by
  ``(link index, dof_pos index)``;
- qpos/qvel: MotrixSim stores quaternions xyzw; the gather/scatter permutations below
  convert a whole ``dof_pos`` row to MuJoCo's qpos (wxyz) and back in one fancy index.
"""

from __future__ import annotations

import attrs
import numpy as np

from unisim_core.contract.model import ModelInfo
from unisim_core.plugin.mjcf_features import normalize_key_quats

from ._engine_mjcf import TEMP_PREFIX
from ._mjcf import MjcfFacts

__all__ = ["Layout", "build_layout", "build_model_info", "principal_inertias", "GEOM_TYPES", "link_name"]

GEOM_TYPES = {
    "GeomPlane": "plane", "GeomInfinitePlane": "plane", "GeomHField": "hfield", "GeomSphere": "sphere",
    "GeomCapsule": "capsule", "GeomCuboid": "box", "GeomCylinder": "cylinder", "GeomEllipsoid": "ellipsoid",
    "GeomMesh": "mesh", "GeomSDF": "sdf",
}
# MotrixSim low-level joint type codes (SceneModel.low.joint_types)
_LOW_TYPES = {0: "hinge", 1: "slide", 2: "ball", 3: "free"}


def link_name(link) -> str:
    """A link's (or geom's) MJCF name (``""`` for an unnamed one, named only in the copy MotrixSim loads)."""
    name = link.name or ""
    return "" if name.startswith(TEMP_PREFIX) else name


@attrs.frozen
class JointRec:
    name: str
    type: str
    link: int  #: MotrixSim link index
    pos_idx: tuple[int, ...]  #: MotrixSim dof_pos columns
    vel_idx: tuple[int, ...]  #: MotrixSim dof_vel columns
    obj: object  #: motrixsim Joint or FloatingBase


@attrs.frozen
class Layout:
    joints: tuple[JointRec, ...]  #: MuJoCo joint order
    qpos_gather: np.ndarray  #: qpos_mj = dof_pos[:, qpos_gather]
    qpos_scatter: np.ndarray  #: dof_pos = qpos_mj[:, qpos_scatter]
    qvel_gather: np.ndarray
    qvel_scatter: np.ndarray
    qposadr: np.ndarray
    dofadr: np.ndarray

    @property
    def identity_qvel(self) -> bool:
        return bool(np.array_equal(self.qvel_gather, np.arange(len(self.qvel_gather))))

    def to_mj_qpos(self, dof_pos: np.ndarray) -> np.ndarray:
        return dof_pos[..., self.qpos_gather]


def _low_type_by_dof(M) -> dict[int, int]:
    try:
        types = list(M.low.joint_types)
        idx = list(M.low.joint_dof_pos_indices)
    except Exception:  # noqa: BLE001 - low-level API absent: fall back to hinge
        return {}
    return {int(p): int(t) for t, p in zip(types, idx) if int(t) in (0, 1)}


def build_layout(M) -> Layout:
    recs: list[JointRec] = []
    for body in M.bodies:
        fb = body.floatingbase
        if fb is not None:
            recs.append(JointRec(fb.name or "", "free", int(body.base_link.index),
                                 tuple(int(i) for i in fb.dof_pos_indices),
                                 tuple(int(i) for i in fb.dof_vel_indices), fb))
    low = _low_type_by_dof(M)
    for j in M.joints:
        npos, nvel = int(j.num_dof_pos), int(j.num_dof_vel)
        p0, v0 = int(j.dof_pos_index), int(j.dof_vel_index)
        if npos == 4:
            jtype = "ball"
        elif npos == 1:
            jtype = _LOW_TYPES.get(low.get(p0, 0), "hinge")
        else:
            raise ValueError(f"joint {j.name!r}: unsupported joint with {npos} position coordinates")
        recs.append(JointRec(j.name or "", jtype, int(j.link_index), tuple(range(p0, p0 + npos)),
                             tuple(range(v0, v0 + nvel)), j))
    recs.sort(key=lambda r: (r.link, r.pos_idx[0]))
    qg, vg, qadr, vadr = [], [], [], []
    for r in recs:
        qadr.append(len(qg))
        vadr.append(len(vg))
        p = list(r.pos_idx)
        if r.type == "free":
            qg += p[:3] + [p[6], p[3], p[4], p[5]]
        elif r.type == "ball":
            qg += [p[3], p[0], p[1], p[2]]
        else:
            qg += p
        vg += list(r.vel_idx)
    qg_a, vg_a = np.array(qg, np.int64), np.array(vg, np.int64)
    if len(qg_a) != M.num_dof_pos or len(vg_a) != M.num_dof_vel:
        raise ValueError(f"layout: joints cover {len(qg_a)}/{M.num_dof_pos} position and "
                         f"{len(vg_a)}/{M.num_dof_vel} velocity coordinates")
    return Layout(tuple(recs), qg_a, np.argsort(qg_a), vg_a, np.argsort(vg_a),
                  np.array(qadr, np.int64), np.array(vadr, np.int64))


def _principal(I6: np.ndarray) -> np.ndarray:
    """Principal moments of ``[Ixx, Iyy, Izz, Ixy, Ixz, Iyz]`` (diagonal order kept when diagonal)."""
    I6 = np.asarray(I6, np.float64)
    if np.allclose(I6[3:], 0.0, atol=1e-12 * max(1.0, float(np.abs(I6[:3]).max()))):
        return I6[:3].copy()
    full = np.array([[I6[0], I6[3], I6[4]], [I6[3], I6[1], I6[5]], [I6[4], I6[5], I6[2]]])
    return np.sort(np.linalg.eigvalsh(full))[::-1].copy()


def principal_inertias(M, D1=None) -> list[np.ndarray | None]:
    """Principal moments of every link's nominal inertia (``None``: a link fixed to the world,
    which has no dynamic inertia)."""
    import motrixsim

    D1 = motrixsim.SceneData(M) if D1 is None else D1
    out: list[np.ndarray | None] = []
    for ln in M.links:
        try:
            out.append(_principal(np.asarray(ln.get_inertia_override(D1)).reshape(6)))
        except Exception:  # noqa: BLE001 - links fixed to the world have no dynamic inertia
            out.append(None)
    return out


def actuator_gains(a, data) -> tuple[float, float]:
    """``(kp, kd)`` of an actuator; ``data`` (a ``SceneData``) holds a velocity actuator's kv."""
    kind = type(a).__name__
    if kind == "PositionActuator":
        return float(a.kp), float(a.kd)
    if kind == "VelocityActuator":
        return 0.0, float(np.asarray(a.get_kv_override(data)).reshape(-1)[0])
    return 0.0, 0.0


def build_model_info(M, layout: Layout, facts: MjcfFacts, sensor_dims: dict[str, int],
                     body_sensors: list[tuple[str, int]], site_actuators=None, D1=None) -> ModelInfo:
    """The contract's model tables from the engine's model (and the backend's site actuators, which
    MotrixSim drops, at their MuJoCo positions: no joint, no gains)."""
    import motrixsim

    D1 = motrixsim.SceneData(M) if D1 is None else D1
    links = list(M.links)
    body_names = ["world"] + [link_name(ln) for ln in links]
    parent = [0] + [(ln.parent.index + 1) if ln.parent is not None else 0 for ln in links]
    mass = [0.0] + [float(ln.mass) for ln in links]
    ipos = [np.zeros(3)] + [np.asarray(ln.center_of_mass, np.float64) for ln in links]
    inertia = [np.zeros(3)] + [np.zeros(3) if p is None else p for p in principal_inertias(M, D1)]
    jn = [r.name for r in layout.joints]
    jt = [r.type for r in layout.joints]
    jbody = [r.link + 1 for r in layout.joints]
    jrange, damping, armature, frictionloss = [], np.zeros(layout.qvel_gather.size), \
        np.zeros(layout.qvel_gather.size), np.zeros(layout.qvel_gather.size)
    dof_damp_mx = np.asarray(M.low.dof_force_dampings, np.float64)
    damping[:] = dof_damp_mx[layout.qvel_gather]
    for r, vadr in zip(layout.joints, layout.dofadr):
        if r.type in ("hinge", "slide"):
            rng = np.asarray(r.obj.range, np.float64).reshape(-1)
            jrange.append(rng[:2] if rng.size >= 2 and rng[0] < rng[1] else [-np.inf, np.inf])
            armature[vadr] = float(r.obj.armature)
            frictionloss[vadr] = float(r.obj.frictionloss)
        else:
            jrange.append([-np.inf, np.inf])
    jindex = {n: i for i, n in enumerate(jn) if n}
    acts = list(M.actuators)
    a_names, a_joint, a_range, kp, kd = [], [], [], [], []
    for a in acts:
        a_names.append(a.name or "")
        a_joint.append(jindex.get(a.target_name, -1) if str(a.target_type) == "joint" else -1)
        cr = a.ctrl_range
        a_range.append([-np.inf, np.inf] if cr is None else [float(cr[0]), float(cr[1])])
        g = actuator_gains(a, D1)
        kp.append(g[0])
        kd.append(g[1])
    if site_actuators is not None and len(site_actuators):
        nu = len(acts) + len(site_actuators)
        order = np.empty(nu, np.int64)
        order[site_actuators.engine_columns] = np.arange(len(acts))
        order[site_actuators.columns] = len(acts) + np.arange(len(site_actuators))
        a_names += site_actuators.names
        a_joint += [-1] * len(site_actuators)
        a_range += site_actuators.ctrl_range.tolist()
        kp += [0.0] * len(site_actuators)
        kd += [0.0] * len(site_actuators)
        a_names, a_joint, a_range, kp, kd = ([x[i] for i in order] for x in (a_names, a_joint, a_range, kp, kd))
    sens_names = [s.name for s in facts.sensors if s.name] + [n for n, _ in body_sensors]
    sens_dims = [sensor_dims[s.name] for s in facts.sensors if s.name] + [d for _, d in body_sensors]
    sites = list(M.sites)
    site_body = [(s.parent_link.index + 1) if s.parent_link is not None else 0 for s in sites]
    geoms = list(M.geoms)
    gtypes = [GEOM_TYPES.get(type(g).__name__, type(g).__name__.lower()) for g in geoms]
    gsize = []
    for g, t in zip(geoms, gtypes):
        size = np.asarray(g.size, np.float64).reshape(3)
        if t == "hfield":
            hf = facts.hfield_sizes.get(getattr(g.hfield, "name", ""), None)
            if hf is not None:
                size = np.array(hf[:3])
        gsize.append(size)
    ngeom = len(geoms)
    qpos0 = layout.to_mj_qpos(np.asarray(M.compute_init_dof_pos(), np.float64))
    keyframes = {}
    for k in M.keyframes:  # as MuJoCo compiles them: qpos0 where the key gives no qpos, unit quaternions
        if not k.name:  # an unnamed key (name None): left out, as MuJoCo's keyframe tables do
            continue
        dof_pos = np.asarray(k.dof_pos, np.float64)
        q = layout.to_mj_qpos(dof_pos) if dof_pos.size else qpos0
        keyframes[k.name] = normalize_key_quats(q, jt, layout.qposadr)
    mocap = [link_name(b.base_link) for b in M.bodies if b.is_mocap]
    return ModelInfo(
        nq=int(M.num_dof_pos), nv=int(M.num_dof_vel),
        body_names=body_names, body_parent=parent, body_mass=mass, body_ipos=ipos, body_inertia=inertia,
        joint_names=jn, joint_types=jt, joint_body=jbody, joint_qposadr=layout.qposadr,
        joint_dofadr=layout.dofadr, joint_range=np.array(jrange, np.float64).reshape(-1, 2),
        dof_damping=damping, dof_armature=armature, dof_frictionloss=frictionloss,
        actuator_names=a_names, actuator_joint=a_joint,
        actuator_ctrl_range=np.array(a_range, np.float64).reshape(-1, 2), actuator_kp=kp, actuator_kd=kd,
        sensor_names=sens_names, sensor_dims=sens_dims,
        site_names=[s.name or "" for s in sites], site_body=site_body,
        geom_names=[link_name(g) for g in geoms], geom_types=gtypes,
        geom_body=[(g.link.index + 1) if g.link is not None else 0 for g in geoms],
        geom_size=np.array(gsize).reshape(-1, 3),
        geom_friction=np.array([np.asarray(g.friction, np.float64) for g in geoms]).reshape(-1, 3),
        # MotrixSim has no soft-constraint solref/solimp: not modelled, reported as NaN.
        geom_solref=np.full((ngeom, 2), np.nan), geom_solimp=np.full((ngeom, 5), np.nan),
        geom_contype=[int(g.collision_group) for g in geoms],
        geom_conaffinity=[int(g.collision_affinity) for g in geoms],
        gravity=np.asarray(M.options.gravity, np.float64),
        qpos0=qpos0,
        keyframes=keyframes, mocap_body_names=mocap,
    )
