"""UniSim backend for MuJoCo Warp (``mujoco-warp`` 4.x): ``num_envs`` worlds on a warp device.

``import unisim_mjwarp`` imports neither warp nor MuJoCo; ``MjwarpBackend`` (loaded on first
access) and constructing a backend do. The buffer sizing and overflow reporting (``buffer_sizes``,
``overflow_error``, ``FATAL_OVERFLOWS``) and the contact list read on the host
(``mjwarp_contact_list``), also loaded on first access, serve ``unisim-newton`` too, whose
``SolverMuJoCo`` is MuJoCo Warp.
"""

from __future__ import annotations

from ._hooks import (
    __version__,
    unisim_backend_spec,
    unisim_diagnostics,
    unisim_raw_stepper,
    unisim_step_cost_probe,
    unisim_zoo_causes,
)
from ._options import MjwarpModellingWarning, MjwarpOptions

_LAZY = {"MjwarpBackend": "_backend", "buffer_sizes": "_buffers", "overflow_error": "_buffers",
         "FATAL_OVERFLOWS": "_buffers", "mjwarp_contact_list": "_contact_list"}

__all__ = ["MjwarpBackend", "MjwarpModellingWarning", "MjwarpOptions", "FATAL_OVERFLOWS", "buffer_sizes",
           "mjwarp_contact_list", "overflow_error", "__version__", "unisim_backend_spec", "unisim_diagnostics",
           "unisim_raw_stepper", "unisim_step_cost_probe", "unisim_zoo_causes"]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'unisim_mjwarp' has no attribute {name!r}")
