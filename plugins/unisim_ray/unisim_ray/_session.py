"""The Ray session of the ``ray`` backend: Ray imported on first use, a local instance started
when no cluster is given (kept for the process), the shard actor class, and actor teardown (parked
in the idle pool of ``_pool``, or killed)."""

from __future__ import annotations

import atexit
import logging
import math
import os
import threading
import time
from typing import Any

from unisim_core.errors import OptionalDependencyError

from . import _pool as pool
from ._options import RayOptions
from ._pool import release_idle_actors
from ._shard import ShardActor

__all__ = ["LOCAL_RAY_SYSTEM_CONFIG", "KILL_CONFIRM_S", "PARK_CONFIRM_S", "import_ray", "remote_shard_cls",
           "ensure_ray", "shutdown_ray", "park_actors", "kill_actors"]

log = logging.getLogger("unisim_ray")

#: Seconds close() waits for Ray to confirm that killed actors are gone.
KILL_CONFIRM_S = 5.0
#: Seconds close() waits for shards to close their inner backends before parking them.
PARK_CONFIRM_S = 5.0
_started_by: int | None = None  # pid of the process whose ensure_ray started or joined Ray
_ray_mod: Any = None
_actor_cls: Any = None
_session_lock = threading.Lock()
#: Ray system config used when this plugin starts a local Ray instance: a shard's state reply
#: (hundreds of KB for hundreds of envs) is returned inline to the driver instead of through
#: the shared-memory object store (Ray's default cut-off is 100 KB), which saves a few ms of
#: object-store bookkeeping per step; and workers run at niceness 0 instead of Ray's default 15,
#: because here the shard actors are the workload (at 15 they yield the CPU to every other
#: process, costing ~10 % at N = 512 on 2 cores). Pass the same to your own ``ray.init``.
LOCAL_RAY_SYSTEM_CONFIG = {"max_direct_call_object_size": 8 * 2**20, "worker_niceness": 0}


def import_ray() -> Any:
    global _ray_mod
    if _ray_mod is None:
        try:
            import ray
        except ImportError as exc:
            raise OptionalDependencyError(
                f"the 'ray' backend needs Ray: pip install 'ray>=2.9' ({exc})"
            ) from None
        _ray_mod = ray
    return _ray_mod


def remote_shard_cls(ray: Any) -> Any:
    global _actor_cls
    if _actor_cls is None:
        _actor_cls = ray.remote(ShardActor)
    return _actor_cls


def ensure_ray(ray: Any, opts: RayOptions, num_envs: int) -> None:
    """Join the running Ray instance, or start one for this process.

    A Ray instance this plugin starts lives as long as the process (shut down at exit), like
    any ``ray.init``: closing a backend releases its actors, and the next backend reuses the
    instance instead of paying Ray's start-up again.
    """
    global _started_by
    with _session_lock:
        if ray.is_initialized():
            return
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                  "logging_level": logging.WARNING}
        if opts.address is None and not os.environ.get("RAY_ADDRESS"):
            need = math.ceil(min(opts.shards, num_envs) * (opts.actor_num_cpus or 0))
            # address="local": a new instance even when another Ray runs on this machine (a bare
            # ray.init() would join a cluster some other process started with `ray start`)
            kwargs.update(address="local", num_cpus=max(os.cpu_count() or 1, need),
                          _system_config=dict(LOCAL_RAY_SYSTEM_CONFIG))
            where = "a local Ray instance"
        else:
            kwargs["address"] = opts.address
            where = f"the Ray cluster at {opts.address or os.environ.get('RAY_ADDRESS')}"
        kwargs.update(opts.ray_init_options)
        log.info("unisim_ray: starting %s", where)
        ray.init(**kwargs)
        _started_by = os.getpid()
        atexit.register(shutdown_ray)


def shutdown_ray() -> None:
    """The exit handler of a Ray instance this plugin started (or joined): kill the idle pooled shard
    actors, then ``ray.shutdown()``. Does nothing in a forked child of the process that ran ``ray.init``."""
    if os.getpid() != _started_by:
        return
    release_idle_actors()
    if _ray_mod is not None:
        _ray_mod.shutdown()


def park_actors(ray: Any, key: Any, actors: list[Any]) -> None:
    """Park ``actors`` in the idle pool under ``key`` (each closes its inner backend and removes its
    scene files first); kill those that did not answer within ``PARK_CONFIRM_S``, raised, or do not
    fit in the pool (``_pool``)."""
    if not actors:
        return
    refs = [a.park.remote() for a in actors]
    try:
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=PARK_CONFIRM_S)
    except Exception:  # noqa: BLE001 - Ray going away: kill below
        ready = []
    ready_ids = {r.hex() for r in ready}
    healthy, broken = [], []
    for act, ref in zip(actors, refs):
        try:
            if ref.hex() not in ready_ids:
                raise TimeoutError
            ray.get(ref, timeout=0)
            healthy.append(act)
        except Exception:  # noqa: BLE001 - died, hung or its inner close raised: not reusable
            broken.append(act)
    kill_actors(ray, broken + pool.park(ray, key, healthy))


def kill_actors(ray: Any, actors: list[Any]) -> None:
    """Let live ``actors`` close, kill them, and confirm (for at most ``KILL_CONFIRM_S``) they are gone."""
    if actors:
        try:  # let live shards close their engines and remove their scene copies
            ray.wait([a.call.remote("close") for a in actors], num_returns=len(actors), timeout=2.0)
        except Exception:  # noqa: S110 - best effort, the kill below is what counts
            pass
    for act in actors:
        try:
            ray.kill(act, no_restart=True)
        except Exception:  # noqa: S110 - already dead
            pass
    # ray.kill is asynchronous: confirm (for at most KILL_CONFIRM_S) that no shard still
    # answers, so that the actors are gone when close() returns.
    deadline = time.monotonic() + KILL_CONFIRM_S
    while actors and time.monotonic() < deadline:
        alive = []
        for act, ref in [(a, a.ping.remote()) for a in actors]:
            try:
                ray.get(ref, timeout=max(0.01, deadline - time.monotonic()))
                alive.append(act)
            except Exception:  # noqa: S110 - RayActorError: dead, as wanted
                pass
        actors = alive
        if actors:
            time.sleep(0.02)
