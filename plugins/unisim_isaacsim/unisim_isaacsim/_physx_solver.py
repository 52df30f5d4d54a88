"""Bounded PhysX solver configuration shared by the Isaac Sim host and worker.

The set itself (:class:`PhysxSolverConfig`, :func:`solver_value_matches`) lives in
``unisim_physx``, shared with ``unisim-sapien``, which tests it on a real PhysX; the stage
helpers are :mod:`unisim_isaacsim._usd_helpers`'s. Their names are importable from here and from
``unisim_isaacsim``, as the seed's ``physx_solver`` module offered them.

The host validates the overrides fail-closed and forwards them in the cold INIT payload; the
worker re-validates the payload (:meth:`PhysxSolverConfig.from_payload`), maps the scene-level
values onto IsaacLab's ``PhysxCfg`` (:func:`build_isaaclab_physx_cfg`) and authors the per-shape
and per-body values on the USD stage (:mod:`unisim_isaacsim._usd_helpers`). The host then compares
the worker's readback strictly against the request (:func:`solver_value_matches`).

No engine SDK is imported here, so the host interpreter stays SDK-free.
"""

from __future__ import annotations

from typing import Any

from unisim_physx import PhysxSolverConfig, solver_value_matches

from ._usd_helpers import apply_collision_offsets, apply_max_depenetration_velocity, read_engine_solver_values

__all__ = ["PhysxSolverConfig", "apply_collision_offsets", "apply_max_depenetration_velocity",
           "build_isaaclab_physx_cfg", "read_engine_solver_values", "solver_value_matches"]

#: ``PhysxCfg.solver_type`` of each :data:`unisim_physx.SOLVER_TYPES` name.
_SOLVER_TYPE = {"PGS": 0, "TGS": 1}


def build_isaaclab_physx_cfg(sim_utils: Any, config: PhysxSolverConfig) -> Any:
    """Map the scene-level values onto IsaacLab's ``sim_utils.PhysxCfg`` (worker-side only).

    PhysX clamps every actor's solver iteration counts to the scene's ``[min, max]`` range, so
    pinning both bounds to the requested count makes it the effective count for each actor.
    An unconfigured field keeps IsaacLab's default. ``contact_offset``, ``rest_offset`` and
    ``max_depenetration_velocity`` have no ``PhysxCfg`` field; they are authored per shape/body
    on the stage by :mod:`unisim_isaacsim._usd_helpers`.
    """
    if not isinstance(config, PhysxSolverConfig):
        raise TypeError(f"config must be a PhysxSolverConfig; got {type(config).__name__}")
    kwargs: dict[str, Any] = {}
    if config.solver_position_iteration_count is not None:
        kwargs["min_position_iteration_count"] = config.solver_position_iteration_count
        kwargs["max_position_iteration_count"] = config.solver_position_iteration_count
    if config.solver_velocity_iteration_count is not None:
        kwargs["min_velocity_iteration_count"] = config.solver_velocity_iteration_count
        kwargs["max_velocity_iteration_count"] = config.solver_velocity_iteration_count
    if config.solver_type is not None:
        kwargs["solver_type"] = _SOLVER_TYPE[config.solver_type]
    for name in (
        "bounce_threshold_velocity",
        "gpu_max_rigid_contact_count",
        "gpu_max_rigid_patch_count",
    ):
        value = getattr(config, name)
        if value is not None:
            kwargs[name] = value
    return sim_utils.PhysxCfg(**kwargs)
