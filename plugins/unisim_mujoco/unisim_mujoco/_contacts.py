"""Contact forces (capability ``contact_forces``) from MuJoCo's contact list.

A ``mujoco.batch.Batch`` keeps no contact list between calls (contacts and ``efc_force`` live in
the arena of a per-thread MjData), so a read copies each env's state into one scratch MjData,
with the wrenches that acted during the last step (the contract clears them after it), runs
``mj_forwardSkip`` (collision and constraint solve at the state the step reached, sensors
skipped: what ``mj_forward`` computes for a ``<touch>`` sensor) and sums ``mj_contactForce``'s
forces, rotated from each contact frame to the world, per body. Cost: one forward per env per
read.
"""

from __future__ import annotations

import mujoco
import numpy as np

from unisim_core.contacts import ContactSums, mujoco_contact_forces

from ._randomization import TERM_FIELDS

__all__ = ["MujocoContactFill"]

_STAGE_NONE = int(mujoco.mjtStage.mjSTAGE_NONE)


class MujocoContactFill:
    """``fill(out)`` for ``MujocoBackend._bind_contact_forces`` (see the module docstring)."""

    def __init__(self, backend, body_ids: np.ndarray, against_ids: np.ndarray | None) -> None:
        m = backend.model
        self._backend = backend
        self._sums = ContactSums(body_ids, against_ids, m.nbody)
        self._data = mujoco.MjData(m)
        self._model: mujoco.MjModel | None = None  # scratch copy for envs with randomized fields
        self._fields = tuple(sorted(set(TERM_FIELDS.values()) | {"geom_aabb"}))
        self._geom_body = m.geom_bodyid.astype(np.int64)
        self._pyramidal = m.opt.cone == int(mujoco.mjtCone.mjCONE_PYRAMIDAL)
        self._edges = np.arange(10)  # constraint rows of a contact: up to 2 (condim 6 - 1)

    def __call__(self, out: np.ndarray) -> None:
        b, d = self._backend.batch, self._data
        envs, pairs, forces = [], [], []
        expanded = any(b.expanded(f) is not None for f in self._fields)
        wrench = self._backend._last_wrench
        for i in range(b.nsim):
            model = self._model_of(b, i) if expanded else self._backend.model
            b.get_data(i, d)
            if wrench is not None:
                d.xfrc_applied[wrench[0]] = wrench[1][i]
            mujoco.mj_forwardSkip(model, d, _STAGE_NONE, 1)
            n = d.ncon
            if not n:
                continue
            c = d.contact
            geom = c.geom[:n]
            keep = (geom >= 0).all(axis=1)  # flex contacts carry geom -1: not a body's
            adr = c.efc_address[:n].astype(np.int64)
            rows = np.where(adr[:, None] >= 0, adr[:, None] + self._edges, -1)
            f = mujoco_contact_forces(c.frame[:n], rows, c.dim[:n], c.friction[:n], d.efc_force, self._pyramidal)
            envs.append(np.full(int(keep.sum()), i))
            pairs.append(self._geom_body[geom[keep]])
            forces.append(f[keep])
        if envs:
            pair = np.concatenate(pairs)
            self._sums.add(out, np.concatenate(envs), pair[:, 0], pair[:, 1], np.concatenate(forces))

    def _model_of(self, b, i: int) -> mujoco.MjModel:
        """Env ``i``'s model with its randomized fields."""
        if self._model is None:
            self._model = b.get_model(i)
        return b.get_model(i, self._model)
