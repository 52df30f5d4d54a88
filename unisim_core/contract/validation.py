"""Input checks shared by every backend. Each raises before anything is written.

Errors name the argument, the expected shape or range, and what was received.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from unisim_core.contract.errors import InvalidInputError, InvalidTypeError

__all__ = ["as_plain_array", "check_float_array", "check_limit", "check_env_ids", "check_index_array", "check_names",
           "check_int"]

_NUMERIC_KINDS = "fiu"


def _describe(shape: Sequence[int | None]) -> str:
    return "(" + ", ".join("*" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def as_plain_array(name: str, value: object, expected: str) -> np.ndarray:
    """``value`` as a plain ``np.ndarray``, seeing through subclasses and array-likes: a masked
    array with masked values is refused (they would carry whatever lies beneath, NaN included),
    ``np.matrix`` and other subclasses become plain arrays, a ragged nested list is an
    ``InvalidInputError`` naming ``name`` (``expected`` describes the array wanted)."""
    if type(value) is np.ndarray:
        return value
    if isinstance(value, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(value)
        if mask.any():
            first = tuple(int(i) for i in np.argwhere(mask)[0])
            raise InvalidInputError(
                f"{name}: expected {expected}, got a masked array with {int(mask.sum())} masked value(s) (first at "
                f"index {first}); a masked value means nothing to a simulator: pass np.ma.filled(x, value)")
        value = value.data
    try:
        return np.asarray(value)
    except (ValueError, TypeError) as exc:
        raise InvalidInputError(f"{name}: expected {expected}, got a {type(value).__name__} numpy cannot read as "
                                f"one array ({exc})") from None


def check_float_array(
    name: str, value: object, shape: Sequence[int | None], dtype: np.dtype | type = np.float64,
    limit: float | None = None,
) -> np.ndarray:
    """Return ``value`` as a C-contiguous ``dtype`` array of ``shape`` (``None`` = any size).

    Rejects non-numeric dtype kinds (bool, complex, object, strings) with
    :class:`InvalidTypeError`, and wrong shapes, NaN/inf or (with ``limit``) values of
    magnitude above ``limit`` with :class:`InvalidInputError`.
    """
    if value is None:
        raise InvalidTypeError(f"{name}: expected a float array of shape {_describe(shape)}, got None")
    arr = as_plain_array(name, value, f"a float array of shape {_describe(shape)}")
    if arr.dtype.kind not in _NUMERIC_KINDS:
        raise InvalidTypeError(
            f"{name}: expected a float array of shape {_describe(shape)}, got dtype {arr.dtype}"
        )
    if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape)):
        raise InvalidInputError(
            f"{name}: expected shape {_describe(shape)}, got {tuple(arr.shape)}"
        )
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise InvalidInputError(f"{name}: expected finite values, got {arr[tuple(bad)]} at index {tuple(bad)}")
    check_limit(name, arr, limit)
    return np.ascontiguousarray(arr, dtype=dtype)


def check_limit(name: str, arr: np.ndarray, limit: float | None, what: str = "the engine's bound") -> None:
    """Reject finite values of magnitude above ``limit`` (``None``: no limit)."""
    if limit is not None and arr.size and np.abs(arr).max() > limit:
        bad = np.argwhere(np.abs(arr) > limit)[0]
        raise InvalidInputError(
            f"{name}: expected values with |x| <= {limit:g} ({what}), got {arr[tuple(bad)]:g} at index {tuple(bad)}")


def check_int(name: str, value: object, low: int, high: int | None = None) -> int:
    """Return ``value`` as an ``int`` in ``[low, high]``; bools and floats are rejected."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InvalidTypeError(f"{name}: expected an int, got {type(value).__name__} {value!r}")
    value = int(value)
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise InvalidInputError(f"{name}: expected an int {bound}, got {value}")
    return value


def check_index_array(
    name: str, value: object, count: int, *, what: str, unique: bool = False
) -> np.ndarray:
    """Return ``value`` as a 1-D ``int64`` array of ids in ``[0, count)``.

    ``what`` names the id space in messages (``"env"``, ``"body"``, …).
    """
    arr = as_plain_array(name, value, f"a 1-D integer array of {what} ids")
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.dtype.kind not in "iu" or arr.ndim != 1:
        if arr.size == 0 and arr.ndim == 1:
            return np.zeros(0, dtype=np.int64)
        raise InvalidTypeError(
            f"{name}: expected a 1-D integer array of {what} ids, got dtype {arr.dtype} shape {arr.shape}"
        )
    if arr.size and (arr.min() < 0 or arr.max() >= count):
        bad = arr[(arr < 0) | (arr >= count)][0]
        raise InvalidInputError(f"{name}: {what} id {int(bad)} out of range [0, {count})")
    if unique and np.unique(arr).size != arr.size:
        vals, counts = np.unique(arr, return_counts=True)
        raise InvalidInputError(f"{name}: duplicate {what} id {int(vals[counts > 1][0])}")
    return arr.astype(np.int64, copy=False)


def check_env_ids(name: str, value: object, num_envs: int) -> np.ndarray:
    """Return unique env ids in ``[0, num_envs)`` as ``int64`` (duplicates are rejected)."""
    return check_index_array(name, value, num_envs, what="env", unique=True)


def check_names(name: str, value: object) -> tuple[str, ...]:
    """Return ``value`` as a tuple of strings; a bare string is rejected (ambiguous)."""
    if isinstance(value, str) or not isinstance(value, Sequence | np.ndarray):
        raise InvalidTypeError(f"{name}: expected a sequence of names, got {type(value).__name__} {value!r}")
    names = tuple(value)
    for n in names:
        if not isinstance(n, str):
            raise InvalidTypeError(f"{name}: expected str names, got {type(n).__name__} {n!r}")
    return names
