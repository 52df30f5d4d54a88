"""Static facts about the MuJoCo Warp backend, importable without importing warp or MuJoCo."""

from __future__ import annotations

from unisim_core.contract.capabilities import Capability
from unisim_core.contract.hooks import bench_hooks, hookimpl
from unisim_core.contract.registry import BackendSpec
from unisim_core.plugin.plugin_support import installed_versions
from unisim_mujoco import INIT_TERMS, INTERVAL_TERMS, RESET_TERMS  # every model term, as MuJoCo

from ._options import MjwarpOptions

__version__ = "0.1.0"

CAPABILITIES = frozenset({
    Capability.CONTACTS, Capability.SENSORS, Capability.BODY_FORCE, Capability.BODY_TORQUE,
    Capability.PUSH, Capability.SITE_JACOBIAN, Capability.MOCAP, Capability.HEIGHT_SCAN, Capability.TERRAIN,
    Capability.PRE_STEP_CONTROL,
    Capability.PHYSICS_SNAPSHOT, Capability.INIT_RANDOMIZATION, Capability.INTERVAL_RANDOMIZATION,
    Capability.RESET_RANDOMIZATION, Capability.DEVICE_ARRAYS, Capability.CONTACT_FORCES,
    Capability.CONTACT_FILTERS, Capability.CONTACT_TORQUES,
    Capability.VIDEO_CAPTURE, Capability.PLAYBACK,
})
__all__ = ["CAPABILITIES", "INIT_TERMS", "INTERVAL_TERMS", "RESET_TERMS", "unisim_backend_spec", "unisim_diagnostics",
           "unisim_raw_stepper", "unisim_step_cost_probe",
           "unisim_zoo_causes"]


@hookimpl
def unisim_backend_spec() -> BackendSpec:
    return BackendSpec(
        name="mjwarp", backend="unisim_mjwarp._backend:MjwarpBackend", version=__version__,
        options_cls=MjwarpOptions, capabilities=CAPABILITIES, required_modules=("mujoco_warp", "warp", "mujoco"),
        description="MuJoCo Warp (mujoco-warp 4.x) on a warp device: CUDA, or the CPU",
    )


@hookimpl
def unisim_diagnostics() -> dict[str, str]:
    return installed_versions("mujoco-warp", "warp-lang", "mujoco")


@hookimpl
def unisim_zoo_causes() -> dict[str, str]:
    from ._zoo_causes import CAUSES  # the documented causes of this engine's deviating zoo cells

    return CAUSES


unisim_raw_stepper, unisim_step_cost_probe = bench_hooks(__package__)
