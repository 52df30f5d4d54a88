"""UniSim backend for SAPIEN 3 (``sapien`` 3.0.3): PhysX 5 on the CPU, one scene per env.

``import unisim_sapien`` never imports sapien; ``SapienBackend`` (loaded on first access) and
constructing a backend do. The PhysX mapping it applies lives in ``unisim_physx``, shared
with ``unisim-isaacsim``.
"""

from __future__ import annotations

from ._hooks import (
    CAPABILITIES,
    __version__,
    unisim_backend_spec,
    unisim_diagnostics,
    unisim_raw_stepper,
    unisim_step_cost_probe,
    unisim_zoo_causes,
)
from ._options import SapienOptions
from ._warnings import SapienModellingWarning

__all__ = ["CAPABILITIES", "SapienBackend", "SapienModellingWarning", "SapienOptions", "__version__",
           "unisim_backend_spec", "unisim_diagnostics", "unisim_raw_stepper", "unisim_step_cost_probe",
           "unisim_zoo_causes"]


def __getattr__(name: str):
    if name == "SapienBackend":
        from ._backend import SapienBackend

        return SapienBackend
    raise AttributeError(f"module 'unisim_sapien' has no attribute {name!r}")
