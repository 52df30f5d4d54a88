"""Static facts about the Genesis backend, importable without importing genesis or torch."""

from __future__ import annotations

from unisim_core.contract.capabilities import Capability
from unisim_core.contract.hooks import bench_hooks, hookimpl
from unisim_core.contract.registry import BackendSpec
from unisim_core.plugin.plugin_support import installed_versions

from ._options import GenesisOptions

__version__ = "0.1.0"

CAPABILITIES = frozenset({
    Capability.CONTACTS, Capability.SENSORS, Capability.BODY_FORCE, Capability.BODY_TORQUE, Capability.PUSH,
    Capability.PRE_STEP_CONTROL, Capability.CONTACT_FORCES, Capability.CONTACT_FILTERS, Capability.CONTACT_TORQUES,
    Capability.SITE_JACOBIAN, Capability.PHYSICS_SNAPSHOT, Capability.INIT_RANDOMIZATION,
    Capability.INTERVAL_RANDOMIZATION, Capability.RESET_RANDOMIZATION, Capability.HEIGHT_SCAN, Capability.TERRAIN,
    Capability.MOCAP,
    Capability.VIDEO_CAPTURE, Capability.PLAYBACK,
})
#: Randomization terms per phase: the model terms Genesis holds per env (geom sizes and solver parameters are
#: refused by name, ``_randomization.REFUSED_TERMS``), plus root velocity kicks and body wrenches as MuJoCo.
_MODEL_TERMS = frozenset({"body_mass", "body_inertia", "body_com_offset", "geom_friction", "dof_damping",
                          "dof_armature", "dof_frictionloss", "actuator_kp", "actuator_kd", "gravity"})
_STATE_TERMS = frozenset({"root_lin_vel_delta", "root_ang_vel_delta", "body_force", "body_torque"})
INIT_TERMS = _MODEL_TERMS
INTERVAL_TERMS = _MODEL_TERMS | _STATE_TERMS
RESET_TERMS = _MODEL_TERMS | _STATE_TERMS
__all__ = ["CAPABILITIES", "INIT_TERMS", "INTERVAL_TERMS", "RESET_TERMS", "unisim_backend_spec", "unisim_diagnostics",
           "unisim_raw_stepper", "unisim_step_cost_probe", "unisim_zoo_causes"]


@hookimpl
def unisim_backend_spec() -> BackendSpec:
    return BackendSpec(
        name="genesis", backend="unisim_genesis._backend:GenesisBackend", version=__version__,
        options_cls=GenesisOptions, capabilities=CAPABILITIES, required_modules=("genesis", "torch"),
        description="Genesis (genesis-world 1.4.x) rigid solver, batched envs on its CPU or CUDA backend",
    )


@hookimpl
def unisim_diagnostics() -> dict[str, str]:
    return installed_versions("genesis-world", "torch", "quadrants")


@hookimpl
def unisim_zoo_causes() -> dict[str, str]:
    from ._zoo_causes import CAUSES  # the documented causes of this engine's deviating zoo cells

    return CAUSES


unisim_raw_stepper, unisim_step_cost_probe = bench_hooks(__package__)
