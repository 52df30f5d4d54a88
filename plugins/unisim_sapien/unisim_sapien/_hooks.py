"""Static facts about the SAPIEN backend, importable without importing sapien."""

from __future__ import annotations

from unisim_core.contract.capabilities import Capability
from unisim_core.contract.hooks import bench_hooks, hookimpl
from unisim_core.contract.randomization import MODEL_TERMS
from unisim_core.contract.registry import BackendSpec
from unisim_core.plugin.plugin_support import installed_versions

from ._options import SapienOptions

__version__ = "0.1.0"

CAPABILITIES = frozenset({
    Capability.CONTACTS, Capability.SENSORS, Capability.BODY_FORCE, Capability.BODY_TORQUE, Capability.PUSH,
    Capability.PRE_STEP_CONTROL, Capability.PHYSICS_SNAPSHOT, Capability.CONTACT_FORCES, Capability.CONTACT_TORQUES,
    Capability.CONTACT_FILTERS, Capability.INIT_RANDOMIZATION, Capability.INTERVAL_RANDOMIZATION,
    Capability.RESET_RANDOMIZATION, Capability.HEIGHT_SCAN, Capability.TERRAIN, Capability.SITE_JACOBIAN,
    Capability.VIDEO_CAPTURE, Capability.PLAYBACK,
    Capability.MOCAP,
})
#: Model terms PhysX cannot randomize per env, with the reason (refused by name at the call).
REFUSED_TERMS = {
    "geom_size": "a PhysX shape keeps the geometry it was cooked with in SAPIEN 3.0.3 (PxShape::setGeometry is not "
                 "exposed, shapes cannot be detached from a built body), so a geom's size is fixed per env",
    "geom_solref": "PhysX contacts are rigid constraints: MuJoCo's soft-contact reference (solref: time constant and "
                   "damping ratio) has no PhysX counterpart",
    "geom_solimp": "PhysX contacts are rigid constraints: MuJoCo's soft-contact impedance (solimp) has no PhysX "
                   "counterpart",
}
_MODEL = frozenset(MODEL_TERMS - set(REFUSED_TERMS))
_STATE = frozenset({"root_lin_vel_delta", "root_ang_vel_delta", "body_force", "body_torque"})
INIT_TERMS = _MODEL
INTERVAL_TERMS = _MODEL | _STATE
RESET_TERMS = _MODEL | _STATE
__all__ = ["CAPABILITIES", "INIT_TERMS", "INTERVAL_TERMS", "REFUSED_TERMS", "RESET_TERMS", "unisim_backend_spec",
           "unisim_diagnostics", "unisim_raw_stepper", "unisim_step_cost_probe",
           "unisim_zoo_causes"]


@hookimpl
def unisim_backend_spec() -> BackendSpec:
    return BackendSpec(
        name="sapien", backend="unisim_sapien._backend:SapienBackend", version=__version__,
        options_cls=SapienOptions, capabilities=CAPABILITIES, required_modules=("sapien",),
        description="SAPIEN 3 (PhysX 5 on the CPU, PhysxCpuSystem): one scene per env, MJCF built as articulations",
    )


@hookimpl
def unisim_diagnostics() -> dict[str, str]:
    return installed_versions("sapien")


@hookimpl
def unisim_zoo_causes() -> dict[str, str]:
    from ._zoo_causes import CAUSES  # the documented causes of this engine's deviating zoo cells

    return CAUSES


unisim_raw_stepper, unisim_step_cost_probe = bench_hooks(__package__)
