"""Bounded PhysX solver configuration shared by the Isaac Sim host and worker.

The host validates the overrides fail-closed and forwards them in the cold INIT payload; the
worker re-validates the payload (:meth:`PhysxSolverConfig.from_payload`), maps the scene-level
values onto IsaacLab's ``PhysxCfg`` (:func:`build_isaaclab_physx_cfg`) and authors the per-shape
and per-body values on the USD stage (:mod:`unisim_isaacsim._usd_helpers`). The host then compares
the worker's readback strictly against the request (:func:`solver_value_matches`).

No engine SDK is imported here, so the host interpreter stays SDK-free.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

_UINT32_MAX = 2**32 - 1
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _int_field(low: int, high: int) -> Any:
    """Optional field: ``None`` or a real ``int`` (never ``bool``) within ``[low, high]``."""

    def check(_instance: Any, attribute: attrs.Attribute, value: Any) -> None:
        if value is None:
            return
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(
                f"{attribute.name} must be an int in [{low}, {high}]; "
                f"got {value!r} ({type(value).__name__})"
            )
        if not low <= value <= high:
            raise ValueError(f"{attribute.name} must be in [{low}, {high}]; got {value!r}")

    return attrs.field(default=None, validator=check)


def _float_field(*, positive: bool) -> Any:
    """Optional field: ``None`` or a finite, float32-representable int/float, ``> 0``/``>= 0``."""
    bound = "> 0" if positive else ">= 0"

    def check(_instance: Any, attribute: attrs.Attribute, value: Any) -> None:
        if value is None:
            return
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(
                f"{attribute.name} must be a finite number {bound}; "
                f"got {value!r} ({type(value).__name__})"
            )
        # NaN fails every comparison, so it is rejected together with inf and overflow.
        in_range = (value > 0 if positive else value >= 0) and value <= _FLOAT32_MAX
        if not in_range:
            raise ValueError(
                f"{attribute.name} must be a finite number {bound} and <= float32 max "
                f"{_FLOAT32_MAX:.6g}; got {value!r}"
            )

    return attrs.field(default=None, validator=check)


@attrs.frozen
class PhysxSolverConfig:
    """The bounded, validated PhysX solver override set; ``None`` keeps the engine default.

    Bounds are PhysX's own: iteration counts are stored in a byte (position 1-255, velocity
    0-255), the GPU contact/patch buffer capacities are ``PxU32`` and must be non-zero, and
    ``rest_offset`` must stay strictly below ``contact_offset``. A ``rest_offset`` alone is
    rejected because the engine's automatic contact offset is per-shape and unknown here, so
    the relationship could not be checked.
    """

    solver_position_iteration_count: int | None = _int_field(1, 255)
    solver_velocity_iteration_count: int | None = _int_field(0, 255)
    bounce_threshold_velocity: float | None = _float_field(positive=False)
    contact_offset: float | None = _float_field(positive=True)
    rest_offset: float | None = _float_field(positive=False)
    max_depenetration_velocity: float | None = _float_field(positive=True)
    gpu_max_rigid_contact_count: int | None = _int_field(1, _UINT32_MAX)
    gpu_max_rigid_patch_count: int | None = _int_field(1, _UINT32_MAX)

    def __attrs_post_init__(self) -> None:
        if self.rest_offset is None:
            return
        if self.contact_offset is None:
            raise ValueError(
                f"rest_offset requires contact_offset to be set (rest_offset < contact_offset); "
                f"got rest_offset={self.rest_offset!r} with contact_offset=None"
            )
        if not self.rest_offset < self.contact_offset:
            raise ValueError(
                f"rest_offset must be < contact_offset ({self.contact_offset!r}); "
                f"got {self.rest_offset!r}"
            )

    def configured_fields(self) -> tuple[str, ...]:
        """Names of the fields that override an engine default, in declaration order."""
        return tuple(a.name for a in attrs.fields(type(self)) if getattr(self, a.name) is not None)

    def to_payload(self) -> dict[str, Any]:
        """Plain ``dict`` of the configured fields only (the INIT payload copy)."""
        return {name: getattr(self, name) for name in self.configured_fields()}

    @classmethod
    def from_payload(cls, payload: Any) -> PhysxSolverConfig:
        """Re-validate the worker-side INIT copy; non-dict payloads and unknown keys fail closed."""
        if not isinstance(payload, dict):
            raise TypeError(
                f"PhysX solver payload must be a dict; got {type(payload).__name__}: {payload!r}"
            )
        known = {a.name for a in attrs.fields(cls)}
        unknown = sorted(repr(key) for key in payload if key not in known)
        if unknown:
            raise TypeError(
                f"unknown PhysX solver field(s) {', '.join(unknown)}; "
                f"valid fields: {', '.join(sorted(known))}"
            )
        return cls(**payload)


_INT_FIELDS = frozenset(
    {
        "solver_position_iteration_count",
        "solver_velocity_iteration_count",
        "gpu_max_rigid_contact_count",
        "gpu_max_rigid_patch_count",
    }
)
_FIELDS = frozenset(a.name for a in attrs.fields(PhysxSolverConfig))


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_float32_number(value: Any) -> bool:
    if not (_is_int(value) or isinstance(value, (float, np.floating))):
        return False
    return bool(abs(value) <= _FLOAT32_MAX)  # NaN fails the comparison, like inf


def solver_value_matches(field: str, requested: Any, reported: Any) -> bool:
    """Strict host comparison; only the engine's float32 storage is tolerated.

    Integer fields match only equal integers. Float fields match when both values round to
    the same float32 (PhysX and USD store them as float32). A ``bool``, ``None``, string or
    non-finite readback never matches.
    """
    if field not in _FIELDS:
        raise ValueError(
            f"unknown PhysX solver field {field!r}; valid: {', '.join(sorted(_FIELDS))}"
        )
    if field in _INT_FIELDS:
        return _is_int(requested) and _is_int(reported) and int(requested) == int(reported)
    if not (_is_float32_number(requested) and _is_float32_number(reported)):
        return False
    return bool(np.float32(requested) == np.float32(reported))


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
    for name in (
        "bounce_threshold_velocity",
        "gpu_max_rigid_contact_count",
        "gpu_max_rigid_patch_count",
    ):
        value = getattr(config, name)
        if value is not None:
            kwargs[name] = value
    return sim_utils.PhysxCfg(**kwargs)
