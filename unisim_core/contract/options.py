"""Typed, frozen per-backend options. Unknown options are errors, never ignored."""

from __future__ import annotations

import difflib
import re
from typing import Any

import attrs
import numpy as np

from unisim_core.contract.errors import InvalidInputError

__all__ = ["BackendOptions", "build_options", "describe_options", "float_dtype", "positive_int",
           "optional_positive_int", "boolean", "DIVERGENCE_POLICIES", "optional_choice", "optional_device"]

_DTYPES = {np.dtype(np.float32): np.float32, np.dtype(np.float64): np.float64}


def float_dtype(value: Any) -> type:
    """attrs converter (``converter=float_dtype``, not a validator) for ``np_dtype``: ``np.float32`` or
    ``np.float64`` from a dtype, type or name."""
    try:
        dt = np.dtype(value)
    except TypeError:
        raise InvalidInputError(f"np_dtype: expected float32 or float64, got {value!r}") from None
    if dt not in _DTYPES:
        raise InvalidInputError(f"np_dtype: expected float32 or float64, got {dt}")
    return _DTYPES[dt]


def _optional_str(inst, attribute, value):
    if value is not None and (not isinstance(value, str) or not value):
        raise InvalidInputError(f"{attribute.name}: expected a non-empty str or None, got {value!r}")


def positive_int(inst, attribute, value) -> None:
    """attrs validator (``validator=positive_int``, not a converter): an int >= 1 (bools rejected)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise InvalidInputError(f"{attribute.name}: expected an int >= 1, got {value!r}")


def optional_positive_int(inst, attribute, value) -> None:
    """attrs validator (``validator=optional_positive_int``, not a converter): ``None`` or an int >= 1
    (bools rejected)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise InvalidInputError(f"{attribute.name}: expected an int >= 1 or None, got {value!r}")


def optional_choice(choices):
    """attrs validator factory: ``None`` or one of ``choices``."""
    def check(inst, attribute, value) -> None:
        if value is not None and value not in choices:
            raise InvalidInputError(f"{attribute.name}: expected None or one of {sorted(choices)}, got {value!r}")
    return check


_DEVICE = re.compile(r"cpu|cuda(:\d+)?")


def optional_device(inst, attribute, value) -> None:
    """attrs validator: ``None`` (the backend picks), ``"cpu"``, ``"cuda"`` or ``"cuda:N"``."""
    if value is not None and not (isinstance(value, str) and _DEVICE.fullmatch(value)):
        raise InvalidInputError(f"{attribute.name}: expected None, 'cpu', 'cuda' or 'cuda:N', got {value!r}")


_NOT_GIVEN = object()


def boolean(inst, attribute=_NOT_GIVEN, value=_NOT_GIVEN):
    """A real ``bool`` (``1``, ``"yes"``, ``None`` rejected). An attrs **validator**
    (``attrs.field(validator=boolean)``: the error names the option); also safe as a converter
    (``converter=boolean`` calls it with the value alone and gets it back; its error cannot name the
    option, so prefer the validator). The core's other helpers are one kind each: ``positive_int``
    and ``optional_positive_int`` are validators, ``float_dtype`` is a converter."""
    if attribute is _NOT_GIVEN:  # converter call: boolean(value)
        if not isinstance(inst, bool):
            raise InvalidInputError(f"boolean option: expected a bool, got {inst!r}")
        return inst
    if not isinstance(value, bool):
        raise InvalidInputError(f"{attribute.name}: expected a bool, got {value!r}")
    return None


#: Values of ``BackendOptions.divergence``.
DIVERGENCE_POLICIES = ("raise", "reset")


def _divergence(inst, attribute, value) -> None:
    if value not in DIVERGENCE_POLICIES:
        raise InvalidInputError(f"{attribute.name}: expected one of {list(DIVERGENCE_POLICIES)}, got {value!r}")


def _int_seed(inst, attribute, value):
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise InvalidInputError(f"{attribute.name}: expected a non-negative int, got {value!r}")


@attrs.frozen(kw_only=True)
class BackendOptions:
    """Options every backend accepts. Backends subclass this to add their own.

    - ``np_dtype``: float dtype of every returned array (float32 or float64).
    - ``base_name``: the base link; ``None`` picks the body that owns the free
      root joint, or the first body under the world for fixed-base models.
    - ``push_body_name``: body that ``push_robots`` pushes (default: the base).
    - ``seed``: seed of the backend's random generator (``push_robots``).
    - ``divergence``: what ``step`` does when the state of some envs becomes non-finite or
      leaves the engine's bound (``SimBackend.MAX_ABS_VALUE``): those envs are reset to the
      default state (default keyframe or ``qpos0``, zero velocity) and reported by
      ``get_diverged_envs``/``get_divergence_counts``; then ``"raise"`` (default) raises
      ``DivergenceError`` naming them, ``"reset"`` carries on (for RL loops).
    """

    np_dtype: type = attrs.field(default=np.float32, converter=float_dtype)
    base_name: str | None = attrs.field(default=None, validator=_optional_str)
    push_body_name: str | None = attrs.field(default=None, validator=_optional_str)
    seed: int = attrs.field(default=0, validator=_int_seed)
    divergence: str = attrs.field(default="raise", validator=_divergence)


def build_options(options_cls: type[BackendOptions], backend_name: str, kwargs: dict) -> BackendOptions:
    """Construct ``options_cls(**kwargs)``; an unknown key is a ``TypeError`` listing valid ones. A
    cross-backend option the class lacks (``portable_options``) is checked and accepted as a no-op."""
    from unisim_core.contract.portable_options import split_portable

    valid = [f.name for f in attrs.fields(options_cls)]
    kwargs, _ = split_portable(set(valid), kwargs)
    unknown = [k for k in kwargs if k not in valid]
    if unknown:
        hints = []
        for key in unknown:
            close = difflib.get_close_matches(key, valid, n=1)
            hints.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise TypeError(
            f"backend {backend_name!r} got unknown option(s) {', '.join(hints)}; "
            f"valid options: {', '.join(valid)}"
        )
    return options_cls(**kwargs)


def describe_options(options_cls: type[BackendOptions]) -> list[tuple[str, str, str]]:
    """``(name, type, default)`` rows of an options class, for ``unisim info``."""
    rows = []
    for f in attrs.fields(options_cls):
        default = f.default.factory() if isinstance(f.default, attrs.Factory) else f.default
        if isinstance(default, type):
            default = default.__name__
        typ = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        rows.append((f.name, str(typ), repr(default)))
    return rows
