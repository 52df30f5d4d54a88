"""Genesis' process-wide initialization (``gs.init``) and the one-time kernel compilation notice."""

from __future__ import annotations

import sys
import time

from unisim_core.contract.errors import InvalidInputError

from ._lazy import genesis as gs
from ._lazy import torch
from ._options import GenesisOptions

__all__ = ["ensure_initialized", "announce_build"]

#: ``(device, precision)`` this process initialized Genesis with.
_INITIALIZED: tuple[str, str] | None = None
#: Scene shapes whose kernels this process has compiled or loaded (the notice is printed once each).
_BUILT: set[tuple[str, str]] = set()


def resolve_device(name: str | None) -> str:
    """The device for the ``device`` option (``None``: ``"cuda"`` when torch sees one, else ``"cpu"``)."""
    if name is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda"):
        count = torch.cuda.device_count()
        index = int(name.partition(":")[2] or 0)
        if index >= count:
            raise InvalidInputError(f"device: {name!r} is not available; torch sees {count} CUDA device(s)")
    return name


def ensure_initialized(opts: GenesisOptions) -> tuple[str, str]:
    """Initialize Genesis for ``opts`` once per process; return ``(device, precision)``.

    Raises ``InvalidInputError`` when Genesis already runs with another device or precision
    (``gs.init`` is process-wide: one device and float width per process).
    """
    global _INITIALIZED
    device = resolve_device(opts.device)
    precision = opts.precision or ("64" if device == "cpu" else "32")
    if _INITIALIZED is not None:
        if _INITIALIZED != (device, precision):
            raise InvalidInputError(
                f"device/precision: Genesis already runs on device {_INITIALIZED[0]!r} with precision "
                f"{_INITIALIZED[1]!r} in this process (gs.init is process-wide), got device {device!r}, "
                f"precision {precision!r}; use one setting per process (e.g. isolation='subprocess')")
        return _INITIALIZED
    if getattr(gs, "_initialized", False):
        raise InvalidInputError("Genesis was initialized outside unisim-genesis in this process; the backend needs "
                                "to choose the device and precision itself (call gs.destroy() first)")
    if device.startswith("cuda:"):
        torch.cuda.set_device(int(device.partition(":")[2]))
    backend = gs.cpu if device == "cpu" else gs.cuda
    gs.init(backend=backend, precision=precision, logging_level=opts.log_level)
    _INITIALIZED = (device, precision)
    return _INITIALIZED


def announce_build(build, key: tuple[str, str]) -> None:
    """Run ``build()`` (``scene.build``); the first build of a scene shape says that Genesis
    compiles its kernels (minutes on a CPU the first time on a machine, then cached)."""
    if key in _BUILT:
        build()
        return
    print(f"unisim-genesis: building {key[0]!r} on {key[1]!r}; on first use on this machine Genesis compiles its "
          "kernels (about 2-4 min on a CPU), later runs load them from its cache (~/.cache/quadrants)",
          file=sys.stderr, flush=True)
    start = time.perf_counter()
    build()
    _BUILT.add(key)
    print(f"unisim-genesis: kernels ready after {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
