"""Pure helpers: how envs are split over shards and how env ids map to them."""

from __future__ import annotations

import numpy as np

__all__ = ["split_envs", "route", "describe_layout"]


def split_envs(num_envs: int, shards: int) -> list[tuple[int, int]]:
    """Contiguous ``[start, stop)`` ranges; earlier shards take the remainder.

    >>> split_envs(10, 3)
    [(0, 4), (4, 7), (7, 10)]
    """
    if shards < 1 or num_envs < shards:
        raise ValueError(f"cannot split {num_envs} envs over {shards} shards (need 1 <= shards <= num_envs)")
    base, rem = divmod(num_envs, shards)
    out, start = [], 0
    for k in range(shards):
        stop = start + base + (1 if k < rem else 0)
        out.append((start, stop))
        start = stop
    return out


def route(env_ids: np.ndarray, ranges: list[tuple[int, int]]) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """``[(shard, rows, local_ids)]`` for the shards owning some of ``env_ids``.

    ``rows`` indexes ``env_ids`` (and the matching value rows), ``local_ids`` are
    the shard-local env ids; the caller's order is kept within each shard.
    """
    stops = np.fromiter((b for _, b in ranges), dtype=np.int64, count=len(ranges))
    owner = np.searchsorted(stops, env_ids, side="right")
    out = []
    for k in np.unique(owner):
        rows = np.flatnonzero(owner == k)
        out.append((int(k), rows, env_ids[rows] - ranges[k][0]))
    return out


def describe_layout(num_envs: int, shards: int) -> str:
    """``"[0:4) [4:7) [7:10)"``."""
    return " ".join(f"[{a}:{b})" for a, b in split_envs(num_envs, shards))
