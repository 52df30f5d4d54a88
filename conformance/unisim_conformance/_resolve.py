"""Turn ``--unisim-backend`` / ``--unisim-option`` into a backend factory.

Resolution goes through ``unisim_core.registry`` (entry-point name, ``"module:Class"``
or a class). A minimal local resolver is kept for cores that predate the registry.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["parse_options", "make_factory", "backend_class"]

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


def _local_class(spec: Any) -> type:
    from unisim_core import SimBackend

    if isinstance(spec, type):
        cls = spec
    elif isinstance(spec, str) and ":" in spec:
        mod, _, attr = spec.partition(":")
        obj: Any = importlib.import_module(mod)
        for part in attr.split("."):
            obj = getattr(obj, part)
        cls = obj
    elif isinstance(spec, str):
        from importlib.metadata import entry_points

        eps = [ep for ep in entry_points(group="unisim.backends") if ep.name == spec]
        if not eps:
            raise LookupError(f"no backend named {spec!r} in entry-point group 'unisim.backends'")
        cls = eps[0].load()
        if not isinstance(cls, type):  # a module: take its SimBackend subclass
            cands = [v for v in vars(cls).values() if isinstance(v, type) and issubclass(v, SimBackend)
                     and v is not SimBackend and v.__module__.startswith(cls.__name__)]
            if len(cands) != 1:
                raise LookupError(f"backend module {cls.__name__} does not expose exactly one SimBackend")
            cls = cands[0]
    else:
        raise TypeError(f"backend: expected a name, 'module:Class' or a class, got {spec!r}")
    if not (isinstance(cls, type) and issubclass(cls, SimBackend)):
        raise TypeError(f"backend {spec!r} resolved to {cls!r}, which is not a SimBackend subclass")
    return cls


def backend_class(spec: Any) -> type:
    """The backend class for a spec (registry first, local resolver otherwise)."""
    try:
        from unisim_core.registry import get_backend_class  # type: ignore[import-not-found]
    except ImportError:
        return _local_class(spec)
    return get_backend_class(spec)


def make_factory(spec: Any, options: dict[str, Any]) -> Factory:
    """``factory(scene, num_envs, sim_dt) -> SimBackend`` passing ``options`` to every backend."""
    try:
        from unisim_core.registry import create_backend  # type: ignore[import-not-found]
    except ImportError:
        create_backend = None

    def factory(scene, num_envs, sim_dt):
        if create_backend is not None:
            return create_backend(spec, scene, num_envs, sim_dt, **options)
        return _local_class(spec)(scene, num_envs, sim_dt, **options)

    factory.spec = spec  # type: ignore[attr-defined]
    factory.options = dict(options)  # type: ignore[attr-defined]
    return factory
