"""``create_backend``: a backend from its registry name, class or ``"module:Class"`` path, in this
process or hosted in a worker process (``isolation="subprocess"``, the worker layer of
:mod:`unisim_core.plugin.worker`)."""

from __future__ import annotations

from typing import Any

from unisim_core.contract.backend import SimBackend
from unisim_core.contract.options import build_options
from unisim_core.contract.registry import get_backend_class

__all__ = ["ISOLATION_MODES", "create_backend"]

ISOLATION_MODES = ("inprocess", "subprocess")


def create_backend(backend: str | type[SimBackend], scene, num_envs: int, sim_dt: float, *,
                   isolation: str = "inprocess", **options: Any) -> SimBackend:
    """Construct a backend. ``isolation="subprocess"`` hosts it in a worker process; there the
    option ``call_timeout_s`` (default 60 s) is how long a call waits for the worker's answer
    before the backend faults with ``WorkerTimeoutError`` (Ctrl-C lands within about 1 s whatever
    it is).

    Unknown options raise ``TypeError`` listing the valid ones before anything is built.
    """
    if isolation not in ISOLATION_MODES:
        raise TypeError(f"isolation: expected one of {ISOLATION_MODES}, got {isolation!r}")
    cls = get_backend_class(backend)
    call_timeout_s = options.pop("call_timeout_s", None) if isolation == "subprocess" else None
    build_options(cls.options_cls, cls.name or cls.__name__, options)
    if isolation == "subprocess":
        from unisim_core.plugin.worker.backend import WorkerBackend

        target = backend if isinstance(backend, str) else f"{cls.__module__}:{cls.__qualname__}"
        return WorkerBackend(scene, num_envs, sim_dt, target=target, target_cls=cls, call_timeout_s=call_timeout_s,
                             **options)
    return cls(scene, num_envs, sim_dt, **options)
