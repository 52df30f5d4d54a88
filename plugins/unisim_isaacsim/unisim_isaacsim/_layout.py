"""Pure state-layout mapping between the contract (MuJoCo layout) and Isaac Lab tensors.

numpy only (plus :mod:`unisim_core.contract.quat`), so it is unit-tested without the SDK and used by the
worker inside Isaac Sim. Conventions on the Isaac side (Isaac Lab 2.x ``ArticulationData``):

- ``root_link_pos_w`` (n, 3) world position of the root link frame; the contract's ``qpos[0:3]``
  is relative to the environment origin, so ``env_origins`` are subtracted/added here.
- ``root_link_quat_w`` (n, 4) **wxyz** in Isaac Lab 2.x (3.x switched to xyzw:
  :func:`quat_order_for`).
- ``root_link_lin_vel_w`` / ``root_link_ang_vel_w`` (n, 3): link-origin linear velocity and the
  angular velocity, both **world** frame. The contract's ``qvel[3:6]`` is **body** frame, so it is
  ``R(q)^T ω_w`` on the way out and ``R(q) ω_b`` on the way in.
- ``joint_pos`` / ``joint_vel`` (n, J) in Isaac's joint order, mapped to MuJoCo's by joint name
  as the MJCF importer writes it (:func:`mjcf_usd_name`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from unisim_core.contract import quat as Q

__all__ = [
    "StateLayout", "build_layout", "qpos_qvel_from_isaac", "isaac_from_qpos_qvel", "body_order",
    "bodies_from_isaac", "quat_order_for", "env_rows_from_prim_paths", "xyzw_to_wxyz", "orbit_eye",
    "mjcf_usd_name", "root_body_name", "isaaclab_major", "root_mount", "REFUSED_ROOTS", "init_joint_positions",
    "ACCEPTED_FEATURES",
]

#: ``mjcf_lite`` optional features the host and the worker both read (the same tables on both sides):
#: height fields (authored as static meshes, ``_terrain``), ``<position dampratio>`` (the reader
#: derives MuJoCo's kv from the mass matrix at qpos0, which the worker's PhysX drives then carry) and
#: mocap bodies (kinematic rigid bodies, ``_mocap``).
ACCEPTED_FEATURES = frozenset({"hfield", "dampratio", "mocap"})


def mjcf_usd_name(name: str) -> str:
    """The prim name Isaac Sim's MJCF importer gives an MJCF body or joint (its ``SanitizeUsdName``).

    Every byte of the UTF-8 name that is not an ASCII letter, digit or ``_`` becomes ``_``; a
    leading digit gets a ``_`` prefix; an empty name becomes ``_``. Isaac's link and joint names
    (``body_names``, ``joint_names``) are these prim names.
    """
    if not name:
        return "_"
    out = "".join(chr(b) if chr(b).isascii() and (chr(b).isalnum() or b == 0x5F) else "_" for b in name.encode())
    return "_" + out if out[0].isdigit() else out


def root_body_name(body_names: Sequence[str], body_parent: Sequence[int], mocap: Sequence[str] = ()) -> str:
    """The one MJCF body whose parent is the world, mocap bodies (``mocap``: names) aside: the
    articulation the Isaac worker drives."""
    tops = [str(body_names[b]) for b in range(1, len(body_names))
            if int(body_parent[b]) == 0 and str(body_names[b]) not in mocap]
    if len(tops) != 1:
        raise ValueError(f"the Isaac Sim backend needs exactly one top-level MJCF body (one articulation per "
                         f"environment); this model has {len(tops)}: {tops}")
    return tops[0]


def _unique_usd_names(kind: str, names: Sequence[str]) -> list[str]:
    """``mjcf_usd_name`` of each name; fail closed on an unnamed element or two names sharing a prim name."""
    unnamed = [i for i, n in enumerate(names) if not n]
    if unnamed:
        raise ValueError(f"MJCF {kind} #{unnamed[0]} has no name; the Isaac Sim backend matches {kind} by name "
                         f"(name every one)")
    out = [mjcf_usd_name(n) for n in names]
    seen: dict[str, str] = {}
    for raw, usd in zip(names, out):
        if usd in seen and seen[usd] != raw:
            raise ValueError(f"MJCF {kind} {seen[usd]!r} and {raw!r} both become the USD prim name {usd!r}; "
                             f"rename one so the Isaac Sim importer keeps them apart")
        seen[usd] = raw
    return out


def xyzw_to_wxyz(q: np.ndarray) -> np.ndarray:
    """PhysX tensor views (and Isaac Lab 3.x) store quaternions xyzw; the contract is wxyz."""
    return np.ascontiguousarray(np.asarray(q)[..., [3, 0, 1, 2]])


@dataclass(frozen=True)
class StateLayout:
    """Where each contract ``qpos``/``qvel`` column comes from on the Isaac side."""

    nq: int
    nv: int
    root_q: int | None  #: qpos address of the free root (None: fixed base)
    root_v: int | None
    qpos_cols: np.ndarray  #: qpos column of each MuJoCo 1-DoF joint ...
    qvel_cols: np.ndarray
    isaac_joint_ids: np.ndarray  #: ... and its index in Isaac's joint tensors
    num_isaac_joints: int


def build_layout(joint_names: Sequence[str], joint_types: Sequence[str], joint_qposadr: Sequence[int],
                 joint_dofadr: Sequence[int], nq: int, nv: int, isaac_joint_names: Sequence[str]) -> StateLayout:
    """Map MuJoCo joints to Isaac's by (importer) name; fail closed on anything not one to one."""
    usd_names = _unique_usd_names("joints", joint_names)
    root_q = root_v = None
    cols_q, cols_v, names = [], [], []
    for j, (name, kind) in enumerate(zip(usd_names, joint_types, strict=True)):
        if kind == "free":
            if j != 0 or root_q is not None:
                raise ValueError(f"joint {name!r}: only a free joint on the root body is supported")
            root_q, root_v = int(joint_qposadr[j]), int(joint_dofadr[j])
        elif kind in ("hinge", "slide"):
            cols_q.append(int(joint_qposadr[j]))
            cols_v.append(int(joint_dofadr[j]))
            names.append(name)
        else:
            raise ValueError(f"joint {name!r}: {kind!r} joints are not supported by the Isaac Sim worker")
    index = {n: i for i, n in enumerate(isaac_joint_names)}
    missing = [n for n in names if n not in index]
    extra = sorted(set(isaac_joint_names) - set(names))
    if missing or extra or len(index) != len(isaac_joint_names):
        raise ValueError(f"MJCF and Isaac articulation joints differ: missing in Isaac {missing}, "
                         f"only in Isaac {extra}, Isaac joints {list(isaac_joint_names)}")
    return StateLayout(nq=nq, nv=nv, root_q=root_q, root_v=root_v, qpos_cols=np.array(cols_q, dtype=np.int64),
                       qvel_cols=np.array(cols_v, dtype=np.int64),
                       isaac_joint_ids=np.array([index[n] for n in names], dtype=np.int64),
                       num_isaac_joints=len(isaac_joint_names))


def qpos_qvel_from_isaac(layout: StateLayout, *, root_pos_w: np.ndarray | None, root_quat_wxyz: np.ndarray | None,
                         root_lin_vel_w: np.ndarray | None, root_ang_vel_w: np.ndarray | None,
                         joint_pos: np.ndarray, joint_vel: np.ndarray, env_origins: np.ndarray | None = None
                         ) -> tuple[np.ndarray, np.ndarray]:
    """Contract ``qpos (n, nq)``, ``qvel (n, nv)`` (float64) from Isaac tensors (as numpy)."""
    n = joint_pos.shape[0]
    qpos, qvel = np.zeros((n, layout.nq)), np.zeros((n, layout.nv))
    if layout.root_q is not None:
        q, v = layout.root_q, layout.root_v
        pos = np.asarray(root_pos_w, dtype=np.float64)
        quat = Q.quat_normalize(np.asarray(root_quat_wxyz, dtype=np.float64))
        qpos[:, q:q + 3] = pos if env_origins is None else pos - env_origins
        qpos[:, q + 3:q + 7] = quat
        qvel[:, v:v + 3] = root_lin_vel_w
        qvel[:, v + 3:v + 6] = Q.quat_apply_inverse(quat, np.asarray(root_ang_vel_w, dtype=np.float64))
    qpos[:, layout.qpos_cols] = np.asarray(joint_pos)[:, layout.isaac_joint_ids]
    qvel[:, layout.qvel_cols] = np.asarray(joint_vel)[:, layout.isaac_joint_ids]
    return qpos, qvel


def isaac_from_qpos_qvel(layout: StateLayout, qpos: np.ndarray, qvel: np.ndarray,
                         env_origins: np.ndarray | None = None) -> dict[str, np.ndarray | None]:
    """Isaac write tensors from contract rows: ``root_pose (k, 7)`` ``[pos, quat wxyz]`` in the world,
    ``root_velocity (k, 6)`` ``[lin_w, ang_w]``, ``joint_pos``/``joint_vel (k, J)`` in Isaac order."""
    qpos, qvel = np.asarray(qpos, dtype=np.float64), np.asarray(qvel, dtype=np.float64)
    k = qpos.shape[0]
    out: dict[str, np.ndarray | None] = {"root_pose": None, "root_velocity": None}
    if layout.root_q is not None:
        q, v = layout.root_q, layout.root_v
        quat = Q.quat_normalize(qpos[:, q + 3:q + 7])
        pos = qpos[:, q:q + 3] if env_origins is None else qpos[:, q:q + 3] + env_origins
        out["root_pose"] = np.concatenate([pos, quat], axis=1)
        out["root_velocity"] = np.concatenate([qvel[:, v:v + 3], Q.quat_apply(quat, qvel[:, v + 3:v + 6])], axis=1)
    jp = np.zeros((k, layout.num_isaac_joints))
    jv = np.zeros((k, layout.num_isaac_joints))
    jp[:, layout.isaac_joint_ids] = qpos[:, layout.qpos_cols]
    jv[:, layout.isaac_joint_ids] = qvel[:, layout.qvel_cols]
    out["joint_pos"], out["joint_vel"] = jp, jv
    return out


def body_order(body_names: Sequence[str], isaac_body_names: Sequence[str], mocap: Sequence[str] = ()) -> np.ndarray:
    """Isaac body index of each MuJoCo body (``-1`` for the world body 0 and for the mocap bodies named in
    ``mocap``, which are not articulation links); fail closed on a mismatch."""
    index = {n: i for i, n in enumerate(isaac_body_names)}
    usd = _unique_usd_names("bodies", body_names[1:])
    mocap_usd = {mjcf_usd_name(n) for n in mocap}
    mine = [n for n in usd if n not in mocap_usd]
    missing = [n for n in mine if n not in index]
    extra = sorted(set(isaac_body_names) - set(mine))
    if missing or extra:
        raise ValueError(f"MJCF and Isaac articulation bodies differ: missing in Isaac {missing}, "
                         f"only in Isaac {extra}")
    return np.array([-1] + [-1 if n in mocap_usd else index[n] for n in usd], dtype=np.int64)


def bodies_from_isaac(order: np.ndarray, pos_w: np.ndarray, quat_wxyz: np.ndarray, lin_vel_w: np.ndarray,
                      ang_vel_w: np.ndarray, env_origins: np.ndarray | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Contract body tables ``(n, nbody, ·)`` (world body: origin, identity, at rest)."""
    n, nb = pos_w.shape[0], len(order)
    pos, quat = np.zeros((n, nb, 3)), np.zeros((n, nb, 4))
    lin, ang = np.zeros((n, nb, 3)), np.zeros((n, nb, 3))
    quat[:, :, 0] = 1.0
    sel, src = np.flatnonzero(order >= 0), order[order >= 0]
    pos[:, sel] = pos_w[:, src] - (0.0 if env_origins is None else env_origins[:, None, :])
    quat[:, sel] = quat_wxyz[:, src]
    lin[:, sel] = lin_vel_w[:, src]
    ang[:, sel] = ang_vel_w[:, src]
    return pos, quat, lin, ang


def isaaclab_major(isaaclab_version: str) -> int:
    """The Isaac Lab API generation of ``isaaclab.__version__``: 2 (torch data, wxyz) or 3 (warp data, xyzw).

    Isaac Lab 2.x reports its extension's version (0.x; 0.54.2 in 2.3.2), Isaac Lab 3.0 its
    distribution's (3.x); a 1.x or 2.x string is read as the 2.x API. 4.x and unparsable
    strings fail closed.
    """
    m = re.match(r"\s*(\d+)\.", str(isaaclab_version))
    major = None if m is None else int(m.group(1))
    if major is None or major > 3:
        raise ValueError(f"unsupported Isaac Lab version {isaaclab_version!r}: the worker supports Isaac Lab 2.x "
                         f"(extension version 0.x) and 3.x")
    return 3 if major == 3 else 2


def quat_order_for(isaaclab_version: str) -> str:
    """Quaternion order of Isaac Lab's ``ArticulationData``: wxyz in Isaac Lab 2, xyzw from 3.0."""
    return "wxyz" if isaaclab_major(isaaclab_version) == 2 else "xyzw"


#: Scene features :func:`root_mount` refuses, with the reason (the backend's ``UNSUPPORTED_SCENE_FEATURES``).
REFUSED_ROOTS = {
    "root_world_joint": "a hinge/slide joint between the world and the root body: a PhysX articulation root is "
                        "floating or fixed, so that joint would not be an articulation DOF (weld the root in a "
                        "jointless top-level body instead)",
    "multiple_articulations": "several top-level bodies: the backend drives one articulation per environment",
    "mocap_child_body": "a body attached to a mocap body: each mocap body is one kinematic PhysX rigid body, which "
                        "carries no jointed or welded children",
}


def root_mount(body_names: Sequence[str], body_parent: Sequence[int], joint_types: Sequence[str],
               joint_body: Sequence[int], mocap: Sequence[str] = ()) -> str:
    """How the one top-level MJCF body meets the world: ``"free"`` (free joint) or ``"fixed"`` (no joint).

    A PhysX articulation's root is floating or fixed to the world; a hinge or slide joint between
    the world and the root body would not be an articulation degree of freedom. That model, one
    with several top-level bodies (mocap bodies, named in ``mocap``, aside: kinematic rigid bodies)
    and one with a body below a mocap body fail closed with
    :class:`~unisim_core.contract.errors.UnsupportedCapabilityError` naming the scene feature
    (:data:`REFUSED_ROOTS`); a model without bodies is a ``ValueError``.
    """
    from unisim_core.contract.errors import UnsupportedCapabilityError

    carried = [str(body_names[b]) for b in range(1, len(body_names)) if str(body_names[int(body_parent[b])]) in mocap
               and int(body_parent[b]) != 0]
    if carried:
        raise UnsupportedCapabilityError("isaacsim", "mocap_child_body",
                                         f"bodies {carried} are attached to a mocap body; "
                                         f"{REFUSED_ROOTS['mocap_child_body']}")
    tops = [str(body_names[b]) for b in range(1, len(body_names))
            if int(body_parent[b]) == 0 and str(body_names[b]) not in mocap]
    if len(tops) > 1:
        raise UnsupportedCapabilityError("isaacsim", "multiple_articulations",
                                         f"the model has {len(tops)} top-level bodies {tops}; "
                                         f"{REFUSED_ROOTS['multiple_articulations']}")
    root = list(body_names).index(root_body_name(body_names, body_parent, mocap))
    kinds = [str(t) for t, b in zip(joint_types, joint_body) if int(b) == root]
    if kinds == ["free"]:
        return "free"
    if not kinds:
        return "fixed"
    raise UnsupportedCapabilityError(
        "isaacsim", "root_world_joint",
        f"root body {body_names[root]!r} is jointed to the world by {kinds}: a PhysX articulation root is "
        f"floating or fixed, so that joint would not be an articulation DOF; put the root in a jointless "
        f"top-level body (welded to the world, a fixed-base articulation) or give it a free joint")


def init_joint_positions(qpos: np.ndarray, joint_types: Sequence[str], joint_qposadr: Sequence[int],
                         joint_range: np.ndarray, names: Sequence[str]) -> dict[str, float]:
    """Default position of each hinge/slide joint in ``names`` (rad or m), clipped into its range.

    Isaac Lab's ``Articulation._validate_cfg`` rejects a default joint position outside the joint
    limits (MuJoCo's ``qpos0`` is 0, often outside a knee's range); ``qpos`` is the model's
    default keyframe, or ``qpos0``.
    """
    out = {}
    for name, kind, adr, (lo, hi) in zip(names, joint_types, joint_qposadr, np.asarray(joint_range)):
        if kind in ("hinge", "slide"):
            out[name] = float(np.clip(qpos[int(adr)], lo, hi))
    return out


_ENV_PATH = re.compile(r"/env_(\d+)(?:/|$)")


def env_rows_from_prim_paths(prim_paths: Sequence[str], num_envs: int) -> list[int]:
    """Contract env id of each engine row, parsed from the view's root prim paths (``.../env_<i>/...``)."""
    rows = []
    for path in prim_paths:
        m = _ENV_PATH.search(path)
        if m is None:
            raise ValueError(f"cannot tell the environment of articulation prim {path!r}")
        rows.append(int(m.group(1)))
    if sorted(rows) != list(range(num_envs)):
        raise ValueError(f"articulation view rows {rows} are not a permutation of range({num_envs})")
    return rows


def orbit_eye(lookat: Sequence[float], distance: float, azimuth_deg: float, elevation_deg: float) -> np.ndarray:
    """Camera position of a MuJoCo-style free camera (negative elevation looks down)."""
    az, el = np.radians(azimuth_deg), np.radians(elevation_deg)
    forward = np.array([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)])
    return np.asarray(lookat, dtype=np.float64) - distance * forward
