"""Contact forces (capability ``contact_forces``) from ``SolverMuJoCo``'s MuJoCo Warp data.

Newton's MuJoCo solver runs MuJoCo Warp's own collision and solve in every substep
(``mj_step``: forward at the substep's start state, then integration), so after a step its
``mjw_data`` holds the contacts and the constraint forces of the last substep, consistent with
each other. They are decoded with MuJoCo's definitions (``unisim_mjwarp.mjwarp_contact_list``)
and mapped from the solver's MuJoCo geoms to the contract's bodies once, at bind time
(``mjc_body_to_newton`` and the backend's body layout; static geoms belong to the world, 0).
"""

from __future__ import annotations

import numpy as np

from unisim_core.contract.contacts import ContactSums
from unisim_mjwarp import mjwarp_contact_list

__all__ = ["NewtonContactFill"]


class NewtonContactFill:
    """``fill(out)`` for ``NewtonBackend._bind_contact_forces`` (see the module docstring)."""

    def __init__(self, backend, body_ids: np.ndarray, against_ids: np.ndarray | None) -> None:
        solver, lay = backend._solver, backend._layout
        self._solver = solver
        contract_of_local = np.zeros(lay.bodies, dtype=np.int64)
        contract_of_local[np.asarray(lay.body_src[1:])] = np.arange(1, len(lay.body_src))
        newton_of_mj = solver.mjc_body_to_newton.numpy()[0]  # world 0: bodies local to a world
        contract_of_mj = np.where(newton_of_mj < 0, 0, contract_of_local[np.maximum(newton_of_mj, 0) % lay.bodies])
        self._geom_body = contract_of_mj[np.asarray(solver.mj_model.geom_bodyid, dtype=np.int64)]
        self._pyramidal = int(solver.mjw_model.opt.cone) == 0  # mjCONE_PYRAMIDAL
        self._sums = ContactSums(body_ids, against_ids, len(lay.body_src))

    def __call__(self, out: np.ndarray) -> None:
        world, geom, force, pos = mjwarp_contact_list(self._solver.mjw_data, self._pyramidal)
        pair = self._geom_body[geom]
        self._sums.add(out, world, pair[:, 0], pair[:, 1], force, pos)
