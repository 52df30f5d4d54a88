"""Typed options of the Isaac Sim backend (SDK-free)."""

from __future__ import annotations

import math
import re
from typing import Any

import attrs

from unisim_core.contract.errors import InvalidInputError
from unisim_core.contract.options import BackendOptions, boolean
from unisim_physx import physx_config_option

from ._physx_solver import PhysxSolverConfig

__all__ = ["IsaacSimOptions"]

_DEVICE = re.compile(r"^(cpu|cuda|cuda:\d+)$")


def _to_physx(value: Any) -> PhysxSolverConfig | None:
    return None if value is None else physx_config_option(value)


def _device(inst, attribute, value) -> None:
    if not isinstance(value, str) or not _DEVICE.match(value):
        raise InvalidInputError(f"{attribute.name}: expected 'cuda', 'cuda:N' or 'cpu', got {value!r}")


def _positive(inst, attribute, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise InvalidInputError(f"{attribute.name}: expected a finite number > 0, got {value!r}")


def _non_negative(inst, attribute, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise InvalidInputError(f"{attribute.name}: expected a finite number >= 0 (m), got {value!r}")


@attrs.frozen(kw_only=True)
class IsaacSimOptions(BackendOptions):
    """Options of the ``isaacsim`` backend.

    - ``physx``: PhysX solver overrides (:class:`PhysxSolverConfig` or a dict of its fields; ``None``
      keeps Isaac Lab's defaults). Validated here, re-validated by the worker, read back strictly.
    - ``device``: simulation device (``"cuda:0"``; ``"cpu"`` runs PhysX on the CPU).
    - ``headless``: launch Isaac Sim without a window.
    - ``enable_cameras``: launch with rendering enabled so ``capture_video_frame`` works (slower start).
    - ``init_timeout_s``: INIT deadline (app launch, MJCF import, cloning), re-armed by worker progress.
    - ``call_timeout_s``: deadline of every later call.
    - ``env_spacing``: distance between cloned environments on Isaac's grid, m (positions are
      reported relative to each environment's origin).
    """

    physx: PhysxSolverConfig | None = attrs.field(default=None, converter=_to_physx)
    device: str = attrs.field(default="cuda:0", validator=_device)
    headless: bool = attrs.field(default=True, validator=boolean)
    enable_cameras: bool = attrs.field(default=False, validator=boolean)
    init_timeout_s: float = attrs.field(default=600.0, validator=_positive)
    call_timeout_s: float = attrs.field(default=60.0, validator=_positive)
    env_spacing: float = attrs.field(default=2.0, validator=_non_negative)
