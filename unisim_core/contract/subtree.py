"""MuJoCo's subtree sensors from the contract's body state, computed once here for every engine.

- ``subtreecom``: the centre of mass of a body and its descendants, world frame (m): MuJoCo's
  ``subtree_com``, ``sum m_i c_i / sum m_i`` over the subtree's bodies (``c_i`` each body's COM);
- ``subtreelinvel``: the linear velocity of that centre of mass (m/s): MuJoCo's ``subtree_linvel``,
  ``sum m_i v_i / sum m_i`` (``v_i`` each body's COM velocity);
- ``subtreeangmom``: the subtree's angular momentum about that centre of mass, world frame (kg m²/s):
  MuJoCo's ``subtree_angmom``, ``sum I_i w_i + m_i (c_i - c) x (v_i - v)`` (``I_i`` each body's inertia
  tensor about its COM in the world, from its principal moments and inertial frame ``iquat``).

Masses, COM offsets and inertias are the backend's current per-env values (randomized ones included); a
subtree without mass reads its root body's COM (and its velocity), as MuJoCo does.
"""

from __future__ import annotations

import functools

import numpy as np

from unisim_core.contract import quat as Q
from unisim_core.contract._typing import Backend
from unisim_core.contract.capabilities import Capability

__all__ = ["SUBTREE_SENSORS", "subtree_sensor"]

#: The sensor tags this module evaluates (``mjcf_lite`` reads them with ``objtype == "subtree"``).
SUBTREE_SENSORS = ("subtreecom", "subtreelinvel", "subtreeangmom")


@functools.lru_cache(maxsize=256)
def _subtree(parent: tuple[int, ...], root: int) -> np.ndarray:
    """Ids of ``root`` and its descendants (bodies are numbered depth-first, a parent before its children); cached
    per model (a sensor reads it every step)."""
    inside = np.zeros(len(parent), dtype=bool)
    inside[root] = True
    for b in range(root + 1, len(parent)):
        inside[b] = inside[parent[b]]
    ids = np.flatnonzero(inside)
    ids.flags.writeable = False
    return ids


def subtree_sensor(backend: Backend, kind: str, body: int, iquat=None) -> np.ndarray:
    """``(num_envs, 3)`` float64: sensor ``kind`` (:data:`SUBTREE_SENSORS`) of the subtree rooted at ``body``.
    ``iquat (nbody, 4)``: each body's inertial frame in its body frame (wxyz), needed by ``subtreeangmom``."""
    info = backend.model_info
    ids = _subtree(tuple(np.asarray(info.body_parent).tolist()), body)
    n = backend.num_envs
    randomized = bool({Capability.INIT_RANDOMIZATION, Capability.RESET_RANDOMIZATION} & backend.capabilities)
    nominal = {"body_mass": info.body_mass, "body_com_offset": info.body_ipos, "body_inertia": info.body_inertia}

    def table(term: str) -> np.ndarray:
        """The subtree's rows of a body term, per env (the backend's current values where it randomizes them)."""
        if randomized:
            return np.asarray(backend._read_model_field(term), np.float64)[:, ids]
        rows = np.asarray(nominal[term], np.float64)[ids]
        return np.broadcast_to(rows, (n,) + rows.shape)

    mass, ipos = table("body_mass"), table("body_com_offset")
    quat = np.asarray(backend._body_quat_w(ids), np.float64)
    arm = Q.quat_apply(quat, ipos)  # each body's COM from its origin, world frame
    com = np.asarray(backend._body_pos_w(ids), np.float64) + arm
    total = mass.sum(axis=1, keepdims=True)

    def mean(x: np.ndarray) -> np.ndarray:
        """The mass-weighted mean over the subtree; the root's value where the subtree has no mass."""
        return np.where(total > 0, (mass[..., None] * x).sum(axis=1) / np.where(total > 0, total, 1.0), x[:, 0])

    if kind == "subtreecom":
        return mean(com)
    ang = np.asarray(backend._body_ang_vel_w(ids), np.float64)
    vel = np.asarray(backend._body_lin_vel_w(ids), np.float64) + np.cross(ang, arm)
    if kind == "subtreelinvel":
        return mean(vel)
    frame = Q.quat_mul(quat, np.broadcast_to(np.asarray(iquat, np.float64)[ids], quat.shape))  # inertial frames
    spin = Q.quat_apply(frame, table("body_inertia") * Q.quat_apply_inverse(frame, ang))  # I_i w_i, world
    orbit = mass[..., None] * np.cross(com - mean(com)[:, None], vel - mean(vel)[:, None])
    return (spin + orbit).sum(axis=1)
