"""STUB ``configclass``-like keyword configs: unknown fields raise ``TypeError`` as a dataclass does."""

from __future__ import annotations

from typing import Any

#: ``PhysxCfg`` fields the worker sets (Isaac Lab 2.3.2 ``isaaclab/sim/simulation_cfg.py`` and 3.0.0
#: ``isaaclab_physx/physics/physx_manager_cfg.py`` share them), with their defaults.
PHYSX_FIELDS = {"min_position_iteration_count": 1, "max_position_iteration_count": 255,
                "min_velocity_iteration_count": 0, "max_velocity_iteration_count": 255,
                "bounce_threshold_velocity": 0.5, "gpu_max_rigid_contact_count": 2**23,
                "gpu_max_rigid_patch_count": 5 * 2**15, "solver_type": 1}
MISSING = object()


def cfg_class(name: str, fields: dict[str, Any], methods: dict[str, Any] | None = None) -> type:
    """A config class taking exactly ``fields`` as keywords (``MISSING``: required)."""

    def __init__(self, **kwargs: Any) -> None:
        unknown = sorted(set(kwargs) - set(fields))
        if unknown:
            raise TypeError(f"{name}.__init__() got unexpected keyword argument(s) {unknown}")
        for key, default in fields.items():
            value = kwargs.get(key, default)
            if value is MISSING:
                raise TypeError(f"{name}: missing required field {key!r}")
            setattr(self, key, value)

    return type(name, (), {"__init__": __init__, **(methods or {})})
