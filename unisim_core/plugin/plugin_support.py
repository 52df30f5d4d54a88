"""What backend plugins would otherwise each write again (the core still imports no engine).

- :func:`load_mjcf_or_refuse`: read the scene with :mod:`unisim_core.plugin.mjcf_lite`; a feature outside
  its subset refuses the scene by that feature's name.
- :class:`SnapshotMemory`: the engine-side extras of recent snapshot rows (what a contract row does
  not carry: solver warm start, float32 engine state), so a restore continues bit for bit.
- :func:`installed_versions`: the ``unisim_diagnostics`` hook's ``{distribution: version}``.
- :func:`warp_device` and :class:`WarpKernelNotice`: the ``device`` option of a warp-based backend,
  and the one-line note that warp may compile its kernels; both take the caller's ``warp`` module.
"""

from __future__ import annotations

import importlib.metadata as md
import sys
import time
from collections import OrderedDict
from collections.abc import Collection, Iterable, Mapping
from typing import Any

import numpy as np

from unisim_core.contract.errors import InvalidInputError, UnsupportedCapabilityError
from unisim_core.plugin.mjcf_lite import LiteModel, MjcfLiteError, load_mjcf

__all__ = ["SNAPSHOT_MEMORY", "SnapshotMemory", "WarpKernelNotice", "installed_versions", "load_mjcf_or_refuse",
           "warp_device"]

#: Snapshots per env row whose engine-side extras are remembered.
SNAPSHOT_MEMORY = 8


def load_mjcf_or_refuse(path: str, backend: str, *, accept: Collection[str] = (),
                        reasons: Mapping[str, str] | None = None) -> LiteModel:
    """:func:`~unisim_core.plugin.mjcf_lite.load_mjcf` of ``path``; a scene feature outside the reader's
    subset (and not in ``accept``) raises ``UnsupportedCapabilityError(backend, feature)``, a
    malformed file the reader's own :class:`MjcfLiteError`. ``reasons``: ``{feature: why the backend's
    engine cannot honour it}``; the refusal of such a feature ends with ``"; <backend>: <reason>"``."""
    try:
        return load_mjcf(path, accept=accept)
    except MjcfLiteError as exc:
        if exc.feature is None:
            raise
        why = (reasons or {}).get(exc.feature)
        message = f"{exc}; {backend}: {why}" if why else str(exc)
        raise UnsupportedCapabilityError(backend, exc.feature, message) from None


class SnapshotMemory:
    """Extras of the last ``depth * num_envs`` snapshot rows, keyed by the row's bytes (oldest dropped).

    ``remember(rows, extras)`` after taking a snapshot (``rows (num_envs, width)``, one extra per
    row); ``recall(row)`` on restore: that row's extra, ``None`` for a row this backend did not take.
    """

    def __init__(self, num_envs: int, depth: int = SNAPSHOT_MEMORY) -> None:
        self._capacity = depth * num_envs
        self._rows: OrderedDict[bytes, Any] = OrderedDict()

    def __len__(self) -> int:
        return len(self._rows)

    def remember(self, rows: np.ndarray, extras: Iterable[Any]) -> None:
        for row, extra in zip(rows, extras):
            key = row.tobytes()
            self._rows[key] = extra
            self._rows.move_to_end(key)
        while len(self._rows) > self._capacity:
            self._rows.popitem(last=False)

    def recall(self, row: np.ndarray) -> Any | None:
        return self._rows.get(row.tobytes())


def installed_versions(*distributions: str) -> dict[str, str]:
    """``{distribution: installed version or "not installed"}``, in the order given."""
    out = {}
    for dist in distributions:
        try:
            out[dist] = md.version(dist)
        except md.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def warp_device(wp: Any, name: str | None) -> str:
    """The warp device (``"cpu"``, ``"cuda:0"``, ...) for a ``device`` option ``name`` (``None``: CUDA
    when warp sees one, else the CPU); ``wp`` is the ``warp`` module. An unknown device raises
    ``InvalidInputError`` listing the devices warp sees."""
    if name is None:
        name = "cuda:0" if wp.get_cuda_device_count() > 0 else "cpu"
    try:
        return str(wp.get_device(name))
    except (RuntimeError, ValueError) as exc:
        seen = ["cpu"] + [f"cuda:{i}" for i in range(wp.get_cuda_device_count())]
        raise InvalidInputError(f"device: {name!r} is not available ({exc}); warp sees {seen}") from None


class WarpKernelNotice:
    """``with WarpKernelNotice(wp, "unisim-x", device, "X kernels"):`` around a backend's first kernel
    launches. The first time per (plugin, device) in a process it says on stderr that warp may compile
    (then caches) the kernels, and on success how long loading took; ``first`` tells whether it is."""

    _loaded: set[tuple[str, str]] = set()

    def __init__(self, wp: Any, plugin: str, device: str, kernels: str) -> None:
        self._wp, self._plugin, self._device, self._kernels = wp, plugin, device, kernels
        self.first = (plugin, device) not in self._loaded

    def __enter__(self) -> WarpKernelNotice:
        if self.first:
            print(f"{self._plugin}: loading {self._kernels} on {self._device!r}; on first use on this machine warp "
                  f"compiles them (up to a few minutes on a CPU), then caches them in "
                  f"{self._wp.config.kernel_cache_dir} (progress from warp follows)", file=sys.stderr, flush=True)
            self._start = time.perf_counter()
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if self.first and exc_type is None:
            self._wp.synchronize_device(self._device)
            self._loaded.add((self._plugin, self._device))
            print(f"{self._plugin}: kernels ready on {self._device!r} after {time.perf_counter() - self._start:.1f} s",
                  file=sys.stderr, flush=True)
