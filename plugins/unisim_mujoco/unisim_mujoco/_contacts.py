"""Contact forces (capability ``contact_forces``) from MuJoCo's contact list.

A ``mujoco.batch.Batch`` keeps no contact list between calls (contacts and ``efc_force`` live in
the arena of a per-thread MjData), so a read copies each env's state into one scratch MjData,
with the wrenches that acted during the last step (the contract clears them after it), runs
``mj_forwardSkip`` (collision and constraint solve at the state the step reached, sensors
skipped: what ``mj_forward`` computes for a ``<touch>`` sensor) and sums ``mj_contactForce``'s
forces, rotated from each contact frame to the world, per body; a binding with torques also sums
their moments about the world origin at each contact's point (``d.contact.pos``, the middle of the
penetration, where ``mj_rnePostConstraint`` applies the force for ``cfrc_ext``). Cost: one forward
per env per read.
"""

from __future__ import annotations

import mujoco
import numpy as np

from unisim_core.contract.contacts import ContactSums, mujoco_contact_forces

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
        moments = out.shape[-1] == 6  # a binding with torques: the contact points too
        parts: list[tuple] = []  # per env with contacts: (env, geom, frame, efc_address, dim, friction, efc_force, pos)
        offset = 0
        expanded = any(b.expanded(f) is not None for f in self._fields)
        wrench = self._backend._last_wrench
        for i in range(b.nsim):
            model = self._model_of(b, i) if expanded else self._backend.model
            b.get_data(i, d)
            if wrench is not None:
                d.xfrc_applied[wrench[0]] = wrench[1][i]
            mujoco.mj_forwardSkip(model, d, _STAGE_NONE, 1)
            n = d.ncon
            if n:
                c = d.contact
                adr = c.efc_address[:n].astype(np.int64)
                parts.append((np.full(n, i), c.geom[:n].copy(), c.frame[:n].copy(),
                              np.where(adr >= 0, adr + offset, -1), c.dim[:n].copy(), c.friction[:n].copy(),
                              d.efc_force[:d.nefc].copy(), c.pos[:n].copy() if moments else np.empty((n, 3))))
                offset += d.nefc
        if not parts:
            return
        env, geom, frame, adr, dim, friction, efc, pos = (np.concatenate(x) for x in zip(*parts))
        rows = np.where(adr[:, None] >= 0, adr[:, None] + self._edges, -1)
        force = mujoco_contact_forces(frame, rows, dim, friction, efc, self._pyramidal)
        keep = (geom >= 0).all(axis=1)  # flex contacts carry geom -1: not a body's
        pair = self._geom_body[geom[keep]]
        self._sums.add(out, env[keep], pair[:, 0], pair[:, 1], force[keep], pos[keep] if moments else None)

    def _model_of(self, b, i: int) -> mujoco.MjModel:
        """Env ``i``'s model with its randomized fields."""
        if self._model is None:
            self._model = b.get_model(i)
        return b.get_model(i, self._model)
