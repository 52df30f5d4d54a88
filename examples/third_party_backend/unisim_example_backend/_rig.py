"""From a parsed MJCF model to the example integrator's rigid groups, refusing what it cannot simulate.

A **group** is a joint and the rigid bodies it moves (its body and the joint-less bodies below it,
welded to it). A free joint on a world child gives a free rigid body, with no joint below it. Hinge
and slide joints form fixed-base trees: a group's parent is the group of the nearest jointed
ancestor (``-1``: welded to the world), so a pendulum is one group, a double pendulum or an arm a
chain of groups. Bodies welded to the world are static.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from unisim_core import InvalidInputError, LiteModel, UnsupportedCapabilityError
from unisim_core.contract import quat as Q

__all__ = ["UNSUPPORTED_SCENE_FEATURES", "Group", "Rig", "build_rig"]

#: Scene features the example refuses, with the reason (``SimBackend.UNSUPPORTED_SCENE_FEATURES``).
UNSUPPORTED_SCENE_FEATURES = {
    "contacts": "no collision detection: a scene whose geoms can touch (MuJoCo's collision filter, "
                "LiteModel.collision_pairs) is refused rather than simulated without contacts",
    "floating_base_joints": "a free body is one rigid body: joints below a free joint (a legged robot) would need "
                            "floating-base articulated dynamics, which this integrator does not have",
}


@dataclass(frozen=True)
class Group:
    """One joint and the rigid subtree it moves. Vectors are in the group frame (the frame of the
    body that owns the joint) unless named ``*_w``."""

    kind: str  #: "free" | "hinge" | "slide"
    body: int  #: body owning the joint
    parent: int  #: group of the nearest jointed ancestor, -1 when welded to the world (always for free)
    qadr: int  #: first qpos column
    dadr: int  #: first qvel column
    mass: float  #: kg, the subtree's
    com: np.ndarray  #: (3,) centre of mass, m
    inertia: np.ndarray  #: (3, 3) about the COM, kg m^2
    anchor: np.ndarray  #: (3,) joint position (hinge, slide), m
    axis: np.ndarray  #: (3,) unit joint axis (hinge, slide)
    rel_pos: np.ndarray  #: (3,) group frame at q = 0 in the parent group's frame (the world's if -1), m
    rel_quat: np.ndarray  #: (4,) its orientation there, wxyz (hinge, slide)
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
    """Rigid groups of ``lite`` (read from ``path``), parents first; ``UnsupportedCapabilityError`` naming
    the scene feature (``floating_base_joints``, ``contacts``) when the model is outside what the
    integrator simulates."""
    parent, joint_of = lite.body_parent, lite.body_joint
    for j in lite.joints:
        p = parent[j["body"]]
        while p != 0 and joint_of[p] < 0:
            p = parent[p]
        if p != 0 and lite.joints[joint_of[p]]["type"] == "free":
            raise _refuse(backend, "floating_base_joints",
                          f"{path}: joint {j['name']!r} sits below the free joint of body {lite.body_names[p]!r}; "
                          "this backend simulates free bodies as single rigid bodies")
    pairs = lite.collision_pairs()
    if pairs:
        names = [(lite.geoms[a]["name"] or f"geom {a}", lite.geoms[b]["name"] or f"geom {b}") for a, b in pairs[:3]]
        raise _refuse(backend, "contacts", f"{path}: geoms can collide ({len(pairs)} pairs, e.g. {names}); this "
                                           "backend has no contacts (set contype/conaffinity 0 to load it)")
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
    groups = tuple(_group(lite, path, owner, np.flatnonzero(group_of == g), off_pos, off_quat,
                          int(group_of[parent[owner]])) for g, owner in enumerate(owners))
    return Rig(groups=groups, body_group=group_of, body_off_pos=off_pos, body_off_quat=off_quat)


def _group(lite: LiteModel, path: str, owner: int, bodies: np.ndarray, off_pos: np.ndarray,
           off_quat: np.ndarray, parent: int) -> Group:
    j = lite.joints[lite.body_joint[owner]]
    mass = np.array([lite.body_mass[b] for b in bodies])
    rot = Q.matrix_from_quat(Q.quat_mul(off_quat[bodies], np.array([lite.body_iquat[b] for b in bodies])))
    com_b = off_pos[bodies] + Q.quat_apply(off_quat[bodies], np.array([lite.body_ipos[b] for b in bodies]))
    total = float(mass.sum())
    com = (mass[:, None] * com_b).sum(0) / total if total > 0.0 else np.zeros(3)
    r = com_b - com
    inertia = (rot * np.array([lite.body_inertia[b] for b in bodies])[:, None, :]) @ rot.transpose(0, 2, 1)
    inertia = (inertia + mass[:, None, None] * ((r * r).sum(1)[:, None, None] * np.eye(3)
                                                - r[:, :, None] * r[:, None, :])).sum(0)
    if j["type"] == "free" and (total <= 0.0 or np.linalg.eigvalsh(inertia).min() <= 0.0):
        raise InvalidInputError(f"{path}: free body {lite.body_names[owner]!r} needs a positive mass and a "
                                "positive-definite inertia")
    p = lite.body_parent[owner]  # offsets of p are in its group's frame (the world's when static)
    return Group(kind=j["type"], body=owner, parent=parent, qadr=j["qposadr"], dadr=j["dofadr"], mass=total,
                 com=com, inertia=inertia, anchor=np.asarray(j["pos"], float), axis=np.asarray(j["axis"], float),
                 rel_pos=off_pos[p] + Q.quat_apply(off_quat[p], lite.body_pos[owner]),
                 rel_quat=Q.quat_mul(off_quat[p], lite.body_quat[owner]), range=np.asarray(j["range"], float))
