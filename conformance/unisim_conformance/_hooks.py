"""The kit as a scene source (entry point group ``unisim.scenes``): its built-in scenes reach
``unisim_core.contract.registry.conformance_scenes`` (``unisim compare --scene pendulum``) without the core
importing the kit."""

from __future__ import annotations

from unisim_core.contract.hooks import hookimpl

__all__ = ["unisim_conformance_scenes"]


@hookimpl
def unisim_conformance_scenes() -> dict[str, str]:
    from . import _BUILTIN

    return {name: str(path) for name, (path, _dt) in _BUILTIN.items()}
