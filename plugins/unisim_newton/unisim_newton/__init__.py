"""UniSim backend for Newton (``newton`` 1.8, warp-based): ``num_envs`` worlds on a warp device.

``import unisim_newton`` imports neither warp nor newton; ``NewtonBackend`` (loaded on first
access) and constructing a backend do.
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
from ._options import SOLVERS, NewtonOptions

__all__ = ["NewtonBackend", "NewtonOptions", "SOLVERS", "__version__", "unisim_backend_spec", "unisim_diagnostics",
           "unisim_raw_stepper", "unisim_step_cost_probe",
           "unisim_zoo_causes"]


def __getattr__(name: str):
    if name == "NewtonBackend":
        from ._backend import NewtonBackend

        return NewtonBackend
    raise AttributeError(f"module 'unisim_newton' has no attribute {name!r}")
