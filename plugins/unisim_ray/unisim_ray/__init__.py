"""unisim-ray: one ``SimBackend`` sharded over Ray actors, each running any registered backend.

This module is the light plugin named by the ``unisim.backends`` entry point
``ray``: it implements the ``unisim_backend_spec`` and ``unisim_diagnostics``
hooks and never imports Ray (listing backends must not import an engine).
``RayBackend`` is loaded lazily on first access; Ray itself is imported when a
backend is constructed.

>>> from unisim_core import SceneCfg, create_backend
>>> env = create_backend("ray", SceneCfg("robot.xml"), 4096, 0.005,
...                      inner="mujoco", shards=2, inner_options={"threads": 1})
"""

from __future__ import annotations

import importlib.metadata
import os
from typing import TYPE_CHECKING, Any

from unisim_core.contract.hooks import hookimpl

from ._errors import (
    ShardCallError,
    ShardDiedError,
    ShardError,
    ShardFaultedError,
    ShardRecoveredWarning,
    ShardStartupError,
    ShardTimeoutError,
)
from ._layout import describe_layout, split_envs
from ._options import RayOptions
from ._pool import release_idle_actors

if TYPE_CHECKING:
    from ._backend import FORWARDED_CAPABILITIES, LOCAL_RAY_SYSTEM_CONFIG, RayBackend, ShardInfo

__version__ = "0.1.0"

__all__ = [
    "RayBackend",
    "RayOptions",
    "ShardInfo",
    "FORWARDED_CAPABILITIES",
    "LOCAL_RAY_SYSTEM_CONFIG",
    "ShardError",
    "ShardDiedError",
    "ShardTimeoutError",
    "ShardCallError",
    "ShardStartupError",
    "ShardFaultedError",
    "ShardRecoveredWarning",
    "split_envs",
    "release_idle_actors",
    "unisim_backend_spec",
    "unisim_diagnostics",
]

_LAZY = {"RayBackend", "ShardInfo", "FORWARDED_CAPABILITIES", "LOCAL_RAY_SYSTEM_CONFIG"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from . import _backend

        return getattr(_backend, name)
    raise AttributeError(f"module 'unisim_ray' has no attribute {name!r}")


def _forwarded() -> frozenset:
    """Capabilities offered when the inner backend declares them (``RayBackend.CAPABILITIES``): all but
    RENDER (an interactive window on a remote node) and DEVICE_ARRAYS (views of another process's
    memory); an instance offers VIDEO_CAPTURE and PLAYBACK only when the inner's frames are the core's
    default renderer's, drawn in the host from all envs' state (a shard's own renderer could draw only
    its own envs)."""
    from unisim_core.contract.capabilities import Capability

    return frozenset(Capability) - {Capability.RENDER, Capability.DEVICE_ARRAYS}


@hookimpl
def unisim_backend_spec():
    """Static facts of the ``ray`` backend (no Ray import)."""
    from unisim_core.contract.registry import BackendSpec

    return BackendSpec(
        name="ray",
        backend="unisim_ray._backend:RayBackend",
        version=__version__,
        contract_range=">=1.0,<2",
        options_cls=RayOptions,
        capabilities=_forwarded(),
        required_modules=("ray",),
        required_runtime="Ray (a local instance is started when no cluster address is given)",
        description="num_envs envs as one backend, run as K shards of an inner backend in Ray actors; "
                    "capabilities are the inner backend's minus render/device_arrays",
    )


@hookimpl
def unisim_diagnostics():
    """``unisim info ray``: Ray version, cluster address, default shard layout."""
    out: dict[str, str] = {}
    try:
        out["ray version"] = importlib.metadata.version("ray")
    except importlib.metadata.PackageNotFoundError:
        out["ray version"] = "not installed (pip install 'ray>=2.9')"
    addr = os.environ.get("RAY_ADDRESS")
    out["cluster"] = (f"RAY_ADDRESS={addr} (joined unless address= is given)" if addr
                      else "RAY_ADDRESS not set: address=None starts a local Ray instance (no dashboard)")
    default = RayOptions()
    out["default layout"] = (f"inner={default.inner!r}, shards={default.shards}: envs split contiguously, "
                             f"earlier shards take the remainder, e.g. 11 envs -> "
                             f"{describe_layout(11, default.shards)}; 4096 envs -> "
                             f"{describe_layout(4096, default.shards)}")
    out["capabilities"] = ("the inner backend's, minus render and device_arrays; video_capture/playback when the "
                           "inner draws with the core's renderer (frames drawn in the host from all shards' state)")
    out["inner backends"] = "any registered backend; it must be installed on every Ray node that hosts a shard"
    return out
