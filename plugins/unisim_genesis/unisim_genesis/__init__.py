"""UniSim backend for Genesis (``genesis-world`` 1.4.x): ``num_envs`` envs of one Genesis scene.

``import unisim_genesis`` imports neither genesis nor torch; ``GenesisBackend`` (loaded on first
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
from ._options import GenesisOptions

__all__ = ["GenesisBackend", "GenesisOptions", "__version__", "unisim_backend_spec", "unisim_diagnostics",
           "unisim_raw_stepper", "unisim_step_cost_probe",
           "unisim_zoo_causes"]


def __getattr__(name: str):
    if name == "GenesisBackend":
        from ._backend import GenesisBackend

        return GenesisBackend
    raise AttributeError(f"module 'unisim_genesis' has no attribute {name!r}")
