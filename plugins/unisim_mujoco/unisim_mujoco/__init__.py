"""UniSim backend for MuJoCo 4.x (``mujoco.batch.Batch``).

``MujocoBackend`` runs ``num_envs`` copies of an MJCF scene on MuJoCo's batch
thread pool behind the ``unisim_core.SimBackend`` contract. The modules are private;
this package is the public surface (``import unisim_mujoco`` never imports MuJoCo: the
names that need it load on first use). Besides the backend it exports the MuJoCo model
helpers other MuJoCo-based plugins (``unisim-mjwarp``) build on.
"""

from __future__ import annotations

from ._gl import choose_platform

# Offscreen rendering needs a GL platform chosen before mujoco is imported: on a headless Linux
# machine, EGL where a device answers, else OSMesa (a MUJOCO_GL the user set is kept).
choose_platform()

from ._hooks import (  # noqa: E402
    CAPABILITIES,
    INIT_TERMS,
    INTERVAL_TERMS,
    RESET_TERMS,
    __version__,
    unisim_backend_spec,
    unisim_diagnostics,
    unisim_raw_stepper,
    unisim_renderer,
    unisim_step_cost_probe,
)
from ._mocap import MujocoMocapPoseBinding  # noqa: E402
from ._options import INTEGRATORS, MujocoOptions  # noqa: E402

#: Names that import MuJoCo, loaded on first access: name -> private module.
_LAZY = {
    "MujocoBackend": "_backend",
    "build_model_info": "_model_info", "load_model": "_model_info", "actuator_gains": "_model_info",
    "TERM_FIELDS": "_randomization", "SETCONST_TERMS": "_randomization", "check_term_targets": "_randomization",
}

__all__ = ["MujocoBackend", "MujocoOptions", "MujocoMocapPoseBinding", "INTEGRATORS", "CAPABILITIES", "INIT_TERMS",
           "INTERVAL_TERMS", "RESET_TERMS", "__version__", "unisim_backend_spec", "unisim_diagnostics",
           "unisim_raw_stepper", "unisim_renderer", "unisim_step_cost_probe", *sorted(set(_LAZY) - {"MujocoBackend"})]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'unisim_mujoco' has no attribute {name!r}")
