"""From a parsed MJCF model to the example integrator's rigid groups, refusing what it cannot simulate.

The integrator simulates **independent rigid groups**: each joint moves the rigid subtree below its
body (bodies without a joint are welded to their parent), and every joint is attached to the world
through joint-less bodies only. A free joint gives a free rigid body; a hinge or slide gives a
one-degree-of-freedom body about a fixed world axis (a pendulum, a wheel, a slider). Bodies welded
to the world are static.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from unisim_core import InvalidInputError, LiteModel, UnsupportedCapabilityError
from unisim_core import quat as Q

__all__ = ["UNSUPPORTED_SCENE_FEATURES", "Group", "Rig", "build_rig"]

#: Scene features the example refuses, with the reason (``SimBackend.UNSUPPORTED_SCENE_FEATURES``).
UNSUPPORTED_SCENE_FEATURES = {
    "contacts": "no collision detection: a scene whose geoms can touch (MuJoCo's collision filter, "
                "LiteModel.collision_pairs) is refused rather than simulated without contacts",
    "multi_joint_chain": "each joint moves one rigid subtree attached to the world; a joint below another joint "
                         "(double pendulum, arm, legged robot) needs articulated-body dynamics it does not have",
}


@dataclass(frozen=True)
class Group:
    """One joint and the rigid subtree it moves. Vectors are in the group frame (the frame of the
    body that owns the joint) unless named ``*_w``."""

    kind: str  #: "free" | "hinge" | "slide"
    body: int  #: body owning the joint
    qadr: int  #: first qpos column
    dadr: int  #: first qvel column
    mass: float  #: kg, the subtree's
    com: np.ndarray  #: (3,) centre of mass, m
    inertia: np.ndarray  #: (3, 3) about the COM, kg m^2
    anchor: np.ndarray  #: (3,) joint position (hinge, slide), m
    axis: np.ndarray  #: (3,) unit joint axis (hinge, slide)
    pos0_w: np.ndarray  #: (3,) world position of the group frame at q = 0 (hinge, slide), m
    quat0_w: np.ndarray  #: (4,) world orientation of the group frame at q = 0 (hinge, slide), wxyz
    inertia_axis: float  #: effective inertia of the dof with armature: kg m^2 (hinge), kg (slide)
    range: np.ndarray  #: (2,) joint limits (hinge rad, slide m; ±inf when unlimited)


@dataclass(frozen=True)
class Rig:
    """Groups plus where every body sits: ``body_group[b]`` (-1: static) and the body's pose in its
    group frame (static bodies: in the world), ``(nbody, 3)`` m and ``(nbody, 4)`` wxyz."""

    groups: tuple[Group, ...]
    body_group: np.ndarray
    body_off_pos: np.ndarray
    body_off_quat: np.ndarray


def _refuse(backend: str, feature: str, detail: str) -> UnsupportedCapabilityError:
    return UnsupportedCapabilityError(backend, feature, detail)


def build_rig(lite: LiteModel, path: str, backend: str) -> Rig:
    """Rigid groups of ``lite`` (read from ``path``); ``UnsupportedCapabilityError`` naming the scene
    feature (``contacts``, ``multi_joint_chain``) when the model is outside what the integrator simulates."""
    pairs = lite.collision_pairs()
    if pairs:
        names = [(lite.geoms[a]["name"] or f"geom {a}", lite.geoms[b]["name"] or f"geom {b}") for a, b in pairs[:3]]
        raise _refuse(backend, "contacts", f"{path}: geoms can collide ({len(pairs)} pairs, e.g. {names}); this "
                                           "backend has no contacts (set contype/conaffinity 0 to load it)")
    parent, joint_of = lite.body_parent, lite.body_joint
    for j in lite.joints:
        p = parent[j["body"]]
        while p != 0:
            if joint_of[p] >= 0:
                raise _refuse(backend, "multi_joint_chain",
                              f"{path}: joint {j['name']!r} sits below joint {lite.joints[joint_of[p]]['name']!r}; "
                              "this backend simulates one joint between the world and each rigid body")
            p = parent[p]
    nb = len(lite.body_names)
    group_of = np.full(nb, -1, dtype=np.int64)
    off_pos, off_quat = np.zeros((nb, 3)), np.tile([1.0, 0.0, 0.0, 0.0], (nb, 1))
    owners: list[int] = []
    for b in range(1, nb):  # parents precede children
        p = parent[b]
        if joint_of[b] >= 0:
            group_of[b] = len(owners)
            owners.append(b)
        else:
            group_of[b] = group_of[p]
            off_pos[b] = off_pos[p] + Q.quat_apply(off_quat[p], lite.body_pos[b])
            off_quat[b] = Q.quat_mul(off_quat[p], lite.body_quat[b])
    groups = tuple(_group(lite, path, owner, np.flatnonzero(group_of == g), off_pos, off_quat)
                   for g, owner in enumerate(owners))
    return Rig(groups=groups, body_group=group_of, body_off_pos=off_pos, body_off_quat=off_quat)


def _group(lite: LiteModel, path: str, owner: int, bodies: np.ndarray, off_pos: np.ndarray,
           off_quat: np.ndarray) -> Group:
    j = lite.joints[lite.body_joint[owner]]
    mass = np.array([lite.body_mass[b] for b in bodies])
    rot = Q.matrix_from_quat(Q.quat_mul(off_quat[bodies], np.array([lite.body_iquat[b] for b in bodies])))
    com_b = off_pos[bodies] + Q.quat_apply(off_quat[bodies], np.array([lite.body_ipos[b] for b in bodies]))
    total = float(mass.sum())
    if total <= 0.0:
        names = [lite.body_names[b] for b in bodies]
        raise InvalidInputError(f"{path}: joint {j['name']!r} moves no mass (bodies {names})")
    com = (mass[:, None] * com_b).sum(0) / total
    r = com_b - com
    inertia = (rot * np.array([lite.body_inertia[b] for b in bodies])[:, None, :]) @ rot.transpose(0, 2, 1)
    inertia = (inertia + mass[:, None, None] * ((r * r).sum(1)[:, None, None] * np.eye(3)
                                                - r[:, :, None] * r[:, None, :])).sum(0)
    anchor, axis = np.asarray(j["pos"], float), np.asarray(j["axis"], float)
    d = com - anchor
    if j["type"] == "hinge":
        inertia_axis = axis @ inertia @ axis + total * (d @ d - (axis @ d) ** 2) + j["armature"]
    else:
        inertia_axis = total + j["armature"]
    if j["type"] == "free" and np.linalg.eigvalsh(inertia).min() <= 0.0:
        raise InvalidInputError(f"{path}: free body {lite.body_names[owner]!r} needs a positive-definite inertia")
    p = lite.body_parent[owner]  # the world or a static body
    return Group(kind=j["type"], body=owner, qadr=j["qposadr"], dadr=j["dofadr"], mass=total, com=com,
                 inertia=inertia, anchor=anchor, axis=axis,
                 pos0_w=off_pos[p] + Q.quat_apply(off_quat[p], lite.body_pos[owner]),
                 quat0_w=Q.quat_mul(off_quat[p], lite.body_quat[owner]), inertia_axis=float(inertia_axis),
                 range=np.asarray(j["range"], float))
