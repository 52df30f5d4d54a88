"""Contact forces (capability ``contact_forces``) from MuJoCo Warp's contact list.

After a step the worlds hold ``step1`` at the new state: contacts and constraint rows are those
of the new state while ``efc.force`` is still the previous solve's. A read therefore runs
``mjw.forward`` (the solve at the state the step reached, with the wrench that acted during the
step re-staged and cleared again), then decodes each contact with MuJoCo's definitions
(``unisim_mjwarp.mjwarp_contact_list``) and sums them per body on the host.
"""

from __future__ import annotations

import mujoco_warp as mjw
import numpy as np
import warp as wp

from unisim_core.contract.contacts import ContactSums

from ._contact_list import mjwarp_contact_list
from ._kernels import stage_wrench

__all__ = ["MjwarpContactFill"]


class MjwarpContactFill:
    """``fill(out)`` for ``MjwarpBackend._bind_contact_forces`` (see the module docstring)."""

    def __init__(self, backend, body_ids: np.ndarray, against_ids: np.ndarray | None) -> None:
        self._backend = backend
        self._sums = ContactSums(body_ids, against_ids, backend.model.nbody)
        self._geom_body = backend.model.geom_bodyid.astype(np.int64)
        self._pyramidal = int(backend.warp_model.opt.cone) == int(mjw.ConeType.PYRAMIDAL)

    def __call__(self, out: np.ndarray) -> None:
        be = self._backend
        m, d = be.warp_model, be.warp_data
        with wp.ScopedDevice(be.device):
            wrench = be._staged_any  # the wrench of the last step is still on the device
            if wrench:
                stage_wrench(be._bodies_dev, be._force_dev, be._torque_dev, d)
            mjw.forward(m, d)
            if wrench:
                d.xfrc_applied.zero_()
        be._acc_fresh = not wrench  # acceleration-stage sensors are current only without the wrench
        world, geom, force, pos = mjwarp_contact_list(d, self._pyramidal)
        pair = self._geom_body[geom]
        self._sums.add(out, world, pair[:, 0], pair[:, 1], force, pos)
