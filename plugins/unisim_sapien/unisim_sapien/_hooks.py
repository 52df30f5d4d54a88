"""Static facts about the SAPIEN backend, importable without importing sapien."""

from __future__ import annotations

from unisim_core.capabilities import Capability
from unisim_core.hooks import bench_hooks, hookimpl
from unisim_core.plugin_support import installed_versions
from unisim_core.registry import BackendSpec

from ._options import SapienOptions

__version__ = "0.1.0"

CAPABILITIES = frozenset({
    Capability.CONTACTS, Capability.SENSORS, Capability.BODY_FORCE, Capability.BODY_TORQUE, Capability.PUSH,
    Capability.PRE_STEP_CONTROL, Capability.PHYSICS_SNAPSHOT, Capability.CONTACT_FORCES, Capability.CONTACT_TORQUES,
})
__all__ = ["CAPABILITIES", "unisim_backend_spec", "unisim_diagnostics", "unisim_raw_stepper", "unisim_step_cost_probe"]


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


unisim_raw_stepper, unisim_step_cost_probe = bench_hooks(__package__)
