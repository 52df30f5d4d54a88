"""Contact forces (capability ``contact_forces``) from MotrixSim's contact force report.

``SceneModel.get_link_net_contact_forces`` returns, per link, the net contact force (world frame,
N) of the last step, written into a preallocated float32 buffer; the report is switched on for
every backend at construction (``model.reports.contact_forces``; its cost is within the noise of a
step, measured on the quadruped at N=64). The contract's bodies are MotrixSim's links in order
(body b = link b - 1). The report gives net forces only, not per contact pair, so ``against=``
filters (capability ``contact_filters``) are not declared.
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
        self._model, self._data = backend._M, backend._D
        self._links = [int(b) - 1 for b in body_ids]
        self._buf = np.zeros((backend.num_envs, len(body_ids), 6), dtype=np.float32)

    def __call__(self, out: np.ndarray) -> None:
        with engine_call("get_link_net_contact_forces"):
            self._model.get_link_net_contact_forces(self._data, self._links, self._buf)
        out[...] = self._buf[..., :3]
