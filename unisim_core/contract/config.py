"""Frozen, validated configuration and metadata records (attrs).

Every field is checked at construction; a bad value raises an error naming the field.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from unisim_core.contract.errors import InvalidInputError, InvalidTypeError

__all__ = [
    "SceneCfg",
    "TerrainCfg",
    "CameraCfg",
    "BackendRootStateLayout",
    "BackendTerrainSpawnData",
    "BackendPlayCapabilities",
    "BackendPlayRenderPlan",
    "DomainRandomizationCapabilities",
]


def _path_field(field: str) -> Callable[[Any], str | None]:
    """Converter of a path field: ``None``, or an absolute path (resolved against the working
    directory of the moment, so that a later ``os.chdir`` does not change which file it names)."""

    def convert(value: Any) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str | os.PathLike) or isinstance(os.fspath(value), bytes):
            raise InvalidTypeError(f"SceneCfg.{field}: expected a path (str or os.PathLike), "
                                   f"got {type(value).__name__} {value!r}")
        return os.path.abspath(os.fspath(value))

    return convert


def _real(value: Any) -> bool:
    """Whether ``value`` is a real number (Python's or numpy's; not a bool)."""
    return not isinstance(value, bool | np.bool_) and isinstance(value, int | float | np.integer | np.floating)


def _existing_file(inst, attribute, value):
    if value is None:
        return
    if not Path(value).is_file():
        raise InvalidInputError(f"SceneCfg.{attribute.name}: file not found: {value!r}")


def _positive(inst, attribute, value):
    if not _real(value) or not math.isfinite(value) or value <= 0:
        raise InvalidInputError(f"{type(inst).__name__}.{attribute.name}: expected a positive number, got {value!r}")


def _finite(inst, attribute, value):
    if not _real(value) or not math.isfinite(value):
        raise InvalidInputError(f"{type(inst).__name__}.{attribute.name}: expected a finite number, got {value!r}")


def _opt_name(inst, attribute, value):
    if value is not None and (not isinstance(value, str) or not value):
        raise InvalidInputError(
            f"{type(inst).__name__}.{attribute.name}: expected a non-empty str or None, got {value!r}"
        )


def _pos_int(inst, attribute, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError(f"{type(inst).__name__}.{attribute.name}: expected an int >= 1, got {value!r}")


@attrs.frozen(kw_only=True)
class TerrainCfg:
    """Height-field terrain: the hfield geom and the grid of spawn origins on it.

    Spawn origins form a ``rows × cols`` grid centred on the hfield geom,
    ``spacing`` metres apart (world frame).
    """

    hfield_geom: str = attrs.field(validator=_opt_name)
    rows: int = attrs.field(default=1, validator=_pos_int)
    cols: int = attrs.field(default=1, validator=_pos_int)
    spacing: float = attrs.field(default=1.0, validator=_positive)


@attrs.frozen
class SceneCfg:
    """What to simulate: an MJCF model file plus optional extras.

    - ``model_file``: path of the physics model (MJCF), must exist; kept absolute (a relative
      path is resolved against the working directory when the ``SceneCfg`` is made).
    - ``visual_model_file``: optional separate model used only for rendering.
    - ``default_keyframe``: keyframe name that ``get_default_qpos`` returns
      (``None``: the model's ``qpos0``).
    - ``terrain``: height-field terrain description, if the scene has one.
    """

    model_file: str = attrs.field(converter=_path_field("model_file"), validator=_existing_file)
    visual_model_file: str | None = attrs.field(
        default=None, kw_only=True, converter=_path_field("visual_model_file"), validator=_existing_file
    )
    default_keyframe: str | None = attrs.field(default=None, kw_only=True, validator=_opt_name)
    terrain: TerrainCfg | None = attrs.field(
        default=None, kw_only=True, validator=attrs.validators.optional(attrs.validators.instance_of(TerrainCfg))
    )

    def __attrs_post_init__(self) -> None:
        if self.model_file is None:
            raise InvalidInputError("SceneCfg.model_file: expected a path, got None")


def _vec3_or_none(value: Any) -> tuple[float, float, float] | None:
    if value is None:
        return None
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape != (3,) or not np.isfinite(arr).all():
        raise InvalidInputError(f"CameraCfg.lookat: expected 3 finite numbers, got {value!r}")
    return tuple(float(x) for x in arr)


@attrs.frozen(kw_only=True)
class CameraCfg:
    """A free orbit camera (MuJoCo ``mjvCamera`` semantics).

    ``distance`` m from ``lookat`` (world xyz; ``None`` = the tracked body or the
    scene centre), ``azimuth``/``elevation`` in degrees, ``track_body`` keeps the
    camera on a body. The field of view is the backend's (MuJoCo's 45 degrees vertical).
    """

    distance: float = attrs.field(default=3.0, validator=_positive)
    azimuth: float = attrs.field(default=135.0, validator=_finite)
    elevation: float = attrs.field(default=-20.0, validator=_finite)
    lookat: tuple[float, float, float] | None = attrs.field(default=None, converter=_vec3_or_none)
    track_body: str | None = attrs.field(default=None, validator=_opt_name)

    @classmethod
    def coerce(cls, value: CameraCfg | Mapping[str, Any] | None) -> CameraCfg:
        """Normalize ``camera_kwargs``; unknown keys fail closed naming them."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if not isinstance(value, Mapping):
            raise InvalidTypeError(f"camera_kwargs: expected CameraCfg or a mapping, got {type(value).__name__}")
        valid = {f.name for f in attrs.fields(cls)}
        unknown = sorted(set(value) - valid)
        if unknown:
            raise InvalidInputError(f"camera_kwargs: unknown key(s) {unknown}; valid keys: {sorted(valid)}")
        return cls(**value)


@attrs.frozen(kw_only=True)
class BackendRootStateLayout:
    """Columns of one floating root in the full ``qpos``/``qvel`` of ``set_state``.

    ``qpos[qpos_start:qpos_start+3]`` is the world position (m), the next four the
    wxyz quaternion; ``qvel[qvel_start:qvel_start+3]`` the world linear velocity
    (m/s), the next three the body-frame angular velocity (rad/s).
    """

    body_name: str
    body_id: int
    joint_name: str
    qpos_start: int
    qvel_start: int

    @property
    def pos_slice(self) -> slice:
        return slice(self.qpos_start, self.qpos_start + 3)

    @property
    def quat_slice(self) -> slice:
        return slice(self.qpos_start + 3, self.qpos_start + 7)

    @property
    def lin_vel_slice(self) -> slice:
        return slice(self.qvel_start, self.qvel_start + 3)

    @property
    def ang_vel_slice(self) -> slice:
        return slice(self.qvel_start + 3, self.qvel_start + 6)

    @property
    def qpos_indices(self) -> tuple[int, ...]:
        """The 7 qpos columns ``[x, y, z, qw, qx, qy, qz]``."""
        return tuple(range(self.qpos_start, self.qpos_start + 7))

    @property
    def qvel_indices(self) -> tuple[int, ...]:
        """The 6 qvel columns ``[world linear velocity, body-frame angular velocity]``."""
        return tuple(range(self.qvel_start, self.qvel_start + 6))


@attrs.frozen(kw_only=True)
class BackendTerrainSpawnData:
    """Terrain metadata resolved once on the cold path.

    ``origins``: ``(rows*cols, 3)`` world spawn points on the terrain surface (m);
    ``sample_height(xy)``: terrain height (m) at world ``xy`` of shape ``(..., 2)``;
    ``hfield_geom_id``: the terrain geom.
    """

    origins: np.ndarray
    sample_height: Callable[[np.ndarray], np.ndarray]
    hfield_geom_id: int
    size: tuple[float, float, float, float]  #: hfield (x half-size, y half-size, max height, base depth)


@attrs.frozen(kw_only=True)
class BackendPlayCapabilities:
    """What playback and rendering a backend offers."""

    supports_render: bool = False
    supports_video_capture: bool = False
    supports_playback: bool = False
    supports_debug_overlay: bool = False
    supports_interactive_debug_overlay: bool = False
    headless_only: bool = True


@attrs.frozen(kw_only=True)
class BackendPlayRenderPlan:
    """Resolved playback parameters: ``mode`` is ``"video"`` or ``"none"``."""

    mode: str
    num_steps: int
    output_video: str | None


@attrs.frozen(kw_only=True)
class DomainRandomizationCapabilities:
    """Randomization terms a backend honours, per phase (see ``randomization.TERM_SPECS``)."""

    init_terms: frozenset[str] = attrs.field(default=frozenset(), converter=frozenset)
    interval_terms: frozenset[str] = attrs.field(default=frozenset(), converter=frozenset)
    reset_terms: frozenset[str] = attrs.field(default=frozenset(), converter=frozenset)
