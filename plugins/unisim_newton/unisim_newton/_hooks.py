"""Static facts about the Newton backend, importable without importing warp or newton."""

from __future__ import annotations

from unisim_core.contract.capabilities import Capability
from unisim_core.contract.hooks import bench_hooks, hookimpl
from unisim_core.contract.randomization import MODEL_TERMS
from unisim_core.contract.registry import BackendSpec
from unisim_core.plugin.plugin_support import installed_versions

from ._options import NewtonOptions

__version__ = "0.1.0"

CAPABILITIES = frozenset({
    Capability.CONTACTS, Capability.SENSORS, Capability.BODY_FORCE, Capability.BODY_TORQUE, Capability.PUSH,
    Capability.HEIGHT_SCAN, Capability.TERRAIN, Capability.SITE_JACOBIAN, Capability.MOCAP,
    Capability.PRE_STEP_CONTROL, Capability.PHYSICS_SNAPSHOT, Capability.CONTACT_FORCES,
    Capability.CONTACT_FILTERS, Capability.CONTACT_TORQUES, Capability.INIT_RANDOMIZATION,
    Capability.INTERVAL_RANDOMIZATION, Capability.RESET_RANDOMIZATION,
    Capability.VIDEO_CAPTURE, Capability.PLAYBACK,
})
#: every model term, as MuJoCo (on Newton's per-world model arrays, _randomization.py), and the state terms
STATE_TERMS = frozenset({"root_lin_vel_delta", "root_ang_vel_delta", "body_force", "body_torque"})
INIT_TERMS = frozenset(MODEL_TERMS)
INTERVAL_TERMS = frozenset(MODEL_TERMS | STATE_TERMS)
RESET_TERMS = frozenset(MODEL_TERMS | STATE_TERMS)


@hookimpl
def unisim_backend_spec() -> BackendSpec:
    return BackendSpec(
        name="newton", backend="unisim_newton._backend:NewtonBackend", version=__version__,
        options_cls=NewtonOptions, capabilities=CAPABILITIES, required_modules=("newton", "warp", "mujoco_warp"),
        description="Newton (newton 1.8, SolverMuJoCo) on a warp device: CUDA, or the CPU",
    )


@hookimpl
def unisim_diagnostics() -> dict[str, str]:
    return installed_versions("newton", "warp-lang", "mujoco-warp", "mujoco")


@hookimpl
def unisim_zoo_causes() -> dict[str, str]:
    from ._zoo_causes import CAUSES  # the documented causes of this engine's deviating zoo cells

    return CAUSES


unisim_raw_stepper, unisim_step_cost_probe = bench_hooks(__package__)
