"""UniSim backend for MuJoCo Warp (``mujoco-warp`` 4.x): ``num_envs`` worlds on a warp device.

``import unisim_mjwarp`` imports neither warp nor MuJoCo; ``MjwarpBackend`` (loaded on first
access) and constructing a backend do.
"""

from __future__ import annotations

from ._hooks import __version__, unisim_backend_spec, unisim_diagnostics, unisim_raw_stepper, unisim_step_cost_probe
from ._options import MjwarpOptions

__all__ = ["MjwarpBackend", "MjwarpOptions", "__version__", "unisim_backend_spec", "unisim_diagnostics",
           "unisim_raw_stepper", "unisim_step_cost_probe"]


def __getattr__(name: str):
    if name == "MjwarpBackend":
        from ._backend import MjwarpBackend

        return MjwarpBackend
    raise AttributeError(f"module 'unisim_mjwarp' has no attribute {name!r}")
