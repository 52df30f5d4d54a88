"""UniLab's backend knobs (``EnvCfg`` via ``env_backend_kwargs``) as UniSim options for one engine.

UniLab's ``EnvCfg`` holds every engine's knobs at once (``motrix_max_iterations``, ``mjwarp_nconmax``,
``newton_device``, ``isaacsim_*``, ...). The knobs of the selected engine become its UniSim options
(:data:`ENGINE_KNOBS`); cross-backend ones (``nconmax``, ``device``, ...) reach every engine and are
declared no-ops where it does not need them (``unisim_core.contract.portable_options``); the knobs of other
engines are not options of this backend and stay in UniLab's config. ``None`` means unset.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["ENGINE_KNOBS", "CONSUMED_HERE", "unisim_options"]

#: UniLab knob -> (UniSim engine, UniSim option). A knob of another engine than the selected one is skipped.
ENGINE_KNOBS: Mapping[str, tuple[str, str]] = {
    "motrix_max_iterations": ("motrix", "max_iterations"),
    "mjwarp_nconmax": ("mjwarp", "nconmax"),
    "mjwarp_njmax": ("mjwarp", "njmax"),
    "newton_nconmax": ("newton", "nconmax"),
    "newton_njmax": ("newton", "njmax"),
    "newton_device": ("newton", "device"),
    "newton_use_cuda_graph": ("newton", "graph_capture"),
    "genesis_constraint_solver": ("genesis", "constraint_solver"),
    "genesis_solver_iterations": ("genesis", "iterations"),
}
#: Knobs UniLab's env layer handles itself (or this integration does) rather than an engine.
CONSUMED_HERE = {
    "base_name": "UniSim's base_name option",
    "body_state_required": "UniSim reads every body's state from its getters; nothing to inject",
    "tracked_body_names": "as body_state_required",
    "cpu_ids": "UniLab confines the process to these CPUs before the backend is built (apply_cpu_confinement)",
}


def unisim_options(engine: str, unilab_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The UniSim options of ``engine`` from UniLab's backend kwargs."""
    options: dict[str, Any] = {}
    for key, value in unilab_kwargs.items():
        if key == "base_name" and value is not None:
            options["base_name"] = value
        knob = ENGINE_KNOBS.get(key)
        if knob is not None and knob[0] == engine and value is not None:
            options[knob[1]] = value
    if engine == "newton" and options.get("graph_capture") and options.get("device", "cpu") == "cpu":
        options.pop("graph_capture")  # UniLab's default True targets CUDA; warp's CPU device has no graphs
    return options
