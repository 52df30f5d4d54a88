"""The Ray session of the ``ray`` backend: Ray imported on first use, a local instance started
when no cluster is given (kept for the process), the shard actor class, and actor teardown (parked
in the idle pool of ``_pool``, or killed).

A local instance is private to this machine and this user: every Ray listener is bound to the
loopback interface (Ray binds its gRPC servers to all interfaces unless its node address is the
loopback one), its session, socket and log folders live in a folder only this user can enter
(Ray makes its own mode 0777), and its auth token is a file of mode 0600 there (Ray writes
``~/.ray/auth_token`` with mode 0644). A cluster address given by the user is dialled first with a
plain TCP connection: no answer within ``DIAL_TIMEOUT_S`` is an error naming the address."""

from __future__ import annotations

import atexit
import contextlib
import ipaddress
import logging
import math
import os
import secrets
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import Any

from unisim_core.contract.errors import EngineError, InvalidInputError, OptionalDependencyError

from . import _pool as pool
from ._options import RayOptions
from ._pool import release_idle_actors
from ._shard import ShardActor

__all__ = ["LOCAL_RAY_SYSTEM_CONFIG", "KILL_CONFIRM_S", "PARK_CONFIRM_S", "import_ray", "remote_shard_cls",
           "ensure_ray", "shutdown_ray", "park_actors", "kill_actors"]

log = logging.getLogger("unisim_ray")

#: Seconds close() waits for Ray to confirm that killed actors are gone.
KILL_CONFIRM_S = 5.0
#: Seconds to wait for a TCP connection to a given cluster address before refusing it.
DIAL_TIMEOUT_S = 5.0
#: Seconds close() waits for shards to close their inner backends before parking them.
PARK_CONFIRM_S = 5.0
_started_by: int | None = None  # pid of the process whose ensure_ray started or joined Ray
_ray_mod: Any = None
_actor_cls: Any = None
_session_lock = threading.Lock()
_private_dir: str | None = None  # the local instance's folder (mode 0700), removed at exit
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
        local = opts.address is None and not os.environ.get("RAY_ADDRESS")
        if local:
            need = math.ceil(min(opts.shards, num_envs) * (opts.actor_num_cpus or 0))
            # address="local": a new instance even when another Ray runs on this machine (a bare
            # ray.init() would join a cluster some other process started with `ray start`)
            kwargs.update(address="local", num_cpus=max(os.cpu_count() or 1, need),
                          _system_config=dict(LOCAL_RAY_SYSTEM_CONFIG),
                          _temp_dir=os.path.join(_private_folder(), "ray"))  # Ray makes that one 0777
            where = "a local Ray instance"
        else:
            address = opts.address or os.environ["RAY_ADDRESS"]
            dial(address)
            kwargs["address"] = opts.address
            where = f"the Ray cluster at {address}"
        kwargs.update(opts.ray_init_options)
        log.info("unisim_ray: starting %s", where)
        with _loopback_node(local and "_node_ip_address" not in opts.ray_init_options):
            ray.init(**kwargs)
        _started_by = os.getpid()
        atexit.register(shutdown_ray)
        if local and "_node_ip_address" not in opts.ray_init_options:
            _check_loopback(ray)


def _private_folder() -> str:
    """A folder only this user can enter (``mkdtemp``: mode 0700) for a local instance's session,
    sockets and logs, holding a fresh auth token (mode 0600) that Ray's processes read through
    ``RAY_AUTH_TOKEN_PATH`` (unless the user set a token of their own)."""
    global _private_dir
    if _private_dir is None:
        _private_dir = tempfile.mkdtemp(prefix="unisim-ray-")
        if not (os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH")):
            token = os.path.join(_private_dir, "auth_token")
            fd = os.open(token, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(32))
            os.environ["RAY_AUTH_TOKEN_PATH"] = token
    return _private_dir


@contextlib.contextmanager
def _loopback_node(on: bool) -> Iterator[None]:
    """While Ray starts a local instance: its node address is the loopback one, so that its gRPC
    servers bind 127.0.0.1 only (Ray takes the machine's address unless its cluster support is
    off, as on macOS and Windows: ``ray_constants.ENABLE_RAY_CLUSTER``)."""
    if not on:
        yield
        return
    from ray._private import ray_constants

    saved = ray_constants.ENABLE_RAY_CLUSTER
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = saved


def _check_loopback(ray: Any) -> None:
    """Refuse a local instance that did not come up on the loopback address (a Ray release that
    changed how it picks its node address): it would listen on every interface."""
    host = ray.get_runtime_context().gcs_address.rpartition(":")[0].strip("[]")
    if not ipaddress.ip_address(host).is_loopback:
        ray.shutdown()
        raise EngineError(f"the local Ray instance came up at {host}, not on the loopback interface: it would listen "
                          f"on the network. Start Ray yourself (`ray start --head --node-ip-address=127.0.0.1`) and "
                          f"pass address=, or pass ray_init_options={{'_node_ip_address': ...}} to choose")


def dial(address: str) -> None:
    """Refuse a cluster ``address`` (``host:port``, ``ray://host:port`` or ``auto``) that no TCP
    connection reaches within ``DIAL_TIMEOUT_S``, naming it (Ray itself retried for a minute,
    dialling the machine's address instead of a loopback one given)."""
    if address == "auto":
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        port_no = int(port)
    except ValueError:
        raise InvalidInputError(f"address: expected 'host:port' or 'ray://host:port', got {address!r}") from None
    try:
        socket.create_connection((host.strip("[]"), port_no), timeout=DIAL_TIMEOUT_S).close()
    except OSError as exc:
        raise EngineError(f"no Ray cluster answers at {address!r} (from the address option or RAY_ADDRESS): "
                          f"{exc.strerror or exc} within {DIAL_TIMEOUT_S:g} s; start one there "
                          f"(`ray start --head`) or unset it to let unisim-ray start a local instance") from None


def shutdown_ray() -> None:
    """The exit handler of a Ray instance this plugin started (or joined): kill the idle pooled shard
    actors, then ``ray.shutdown()``. Does nothing in a forked child of the process that ran ``ray.init``."""
    if os.getpid() != _started_by:
        return
    release_idle_actors()
    if _ray_mod is not None:
        _ray_mod.shutdown()
    if _private_dir is not None:
        shutil.rmtree(_private_dir, ignore_errors=True)


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
