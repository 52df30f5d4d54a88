"""MuJoCo Warp's contact list read on the host (numpy; nothing imported from warp): shared with
``unisim-newton``, whose ``SolverMuJoCo`` is MuJoCo Warp."""

from __future__ import annotations

import numpy as np

from unisim_core.contract.contacts import mujoco_contact_forces

__all__ = ["mjwarp_contact_list"]


def mjwarp_contact_list(data, pyramidal: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(world (k,), geom (k, 2), force (k, 3), pos (k, 3))`` of the contacts in a MuJoCo Warp
    ``Data`` (read through its arrays' ``.numpy()``, nothing imported): the force geom1 exerts on
    geom2, world frame, N, decoded from ``efc.force`` (whose rows are per world) as MuJoCo does, and
    the contact point (``contact.pos``, world frame, m)."""
    n = int(data.nacon.numpy()[0])
    c = data.contact
    geom = c.geom.numpy()[:n]
    world = c.worldid.numpy()[:n].astype(np.int64)
    if not n:
        return world, geom.reshape(0, 2), np.zeros((0, 3)), np.zeros((0, 3))
    force = data.efc.force.numpy()
    adr = c.efc_address.numpy()[:n].astype(np.int64)
    rows = np.where(adr >= 0, adr + world[:, None] * force.shape[1], -1)
    f = mujoco_contact_forces(c.frame.numpy()[:n], rows, c.dim.numpy()[:n], c.friction.numpy()[:n],
                              force.reshape(-1).astype(np.float64), pyramidal)
    pos = c.pos.numpy()[:n].astype(np.float64)
    keep = (geom >= 0).all(axis=1)  # flex contacts carry geom -1: not a body's
    return world[keep], geom[keep], f[keep], pos[keep]
