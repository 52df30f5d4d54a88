"""Isaac Sim / Isaac Lab backend for UniSim: an SDK-free host (``IsaacSimBackend``) and the worker that
runs inside Isaac Sim's Python (``python -m unisim_isaacsim.worker``). The modules are private; this
package is the public surface, and importing it never imports the Isaac SDK. The test doubles (a
stand-in worker and SDK stubs) live in the test tree (``tests/isaacsim_testing``), not in the wheel."""

from ._hooks import CAPABILITIES, __version__, unisim_backend_spec, unisim_diagnostics
from ._options import IsaacSimOptions
from ._physx_solver import (
    PhysxSolverConfig,
    apply_collision_offsets,
    apply_max_depenetration_velocity,
    build_isaaclab_physx_cfg,
    read_engine_solver_values,
    solver_value_matches,
)
from ._runtime import find_runtime, require_runtime

__all__ = ["IsaacSimBackend", "IsaacSimOptions", "PhysxSolverConfig", "CAPABILITIES", "apply_collision_offsets",
           "apply_max_depenetration_velocity", "build_isaaclab_physx_cfg", "find_runtime", "read_engine_solver_values",
           "require_runtime", "solver_value_matches", "__version__", "unisim_backend_spec", "unisim_diagnostics"]


def __getattr__(name: str):
    # listing backends imports this package: the host module loads on first use only
    if name == "IsaacSimBackend":
        from ._backend import IsaacSimBackend

        return IsaacSimBackend
    raise AttributeError(f"module 'unisim_isaacsim' has no attribute {name!r}")
