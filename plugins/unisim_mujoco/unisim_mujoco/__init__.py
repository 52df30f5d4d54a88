"""UniSim backend for MuJoCo 4.x (``mujoco.batch.Batch``).

``MujocoBackend`` runs ``num_envs`` copies of an MJCF scene on MuJoCo's batch
thread pool behind the ``unisim_core.SimBackend`` contract.
"""

from __future__ import annotations

import os
import sys

# Offscreen rendering needs a GL platform chosen before mujoco is imported;
# on a headless Linux machine EGL is the one that works without a display.
if sys.platform.startswith("linux") and not os.environ.get("DISPLAY") and "MUJOCO_GL" not in os.environ:
    os.environ["MUJOCO_GL"] = "egl"

from .options import MujocoOptions  # noqa: E402
from .spec import (  # noqa: E402
    __version__,
    unisim_backend_spec,
    unisim_diagnostics,
    unisim_raw_stepper,
    unisim_step_cost_probe,
)

__all__ = ["MujocoBackend", "MujocoOptions", "__version__", "unisim_backend_spec", "unisim_diagnostics",
           "unisim_raw_stepper", "unisim_step_cost_probe"]


def __getattr__(name: str):
    # Importing the package (as the registry does to list backends) never imports MuJoCo.
    if name == "MujocoBackend":
        from .backend import MujocoBackend

        return MujocoBackend
    raise AttributeError(f"module 'unisim_mujoco' has no attribute {name!r}")
