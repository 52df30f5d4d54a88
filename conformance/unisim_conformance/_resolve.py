"""Turn ``--unisim-backend`` / ``--unisim-option`` into a backend factory.

Resolution goes through ``unisim_core.contract.registry`` (entry-point name, ``"module:Class"``
or a class).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["parse_options", "make_factory"]

Factory = Callable[..., Any]


def parse_options(items: Sequence[str] | None) -> dict[str, Any]:
    """``["k=v", ...]`` -> ``{k: literal_eval(v) or the str v}``. A malformed item is a ``ValueError``."""
    out: dict[str, Any] = {}
    for item in items or ():
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise ValueError(f"--unisim-option: expected KEY=VALUE with KEY an identifier, got {item!r}")
        try:
            value: Any = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            value = raw
        out[key] = value
    return out


def make_factory(spec: Any, options: dict[str, Any]) -> Factory:
    """``factory(scene, num_envs, sim_dt) -> SimBackend`` passing ``options`` to every backend."""
    from unisim_core.contract.factory import create_backend  # the kit's plugin loads in every pytest run: import late

    def factory(scene, num_envs, sim_dt):
        return create_backend(spec, scene, num_envs, sim_dt, **options)

    factory.spec = spec  # type: ignore[attr-defined]
    factory.options = dict(options)  # type: ignore[attr-defined]
    return factory
