"""Reading the applied PhysX solver settings back from SAPIEN's engine objects.

Every configured field of :class:`unisim_physx.PhysxSolverConfig` is read from the engine
(the system's scene config, every articulation, every link, every collision shape of every env)
and must be one value across all of them; :func:`read_solver_values` then compares each with the
request by :func:`unisim_physx.solver_value_matches` and fails closed.
"""

from __future__ import annotations

from typing import Any

from unisim_core.contract.errors import EngineError
from unisim_physx import PhysxSolverConfig, solver_value_matches

__all__ = ["SolverReadbackError", "engine_values", "read_solver_values"]


class SolverReadbackError(EngineError):
    """An engine readback does not prove the requested PhysX configuration was applied."""


def engine_values(systems: list, arts: list[list]) -> dict[str, list[Any]]:
    """Every value the engine holds for each readable field (one entry per system/articulation/link/shape)."""
    links = [link for env in arts for art in env for link in art.get_links()]
    shapes = [s for link in links for s in link.get_collision_shapes()]
    for system in systems:
        shapes += [s for body in system.get_rigid_static_components() for s in body.get_collision_shapes()]
    return {
        "solver_type": ["TGS" if s.config.enable_tgs else "PGS" for s in systems],
        "bounce_threshold_velocity": [float(s.config.bounce_threshold) for s in systems],
        "solver_position_iteration_count": [a.get_solver_position_iterations() for env in arts for a in env],
        "solver_velocity_iteration_count": [a.get_solver_velocity_iterations() for env in arts for a in env],
        "max_depenetration_velocity": [float(link.get_max_depenetration_velocity()) for link in links],
        "contact_offset": [float(s.get_contact_offset()) for s in shapes],
        "rest_offset": [float(s.get_rest_offset()) for s in shapes],
    }


def read_solver_values(systems: list, arts: list[list], config: PhysxSolverConfig) -> dict[str, dict[str, Any]]:
    """``{field: {"value": v, "source": "physx", "objects": k}}`` for each configured field, read
    from ``k`` engine objects; raises :class:`SolverReadbackError` when a value is not uniform or
    differs from the request beyond float32 storage, or when nothing holds the field."""
    values = engine_values(systems, arts)
    out = {}
    for field in config.configured_fields():
        got = values[field]
        if not got:
            raise SolverReadbackError(f"physx.{field}: no engine object holds it in this scene (no collision shape?)")
        if len(set(got)) != 1:
            raise SolverReadbackError(f"physx.{field}: the engine holds non-uniform values {sorted(set(got))}")
        requested = getattr(config, field)
        if not solver_value_matches(field, requested, got[0]):
            raise SolverReadbackError(f"physx.{field}: requested {requested!r}, the engine reads back {got[0]!r}")
        out[field] = {"value": got[0], "source": "physx", "objects": len(got)}
    return out
