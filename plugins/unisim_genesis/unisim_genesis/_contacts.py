"""Contact forces (capability ``contact_forces``) from Genesis' rigid collider.

After a step, ``collider.get_contacts`` lists every env's contacts of that step: the links of
the pair, the world-frame force the solver applied, ``+force`` on ``link_b`` and ``-force`` on
``link_a`` (Genesis' own ``links.contact_force`` sums them so), and the contact's world
``position`` (for a binding with torques: moments about the world origin at that point). Links
are mapped to the contract's bodies once, at bind time; links of no contract body (static
geometry) belong to the world, 0.
"""

from __future__ import annotations

import numpy as np

from unisim_core.contract.contacts import ContactSums

__all__ = ["GenesisContactFill"]


class GenesisContactFill:
    """``fill(out)`` for ``GenesisBackend._bind_contact_forces`` (see the module docstring)."""

    def __init__(self, backend, body_ids: np.ndarray, against_ids: np.ndarray | None) -> None:
        ent = backend.genesis_entity
        self._collider = ent.solver.collider
        link_of = backend._link_of  # contract body -> entity-local link (-1: the world)
        self._contract_of_link = np.zeros(ent.solver.n_links, dtype=np.int64)
        bodies = np.flatnonzero(link_of >= 0)
        self._contract_of_link[ent.link_start + link_of[bodies]] = bodies
        self._sums = ContactSums(body_ids, against_ids, len(link_of))

    def __call__(self, out: np.ndarray) -> None:
        c = self._collider.get_contacts(as_tensor=True, to_torch=False, keep_batch_dim=True)
        link_a = np.asarray(c["link_a"], dtype=np.int64)
        if not link_a.size:
            return
        link_b = np.asarray(c["link_b"], dtype=np.int64)
        force = np.asarray(c["force"], dtype=np.float64)
        env, k = np.nonzero((link_a >= 0) & (link_b >= 0))  # dense rows are padded with -1
        pos = np.asarray(c["position"], dtype=np.float64)[env, k] if out.shape[-1] == 6 else None
        self._sums.add(out, env, self._contract_of_link[link_a[env, k]], self._contract_of_link[link_b[env, k]],
                       force[env, k], pos)
