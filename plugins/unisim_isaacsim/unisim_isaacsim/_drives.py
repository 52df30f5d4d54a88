"""MJCF joint actuators as Isaac Lab implicit joint drives (pure numpy; used by the worker).

A MuJoCo actuator on a hinge/slide joint with transmission ``gear`` g produces the joint force
``g * clip(f, forcerange)`` (N·m or N), where

- ``<motor>``: ``f = ctrl``;
- ``<position kp kv>``: ``f = kp (ctrl - g q) - kv g q̇``.

An implicit PhysX drive produces ``clip(stiffness (target - q) + damping (target_vel - q̇),
±effort_limit) + effort``. So a position actuator is the drive ``stiffness = g² kp``,
``damping = g² kv`` (plus the joint's own ``damping``), ``target = ctrl / g``,
``effort_limit = |g| * forcerange``; a motor is the effort ``g * clip(ctrl, forcerange)`` on a drive
with zero stiffness. A joint without an actuator keeps only its MJCF ``damping``. PhysX
articulations have no passive joint damping, so the joint's ``damping`` rides on its drive and
shares the drive's limit: while a position actuator saturates, the damping force is capped with
it (MuJoCo never caps joint damping). MJCF
``armature`` (rotor inertia added to the joint) is PhysX's joint armature, same meaning; joint
``frictionloss`` has no PhysX law that matches it; ``unisim_core.mjcf_lite`` rejects it. The force clamp
of a position actuator and the drive's limit coincide only for a symmetric ``forcerange``; an
asymmetric one fails closed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["JointDrives", "joint_drives"]


@dataclass(frozen=True)
class JointDrives:
    """Per-joint drive gains (MJCF hinge/slide joint order) and the ctrl -> target maps (per actuator)."""

    joints: tuple[str, ...]  #: MJCF names of the hinge/slide joints, in model order
    stiffness: np.ndarray  #: (J,) N·m/rad or N/m
    damping: np.ndarray  #: (J,) N·m·s/rad or N·s/m
    effort_limit: np.ndarray  #: (J,) N·m or N; inf when unlimited
    armature: np.ndarray  #: (J,) kg·m² or kg
    act_joint: np.ndarray  #: (nu,) index into ``joints`` of each actuator's joint
    is_position: np.ndarray  #: (nu,) bool
    gear: np.ndarray  #: (nu,)
    force_range: np.ndarray  #: (nu, 2) MJCF forcerange (before gear); (-inf, inf) when unlimited

    def targets(self, ctrl: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Position targets ``(n, P)`` (rad or m) and efforts ``(n, M)`` for ``ctrl (n, nu)`` (already
        clipped to ctrlrange), for the position and motor actuators in actuator order."""
        pos, mot = self.is_position, ~self.is_position
        lo, hi = self.force_range[mot, 0], self.force_range[mot, 1]
        return ctrl[:, pos] / self.gear[pos], np.clip(ctrl[:, mot], lo, hi) * self.gear[mot]


def joint_drives(joints: Sequence[Mapping[str, Any]], actuators: Sequence[Mapping[str, Any]]) -> JointDrives:
    """Drives for an MJCF model's ``joints`` (dicts with ``name type damping armature``) and ``actuators``
    (dicts with ``name kind joint gear forcerange kp kv``), as parsed by ``unisim_core.mjcf_lite``."""
    driven = [j for j, jt in enumerate(joints) if jt["type"] in ("hinge", "slide")]
    column = {j: c for c, j in enumerate(driven)}
    n = len(driven)
    stiffness, effort_limit = np.zeros(n), np.full(n, np.inf)
    damping = np.array([float(joints[j]["damping"]) for j in driven])
    act_joint, is_pos, gears, ranges = [], [], [], []
    for a in actuators:
        name, j = a["name"] or f"#{len(act_joint)}", int(a["joint"])
        if j not in column:
            raise ValueError(f"actuator {name!r}: joint {joints[j]['name']!r} is not a hinge/slide joint")
        c, g = column[j], float(a["gear"])
        if g == 0.0 or not np.isfinite(g):
            raise ValueError(f"actuator {name!r}: gear must be finite and non-zero, got {g}")
        if c in act_joint:
            raise ValueError(f"actuator {name!r}: joint {joints[j]['name']!r} already has an actuator; "
                             f"one implicit drive per joint")
        lo, hi = (float(x) for x in a["forcerange"])
        position = a["kind"] == "position"
        if position:
            if np.isfinite(lo) or np.isfinite(hi):
                if lo != -hi:
                    raise ValueError(f"actuator {name!r}: forcerange [{lo}, {hi}] is not symmetric; a PhysX "
                                     f"drive has one effort limit")
                effort_limit[c] = abs(g) * hi
            stiffness[c] = g * g * float(a["kp"])
            damping[c] += g * g * float(a["kv"])
        act_joint.append(c)
        is_pos.append(position)
        gears.append(g)
        ranges.append((lo, hi))
    return JointDrives(
        joints=tuple(joints[j]["name"] for j in driven), stiffness=stiffness, damping=damping,
        effort_limit=effort_limit, armature=np.array([float(joints[j]["armature"]) for j in driven]),
        act_joint=np.array(act_joint, dtype=np.int64),
        is_position=np.array(is_pos, dtype=bool), gear=np.array(gears),
        force_range=np.array(ranges, dtype=np.float64).reshape(-1, 2))
