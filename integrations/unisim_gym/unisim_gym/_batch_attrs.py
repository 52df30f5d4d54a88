"""``BatchAttrs``: gymnasium's ``get_attr``/``set_attr``/``call`` for an env that holds its envs as one batch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from unisim_core import InvalidInputError

__all__ = ["BatchAttrs"]


class BatchAttrs:
    """Per-env attribute access over one batched env and its ``task``.

    A name is looked up on the env first, then on ``self.task``. A value that is an array with a
    leading ``num_envs`` axis is per env (row ``i`` is env ``i``'s); any other value is shared by
    every env. Results are tuples of ``num_envs`` values, as gymnasium's ``SyncVectorEnv`` returns.
    """

    num_envs: int
    task: Any

    def _owner(self, name: str) -> Any:
        if not isinstance(name, str) or not name or name.startswith("_"):
            raise InvalidInputError(f"name: expected a public attribute name, got {name!r}")
        for owner in (self, self.task):
            if hasattr(owner, name):
                return owner
        raise AttributeError(f"{name!r}: neither {type(self).__name__} nor its task "
                             f"{type(self.task).__name__} has this attribute")

    def _per_env(self, value: Any) -> tuple[Any, ...]:
        if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == self.num_envs:
            return tuple(value)
        return (value,) * self.num_envs

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """``name``'s value for each env: the rows of a per-env array, else the shared value repeated."""
        return self._per_env(getattr(self._owner(name), name))

    def set_attr(self, name: str, values: Any) -> None:
        """Set ``name``: ``values`` is one value for every env, or a list/tuple of ``num_envs`` values.

        A per-env array attribute is written in place (one value: every row). For a shared attribute
        a list's values must all be equal (the envs share one task), else ``InvalidInputError``.
        Nothing is written on error.
        """
        owner = self._owner(name)
        current = getattr(owner, name)
        per_env = isinstance(current, np.ndarray) and current.ndim >= 1 and current.shape[0] == self.num_envs
        is_list = isinstance(values, list | tuple)
        if is_list and len(values) != self.num_envs:
            raise InvalidInputError(f"values: expected one value or a list of {self.num_envs} values for {name!r}, "
                                    f"got a list of {len(values)}")
        if per_env:  # written in place: the env's views of it stay valid
            rows = np.asarray(values if is_list else [values] * self.num_envs, dtype=current.dtype)
            if rows.shape != current.shape:
                raise InvalidInputError(f"values: expected {'rows' if is_list else 'a value'} of shape "
                                        f"{current.shape[1:]} for {name!r}, got shape {rows.shape[1:]}")
            current[...] = rows
            return
        if not is_list:
            setattr(owner, name, values)
            return
        if any(not _equal(v, values[0]) for v in values[1:]):
            raise InvalidInputError(f"values: {name!r} is shared by all {self.num_envs} envs (one task); "
                                    f"expected equal values, got {values!r}")
        setattr(owner, name, values[0])

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call method ``name`` once for the batch; the result is split per env like ``get_attr``.
        A non-callable attribute is returned as ``get_attr`` would."""
        value = getattr(self._owner(name), name)
        return self._per_env(value(*args, **kwargs) if callable(value) else value)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray | Sequence) and not isinstance(a, str):
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    return bool(a == b)
