"""MuJoCo's subtree sensors from the contract's body state, computed once here for every engine.

- ``subtreecom``: the centre of mass of a body and its descendants, world frame (m): MuJoCo's
  ``subtree_com``, ``sum m_i c_i / sum m_i`` over the subtree's bodies (``c_i`` each body's COM);
- ``subtreelinvel``: the linear velocity of that centre of mass (m/s): MuJoCo's ``subtree_linvel``,
  ``sum m_i v_i / sum m_i`` (``v_i`` each body's COM velocity).

Masses and COM offsets are the backend's current per-env values (randomized ones included); a subtree
without mass reads its root body's COM (and its velocity), as MuJoCo does.
"""

from __future__ import annotations

import numpy as np

from unisim_core.contract import quat as Q
from unisim_core.contract._typing import Backend
from unisim_core.contract.capabilities import Capability

__all__ = ["SUBTREE_SENSORS", "subtree_sensor"]

#: The sensor tags this module evaluates (``mjcf_lite`` reads them with ``objtype == "subtree"``).
SUBTREE_SENSORS = ("subtreecom", "subtreelinvel")


def _subtree(parent, root: int) -> np.ndarray:
    """Ids of ``root`` and its descendants (bodies are numbered depth-first, a parent before its children)."""
    inside = np.zeros(len(parent), dtype=bool)
    inside[root] = True
    for b in range(root + 1, len(parent)):
        inside[b] = inside[parent[b]]
    return np.flatnonzero(inside)


def subtree_sensor(backend: Backend, kind: str, body: int) -> np.ndarray:
    """``(num_envs, 3)`` float64: sensor ``kind`` (:data:`SUBTREE_SENSORS`) of the subtree rooted at ``body``."""
    info = backend.model_info
    ids = _subtree(info.body_parent, body)
    n = backend.num_envs
    if {Capability.INIT_RANDOMIZATION, Capability.RESET_RANDOMIZATION} & set(backend.capabilities):
        mass = np.asarray(backend._read_model_field("body_mass"), np.float64)[:, ids]
        ipos = np.asarray(backend._read_model_field("body_com_offset"), np.float64)[:, ids]
    else:
        mass = np.broadcast_to(np.asarray(info.body_mass, np.float64)[ids], (n, len(ids)))
        ipos = np.broadcast_to(np.asarray(info.body_ipos, np.float64)[ids], (n, len(ids), 3))
    quat = np.asarray(backend._body_quat_w(ids), np.float64)
    arm = Q.quat_apply(quat, ipos)  # each body's COM from its origin, world frame
    if kind == "subtreecom":
        point = np.asarray(backend._body_pos_w(ids), np.float64) + arm
    else:
        ang = np.asarray(backend._body_ang_vel_w(ids), np.float64)
        point = np.asarray(backend._body_lin_vel_w(ids), np.float64) + np.cross(ang, arm)
    total = mass.sum(axis=1, keepdims=True)
    weighted = (mass[..., None] * point).sum(axis=1) / np.where(total > 0, total, 1.0)
    return np.where(total > 0, weighted, point[:, 0])
