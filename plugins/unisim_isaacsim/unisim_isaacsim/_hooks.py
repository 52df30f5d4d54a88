"""Static facts about the Isaac Sim backend (light plugin module: never imports the Isaac SDK)."""

from __future__ import annotations

from unisim_core.contract.capabilities import Capability
from unisim_core.contract.hooks import hookimpl
from unisim_core.contract.registry import BackendSpec

from ._options import IsaacSimOptions
from ._runtime import HOME_ENV, PYTHON_ENV, find_runtime

__version__ = "0.1.0"

REQUIRED_RUNTIME = "Isaac Sim 5.1 / Isaac Lab 2.3"
#: What the backend implements: in the worker PhysX contacts (net forces, forces against chosen bodies
#: and their moments), per-substep control (one round trip per substep), MJCF sensors from link states,
#: external wrenches and pushes, physics snapshots (tier "state"), per-env randomization of mass
#: properties, drives and gravity, height fields as static triangle meshes, mocap bodies as kinematic
#: rigid bodies; in the host the site Jacobian, height scans and terrain spawn data (the core's, from
#: the MJCF and the worker's body poses), frame capture and playback (drawn in the host from the
#: worker's state; through a replicator camera with ``enable_cameras=True``).
CAPABILITIES = frozenset({Capability.CONTACTS, Capability.CONTACT_FORCES, Capability.CONTACT_FILTERS,
                          Capability.CONTACT_TORQUES, Capability.MOCAP, Capability.PRE_STEP_CONTROL,
                          Capability.VIDEO_CAPTURE, Capability.PLAYBACK, Capability.SENSORS, Capability.BODY_FORCE,
                          Capability.BODY_TORQUE, Capability.PUSH, Capability.PHYSICS_SNAPSHOT,
                          Capability.INIT_RANDOMIZATION, Capability.INTERVAL_RANDOMIZATION,
                          Capability.RESET_RANDOMIZATION, Capability.SITE_JACOBIAN, Capability.HEIGHT_SCAN,
                          Capability.TERRAIN})


def runtime_reason() -> str | None:
    """``None`` when an Isaac Sim runtime is found, else why not and how to point at one."""
    if find_runtime() is not None:
        return None
    return (f"Isaac Sim runtime not found: set {PYTHON_ENV} to Isaac Sim's python.sh or {HOME_ENV} to its "
            f"installation root (default roots: ~/isaacsim, /isaac-sim, ~/.local/share/ov/pkg/isaac-sim-*)")


@hookimpl
def unisim_backend_spec() -> BackendSpec:
    return BackendSpec(
        name="isaacsim", backend="unisim_isaacsim._backend:IsaacSimBackend", version=__version__,
        options_cls=IsaacSimOptions, capabilities=CAPABILITIES, required_runtime=REQUIRED_RUNTIME,
        runtime_check=runtime_reason,
        description="Isaac Sim 5.1 / Isaac Lab 2.3 (PhysX, GPU) in a worker process",
    )


@hookimpl
def unisim_diagnostics() -> dict[str, str]:
    import os

    runtime = find_runtime()
    return {
        "isaacsim runtime": f"{runtime.python} (from {runtime.source})" if runtime else "not found",
        PYTHON_ENV: os.environ.get(PYTHON_ENV, "(unset)"),
        HOME_ENV: os.environ.get(HOME_ENV, "(unset)"),
    }
