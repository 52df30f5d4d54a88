"""UniSim backend for MotrixSim (``motrixsim`` 0.10.x).

``import unisim_motrix`` does not import MotrixSim; constructing a backend does.
"""

from ._backend import MotrixBackend
from ._errors import engine_call
from ._hooks import unisim_backend_spec, unisim_raw_stepper, unisim_step_cost_probe, unisim_zoo_causes
from ._mjcf import IGNORED_ATTRIBUTES, MotrixModellingWarning
from ._options import MotrixOptions
from ._threads import ThreadPoolConflictError

__all__ = ["MotrixBackend", "MotrixOptions", "MotrixModellingWarning", "ThreadPoolConflictError",
           "IGNORED_ATTRIBUTES", "engine_call", "unisim_backend_spec", "unisim_raw_stepper",
           "unisim_step_cost_probe",
           "unisim_zoo_causes"]
__version__ = "0.1.0"
