"""Contact forces (capability ``contact_forces``) from MotrixSim's contact force report.

``SceneModel.get_link_net_contact_forces`` returns, per link, the net contact force (world frame,
N) of the last step and the net contact moment about the link's centre of mass (world frame,
N m), ``[fx, fy, fz, tx, ty, tz]``, written into a preallocated float32 buffer; the report is
switched on for every backend at construction (``model.reports.contact_forces``; its cost is
within the noise of a step, measured on the quadruped at N=64). The contract's bodies are
MotrixSim's links in order (body b = link b - 1). The report gives net forces only, not per
contact pair, so ``against=`` filters (capability ``contact_filters``) are not declared.

Columns 3:6, measured (docs/contacts.md): a 1 kg box at (1, 2) with its COM 3 cm off the link
origin reads (0, 0, 0) at rest (the moment about the link origin would be (0, -0.294, 0), about
the world origin (19.6, -9.8, 0)), (0, +0.45, 0) pushed along +x at its bottom face and
(0, 0, -0.2) against a 0.2 N m yaw torque: the moment of the forces on the link about its COM, as
documented. A binding with torques gets the moment about the world origin the contract's fill
wants, ``tau_com + x_com x F``, with ``x_com`` the core's (``_body_com_w``: link pose and COM
offset, randomized ones included), so the core's conversion back returns MotrixSim's torque.
"""

from __future__ import annotations

import numpy as np

from ._errors import engine_call

__all__ = ["MotrixContactFill", "enable_contact_report"]


def enable_contact_report(model) -> None:
    """Switch the contact force report on (read after each step by the fill below)."""
    with engine_call("reports.contact_forces"):
        model.reports.contact_forces = True


class MotrixContactFill:
    """``fill(out)`` for ``MotrixBackend._bind_contact_forces`` (see the module docstring)."""

    def __init__(self, backend, body_ids: np.ndarray) -> None:
        self._backend, self._body_ids = backend, body_ids
        self._model, self._data = backend._M, backend._D
        self._links = [int(b) - 1 for b in body_ids]
        self._buf = np.zeros((backend.num_envs, len(body_ids), 6), dtype=np.float32)

    def __call__(self, out: np.ndarray) -> None:
        with engine_call("get_link_net_contact_forces"):
            self._model.get_link_net_contact_forces(self._data, self._links, self._buf)
        buf = self._buf
        out[..., :3] = buf[..., :3]
        if out.shape[-1] == 6:  # a binding with torques: moment about the world origin
            out[..., 3:] = buf[..., 3:]
            out[..., 3:] += np.cross(self._backend._body_com_w(self._body_ids), out[..., :3])
