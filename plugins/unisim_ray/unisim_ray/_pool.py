"""Idle shard actors of this process, reused by the next ``ray`` backend with the same key
(``RayOptions.reuse_actors``).

Starting a shard actor (a Python process importing Ray, unisim and the inner engine) is most of what
building a ``ray`` backend costs (a 2-shard MuJoCo pendulum: 2.2-3.5 s on fresh actors, 0.04-0.06 s on
idle ones, 2 cores). A backend that closes normally with
healthy shards parks their actors here (each has closed its inner backend and removed its scene
files) instead of killing them; a later backend whose actors would be created with the same
:func:`pool_key` takes them and restarts them on its own scene, env range and inner backend.

- The key is the Ray session (GCS address, job and driver node: a new ``ray.init`` is another
  session, whose entries are forgotten, not killed — their actors went with the old session) and
  the actor's creation keywords (``num_cpus``, ``resources``, ``actor_options``: ``runtime_env``,
  ``num_gpus``, ...). Actors in a placement group, or whose keywords are not plain data, are never
  pooled (:func:`pool_key` is ``None``).
- Bounded: at most :data:`MAX_IDLE_PER_KEY` idle actors per key and :data:`MAX_IDLE` in all; the
  oldest beyond either bound is killed.
- Idle actors keep their Ray reservation (``actor_num_cpus``, ``shard_resources``): before a
  backend creates fresh actors, idle actors of other keys that reserve resources are killed, so
  they never keep this process's own shards from being placed.
- Killed when Ray is shut down by the plugin (at exit, ``testing.local_cluster``), at interpreter
  exit, and by :func:`release_idle_actors`. A forked child never touches the parent's pool: it
  starts with an empty one and keeps the parent's handles alive, unused, for good (dropping a Ray
  handle in a child would call into the parent's Ray core worker).
"""

from __future__ import annotations

import atexit
import collections
import ctypes
import logging
import os
import sys
import threading
from collections.abc import Hashable, Iterable
from typing import Any

__all__ = ["MAX_IDLE_PER_KEY", "MAX_IDLE", "pool_key", "session_key", "take", "park", "evict_reserving",
           "release_idle_actors", "idle_count", "forget_session"]

log = logging.getLogger("unisim_ray")

#: Idle actors kept per key (a second backend of the same layout takes them all for up to 4 shards).
MAX_IDLE_PER_KEY = 4
#: Idle actors kept in all (oldest key's first out).
MAX_IDLE = 8

_lock = threading.Lock()
#: key -> idle actor handles, oldest first; keys in the order they were last parked into
_idle: collections.OrderedDict[Hashable, collections.deque] = collections.OrderedDict()
_owner_pid = os.getpid()
_atexit_registered = False
#: Pools inherited by forked children: referenced for good (never freed, never used).
_inherited: list[Any] = []


def _freeze(value: Any) -> Hashable:
    """A hashable, order-independent form of plain data; ``TypeError`` for anything else."""
    if value is None or isinstance(value, bool | int | float | str | bytes):
        return value
    if isinstance(value, dict):
        return ("dict", tuple(sorted(((str(k), _freeze(v)) for k, v in value.items()), key=repr)))
    if isinstance(value, list | tuple):
        return ("seq", tuple(_freeze(v) for v in value))
    raise TypeError(type(value).__name__)


def session_key(ray: Any) -> Hashable | None:
    """What tells this process's Ray connections apart; ``None`` when not connected or unknown."""
    if not ray.is_initialized():
        return None
    try:
        ctx = ray.get_runtime_context()
        return (ctx.gcs_address, ctx.get_job_id(), ctx.get_node_id())
    except Exception:  # noqa: BLE001 - Ray client mode or an API change: no pooling
        return None


def pool_key(ray: Any, actor_kwargs: dict[str, Any]) -> Hashable | None:
    """The key of actors created with ``actor_kwargs`` in the current session; ``None``: not poolable
    (placement group, keywords that are not plain data, no session)."""
    if "scheduling_strategy" in actor_kwargs and not isinstance(actor_kwargs["scheduling_strategy"], str):
        return None  # a placement group or node affinity: bound to one backend's reservation
    if "placement_group" in actor_kwargs:
        return None
    session = session_key(ray)
    if session is None:
        return None
    try:
        return (session, _freeze(actor_kwargs))
    except TypeError as exc:
        log.debug("unisim_ray: shard actors not pooled: actor keyword of type %s is not plain data", exc)
        return None


def _reserves(key: Hashable) -> bool:
    """Whether actors of ``key`` hold a Ray reservation (CPUs, GPUs, memory or custom resources)."""
    _, (_, items) = key
    kw = dict(items)
    resources = kw.get("resources")
    return bool(kw.get("num_cpus") or kw.get("num_gpus") or kw.get("memory") or (resources and resources[1]))


def _mine() -> bool:
    return os.getpid() == _owner_pid


def _prune(ray: Any) -> list[Any]:
    """Forget entries of another session (their actors went with it); ``[]`` or, when the pool is
    over :data:`MAX_IDLE`, the oldest actors to kill. Called with ``_lock`` held."""
    current = session_key(ray)
    for key in [k for k in _idle if k[0] != current]:
        del _idle[key]
    extra = []
    while sum(len(q) for q in _idle.values()) > MAX_IDLE:
        key, queue = next(iter(_idle.items()))
        extra.append(queue.popleft())
        if not queue:
            del _idle[key]
    return extra


def _kill(ray: Any, actors: Iterable[Any]) -> None:
    for act in actors:
        try:
            ray.kill(act, no_restart=True)
        except Exception:  # noqa: S110 - already dead or Ray gone
            pass


def take(ray: Any, key: Hashable | None) -> Any | None:
    """An idle actor of ``key`` (the oldest parked), or ``None``."""
    if key is None or not _mine():
        return None
    with _lock:
        _prune(ray)
        queue = _idle.get(key)
        if not queue:
            return None
        actor = queue.popleft()
        if not queue:
            del _idle[key]
        return actor


def park(ray: Any, key: Hashable | None, actors: list[Any]) -> list[Any]:
    """Keep ``actors`` (healthy, inner backends closed) for reuse; return those that do not fit
    (beyond :data:`MAX_IDLE_PER_KEY`) for the caller to kill. Older idle actors pushed out by
    :data:`MAX_IDLE` are killed here."""
    if key is None or not _mine() or key[0] != session_key(ray):
        return list(actors)
    global _atexit_registered
    with _lock:
        queue = _idle.setdefault(key, collections.deque())
        _idle.move_to_end(key)
        room = max(0, MAX_IDLE_PER_KEY - len(queue))
        queue.extend(actors[:room])
        rest = list(actors[room:])
        if not queue:
            del _idle[key]
        evicted = _prune(ray)
        if not _atexit_registered:
            # registered after ray.init's own shutdown: atexit runs it first, while Ray is up
            atexit.register(_at_exit)
            _atexit_registered = True
    _kill(ray, evicted)
    return rest


def evict_reserving(ray: Any, key: Hashable | None) -> int:
    """Kill idle actors of other keys that hold a Ray reservation (before creating fresh actors,
    which they could keep from being placed); how many were killed."""
    if not _mine():
        return 0
    with _lock:
        victims = []
        for k in [k for k in _idle if k != key and _reserves(k)]:
            victims += list(_idle.pop(k))
    _kill(ray, victims)
    return len(victims)


def idle_count(key: Hashable | None = None) -> int:
    """Idle actors held for ``key`` (``None``: all keys)."""
    if not _mine():
        return 0
    with _lock:
        return sum(len(q) for k, q in _idle.items() if key is None or k == key)


def release_idle_actors() -> int:
    """Kill every idle shard actor this process keeps for reuse; how many. Ray is not imported."""
    if not _mine():
        return 0
    with _lock:
        entries = list(_idle.items())
        _idle.clear()
    ray = sys.modules.get("ray")
    if ray is None or not entries:
        return 0
    current = session_key(ray)
    victims = [a for key, q in entries if key[0] == current for a in q]
    _kill(ray, victims)
    return len(victims)


def forget_session() -> None:
    """Drop every entry without killing (the session they belong to is gone)."""
    if _mine():
        with _lock:
            _idle.clear()


def _at_exit() -> None:
    if _mine():
        release_idle_actors()


def _after_fork_in_child() -> None:
    global _idle, _owner_pid, _atexit_registered, _lock
    _lock = threading.Lock()  # another thread may have held the parent's at the fork
    old = _idle
    _inherited.append(old)
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(old))  # the parent's handles: never freed here
    _idle = collections.OrderedDict()
    _owner_pid = os.getpid()
    if _atexit_registered:
        atexit.unregister(_at_exit)
        _atexit_registered = False


os.register_at_fork(after_in_child=_after_fork_in_child)
