"""Static facts about the MuJoCo backend, importable without importing MuJoCo."""

from __future__ import annotations

from unisim_core.contract.capabilities import Capability
from unisim_core.contract.hooks import bench_hooks, hookimpl
from unisim_core.contract.randomization import MODEL_TERMS
from unisim_core.contract.registry import BackendSpec
from unisim_core.plugin.plugin_support import installed_versions

from ._options import MujocoOptions

__version__ = "0.1.0"

CAPABILITIES = frozenset({
    Capability.CONTACTS, Capability.SENSORS, Capability.BODY_FORCE, Capability.BODY_TORQUE,
    Capability.PUSH, Capability.SITE_JACOBIAN, Capability.HEIGHT_SCAN, Capability.TERRAIN,
    Capability.MOCAP, Capability.PRE_STEP_CONTROL, Capability.PHYSICS_SNAPSHOT,
    Capability.VIDEO_CAPTURE, Capability.PLAYBACK, Capability.INIT_RANDOMIZATION,
    Capability.INTERVAL_RANDOMIZATION, Capability.RESET_RANDOMIZATION, Capability.CONTACT_FORCES,
    Capability.CONTACT_FILTERS, Capability.CONTACT_TORQUES,
})
STATE_TERMS = frozenset({"root_lin_vel_delta", "root_ang_vel_delta", "body_force", "body_torque"})
INIT_TERMS = frozenset(MODEL_TERMS)
INTERVAL_TERMS = frozenset(MODEL_TERMS | STATE_TERMS)
RESET_TERMS = frozenset(MODEL_TERMS | STATE_TERMS)


@hookimpl
def unisim_backend_spec() -> BackendSpec:
    return BackendSpec(
        name="mujoco", backend="unisim_mujoco._backend:MujocoBackend", version=__version__,
        options_cls=MujocoOptions, capabilities=CAPABILITIES, required_modules=("mujoco",),
        description="MuJoCo 4.x on mujoco.batch.Batch (CPU thread pool)",
    )


@hookimpl
def unisim_diagnostics() -> dict[str, str]:
    import os

    return {**installed_versions("mujoco"), "MUJOCO_GL": os.environ.get("MUJOCO_GL", "(unset)"),
            "UNISIM_RENDER_QUALITY": os.environ.get("UNISIM_RENDER_QUALITY", "(unset: auto)")}


@hookimpl
def unisim_renderer():
    """MuJoCo's renderer of any backend's state (``_render.VideoRenderer``; MuJoCo loads on first use)."""

    def make(*args, **kwargs):
        from ._render import VideoRenderer

        return VideoRenderer(*args, **kwargs)

    return make


unisim_raw_stepper, unisim_step_cost_probe = bench_hooks(__package__)
