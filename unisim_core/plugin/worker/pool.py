"""Idle worker processes kept for the next backend of the same kind (``isolation="subprocess"``).

Starting a worker costs an interpreter, its imports and the engine's (about 0.4 s of CPU for
MuJoCo); a backend's ``close()`` therefore hands a healthy worker (no fault, its backend closed
by the ``close`` op) to this pool, and the next ``WorkerClient`` with the same launch (argv,
environment, working directory, frame cap) sends it a new INIT instead of starting a process.
Only workers whose factory serves several INITs are offered (``WorkerLaunch.reuse``: the hosted
backends of :mod:`unisim_core.plugin.worker.hosted`).

- At most ``UNISIM_WORKER_POOL`` idle workers per launch (default 2; ``0`` turns reuse off); one
  more is stopped instead of kept.
- An idle worker is stopped after ``IDLE_S`` seconds (checked whenever the pool is used), at
  interpreter exit, or by :func:`drain` (the kit's session guard drains before it counts
  leftover workers).
- A forked child never uses or stops its parent's idle workers.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Hashable, Mapping, Sequence
from time import monotonic
from typing import Any

__all__ = ["IDLE_S", "POOL_ENV", "drain", "idle_count", "launch_key", "max_idle", "park", "take"]

POOL_ENV = "UNISIM_WORKER_POOL"
DEFAULT_MAX_IDLE = 2
#: Seconds an idle worker is kept.
IDLE_S = 60.0

_lock = threading.Lock()
#: launch key -> [(parked at, worker)], oldest first
_idle: dict[Hashable, list[tuple[float, Any]]] = {}
#: idle workers inherited by a forked child: the parent's, never stopped from the child
_inherited: list[Any] = []


def max_idle() -> int:
    """Idle workers kept per launch: ``UNISIM_WORKER_POOL`` (a non-negative integer), default 2."""
    text = os.environ.get(POOL_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_IDLE
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{POOL_ENV}: expected a non-negative integer (0 turns worker reuse off), "
                         f"got {text!r}") from None
    if value < 0:
        raise ValueError(f"{POOL_ENV}: expected a non-negative integer (0 turns worker reuse off), got {value}")
    return value


def launch_key(argv: Sequence[str], env: Mapping[str, str] | None, cwd: str | None, max_frame: int) -> Hashable:
    """What makes two workers interchangeable: the same program, arguments, working directory and
    frame cap, and the same environment when one is given. A worker that inherited this process's
    environment keeps the one it started with (variables set since, e.g. pytest's per-test
    ``PYTEST_CURRENT_TEST``, do not reach it: set ``UNISIM_WORKER_POOL=0`` where that matters)."""
    return (tuple(argv), None if env is None else tuple(sorted(env.items())), cwd, max_frame)


def take(key: Hashable) -> Any | None:
    """The most recently parked live worker of ``key`` (removed from the pool), or ``None``."""
    with _lock:
        stale = _expire()
        workers = _idle.get(key, [])
        found = None
        while workers and found is None:
            _, worker = workers.pop()
            if worker.popen.poll() is None:
                found = worker
            else:
                stale.append(worker)
    _stop(stale)
    return found


def park(key: Hashable, worker: Any) -> bool:
    """Keep ``worker`` (alive, idle, its backend closed) for reuse; ``False`` when the pool is off or
    full for ``key`` (the caller stops it)."""
    limit = max_idle()
    with _lock:
        stale = _expire()
        workers = _idle.setdefault(key, [])
        kept = limit > 0 and len(workers) < limit and worker.popen.poll() is None
        if kept:
            workers.append((monotonic(), worker))
    _stop(stale)
    return kept


def idle_count() -> int:
    """Idle workers held now (all launches)."""
    with _lock:
        return sum(len(w) for w in _idle.values())


def drain() -> None:
    """Stop every idle worker (graceful shutdown, reaped)."""
    with _lock:
        workers = [w for entries in _idle.values() for _, w in entries]
        _idle.clear()
    _stop(workers)


def _expire() -> list[Any]:
    """Under the lock: remove and return the workers idle for longer than ``IDLE_S``."""
    now, stale = monotonic(), []
    for key in list(_idle):
        keep = [(t, w) for t, w in _idle[key] if now - t <= IDLE_S]
        stale += [w for t, w in _idle[key] if now - t > IDLE_S]
        if keep:
            _idle[key] = keep
        else:
            del _idle[key]
    return stale


def _stop(workers: list[Any]) -> None:
    for worker in workers:
        try:
            worker.stop()
        except Exception:  # noqa: BLE001, S110 - a worker that will not stop must not break the caller
            pass


def _after_fork_in_child() -> None:
    global _lock
    _lock = threading.Lock()  # the parent's may have been held by another thread at the fork
    _inherited.extend(w for entries in _idle.values() for _, w in entries)
    _idle.clear()


atexit.register(drain)
os.register_at_fork(after_in_child=_after_fork_in_child)
