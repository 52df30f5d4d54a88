"""``RayBackend``: ``num_envs`` envs presented as one ``SimBackend``, run as K shards of any
registered backend inside Ray actors.

Envs are split contiguously (earlier shards take the remainder). Every contract
call fans out to the shards owning the requested envs and gathers the results
in env order. The hot path is one remote call per shard per ``step``: the shard
returns its packed state (qpos, qvel, all body poses/velocities, sensordata) in
the same round trip, and the getters read that host cache without any further
remote call. ``ray`` is imported when a backend is constructed, never when the
plugin is listed.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.metadata
import itertools
import logging
import math
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import attrs
import numpy as np

from unisim_core.backend import SimBackend
from unisim_core.bindings import BackendHeightScanner, BackendMocapPoseBinding
from unisim_core.capabilities import Capability
from unisim_core.config import BackendTerrainSpawnData, SceneCfg
from unisim_core.errors import (
    BackendClosedError,
    InvalidTypeError,
    OptionalDependencyError,
    UniSimError,
    with_context,
)
from unisim_core.model import ModelInfo
from unisim_core.options import build_options
from unisim_core.servant import adopt_description

from ._errors import (
    ShardCallError,
    ShardDiedError,
    ShardError,
    ShardFaultedError,
    ShardRecoveredWarning,
    ShardStartupError,
    ShardTimeoutError,
)
from ._layout import route, split_envs
from ._options import RayOptions
from ._placement import Placement
from ._recovery import RecoveryRecord
from ._scene import pack_scene
from ._shard import STATE_FIELDS, ShardActor, remote_cause

__all__ = ["RayBackend", "ShardInfo", "FORWARDED_CAPABILITIES", "LOCAL_RAY_SYSTEM_CONFIG"]

log = logging.getLogger("unisim_ray")

#: Capabilities forwarded when the inner backend declares them. Not forwarded:
#: RENDER (an interactive window on a remote node), VIDEO_CAPTURE and PLAYBACK
#: (one shard's renderer can only draw its own envs, so a frame of "all envs"
#: would silently omit the other shards' envs), DEVICE_ARRAYS (views of another process's memory).
FORWARDED_CAPABILITIES: frozenset[Capability] = frozenset(Capability) - {
    Capability.RENDER, Capability.VIDEO_CAPTURE, Capability.PLAYBACK, Capability.DEVICE_ARRAYS,
}
#: Seconds close() waits for Ray to confirm that killed actors are gone.
KILL_CONFIRM_S = 5.0


def _version() -> str:
    try:
        return importlib.metadata.version("unisim-ray")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - source checkout
        return "0"


@attrs.frozen(kw_only=True)
class ShardInfo:
    """Where one shard runs and which envs it owns (``describe_shards()``, progress callback)."""

    index: int
    env_start: int  #: first env (global id) owned by the shard
    env_stop: int  #: one past the last env
    node_ip: str
    node_id: str  #: Ray node id (hex): tells nodes apart on one machine
    hostname: str
    pid: int
    actor_id: str
    inner: str  #: inner backend name and version
    startup_s: float  #: seconds the shard took to build its inner backend
    restarts: int = 0  #: times this shard was rebuilt after its actor or node died

    @property
    def num_envs(self) -> int:
        return self.env_stop - self.env_start

    def label(self) -> str:
        return f"shard {self.index} (envs [{self.env_start}:{self.env_stop}))"


def _cat(parts: list[np.ndarray]) -> np.ndarray:
    """Per-shard replies stacked in env order into one new C-contiguous, writeable array."""
    first = parts[0]
    out = np.empty((sum(len(p) for p in parts),) + first.shape[1:], dtype=first.dtype)
    return np.concatenate(parts, axis=0, out=out)


# ----------------------------------------------------------------------------- the Ray session
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


def _import_ray() -> Any:
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


def _remote_shard_cls(ray: Any) -> Any:
    global _actor_cls
    if _actor_cls is None:
        _actor_cls = ray.remote(ShardActor)
    return _actor_cls


def _ensure_ray(ray: Any, opts: RayOptions, num_envs: int) -> None:
    """Join the running Ray instance, or start one for this process.

    A Ray instance this plugin starts lives as long as the process (shut down at exit), like
    any ``ray.init``: closing a backend releases its actors, and the next backend reuses the
    instance instead of paying Ray's start-up again.
    """
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
        atexit.register(ray.shutdown)


# ----------------------------------------------------------------------------- the backend
class RayBackend(SimBackend):
    """Many envs as one backend, run as K shards of any backend inside Ray actors."""

    name: ClassVar[str] = "ray"
    version: ClassVar[str] = _version()
    options_cls = RayOptions
    required_runtime = "Ray (a local instance is started when no cluster address is given)"
    #: Upper bound; an instance declares the inner backend's capabilities within it.
    CAPABILITIES: ClassVar[frozenset[Capability]] = FORWARDED_CAPABILITIES
    ATOMIC_STEP_CALLS = True  # an interrupt must not abandon the shards' replies mid-step

    options: RayOptions

    def __init__(self, scene: SceneCfg, num_envs: int, sim_dt: float, **options: Any) -> None:
        self._fault: BaseException | None = None
        self._actors: list[Any] = []
        self._placement: Placement | None = None
        super().__init__(scene, num_envs, sim_dt, **options)
        o = self.options
        shards = min(o.shards, self._num_envs)  # a shard never holds zero envs
        if shards < o.shards:
            log.info("unisim_ray: %d envs over %d shards: using %d shards of one env each",
                     self._num_envs, o.shards, shards)
        self._ranges = split_envs(self._num_envs, shards)
        self._shards: list[ShardInfo | None] = [None] * shards
        self._record = RecoveryRecord(self._ranges) if o.max_shard_restarts > 0 else None
        self._recoveries: list[float] = []
        inner_kwargs = self._inner_kwargs()
        payload, how = pack_scene(scene, o.scene_transfer, o.scene_dir_limit_mb)
        self._scene_transfer_used = how
        ray = self._ray = _import_ray()
        _ensure_ray(ray, o, self._num_envs)
        try:
            self._start(payload, inner_kwargs)
        except BaseException:
            self._release()
            raise
        self._pending_clear = self._cleared = False
        self._step_diverged: np.ndarray | None = None
        self._handle_keys = itertools.count()

    # ------------------------------------------------------------------ construction
    def _inner_kwargs(self) -> dict[str, Any]:
        """Inner options (validated here when the host knows the inner backend's options class)."""
        o = self.options
        kwargs = dict(o.inner_options)
        kwargs["np_dtype"] = o.np_dtype
        if o.base_name is not None:
            kwargs["base_name"] = o.base_name
        if ":" not in o.inner:
            from unisim_core.registry import get_backend_spec

            spec = get_backend_spec(o.inner)  # BackendNotFoundError for a typo, before Ray starts
            build_options(spec.options_cls, o.inner, kwargs)
        return kwargs

    def _report(self, info: ShardInfo) -> None:
        total = len(self._ranges)
        msg = (f"unisim-ray: {info.label()} of {total} ready on {info.hostname} ({info.node_ip}, pid {info.pid}), "
               f"{info.inner} built in {info.startup_s:.2f} s")
        log.info(msg)
        progress = self.options.progress
        if progress is True:
            print(msg, file=sys.stderr, flush=True)
        elif callable(progress):
            progress(info)

    def _start(self, payload: dict[str, Any], inner_kwargs: dict[str, Any]) -> None:
        ray, o = self._ray, self.options
        cpus = o.actor_num_cpus
        if cpus is None:
            multi = sum(1 for n in ray.nodes() if n.get("Alive")) > 1
            cpus = 1.0 if multi or o.placement is not None else 0.0
        self._actor_cpus = cpus
        self._placement = Placement(ray, o, self._ranges, cpus)
        self._actors = [None] * len(self._ranges)
        self._payload_ref, self._inner_kwargs = ray.put(payload), inner_kwargs
        results = self._launch(range(len(self._ranges)))
        if self._record is None:
            self._payload_ref = None  # kept only to rebuild shards
        first = results[0]
        desc = first["description"]
        # the inner backend's declarations (terms, what it refuses, known kit deviations, snapshot tier)
        self._inner_info, self._caps = adopt_description(self, desc)
        self._inner_class = desc["inner_class"]
        self._alloc_cache(first)
        for k, (a, b) in enumerate(self._ranges):
            self._state[a:b] = results[k]["state"]
            if self._record is not None:
                self._record.record_rows(k, None, results[k]["restore"])

    def _launch(self, ks: Sequence[int]) -> dict[int, dict]:
        """Start fresh actors for shards ``ks`` and wait (``init_timeout_s``) until each has built its
        inner backend; ``{shard: start() reply}``. Every shard must build the model shard 0 built."""
        ray, o = self._ray, self.options
        cls = _remote_shard_cls(ray)
        for k in ks:
            self._actors[k] = cls.options(**self._placement.options(k)).remote(k, *self._ranges[k])
        refs = [self._actors[k].call.remote("start", o.inner, self._payload_ref, self.sim_dt, self._inner_kwargs,
                                             o.prefetch_sensors, self._record is not None) for k in ks]
        pending = dict(zip(refs, ks))
        results: dict[int, dict] = {}
        deadline = time.monotonic() + o.init_timeout_s
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=max(0.0, deadline - time.monotonic()))
            if not ready:
                shards = sorted(pending.values())
                try:
                    avail = ray.available_resources()
                except Exception:  # pragma: no cover
                    avail = "unknown"
                raise ShardStartupError(
                    f"backend 'ray': {self._labels(shards)} did not start within init_timeout_s="
                    f"{o.init_timeout_s:g} s (each shard asks for {self._actor_cpus:g} CPU"
                    f"{f' and {o.shard_resources}' if o.shard_resources else ''}; "
                    f"available Ray resources: {avail})", self._triples(shards))
            k = pending.pop(ready[0])
            try:
                res = ray.get(ready[0])
            except ray.exceptions.RayTaskError as exc:
                cause = remote_cause(exc)
                if isinstance(cause, UniSimError | TypeError):  # what the inner backend raises in-process
                    raise with_context(cause, f"backend 'ray', {self._labels([k])}") from None
                raise ShardStartupError(
                    f"backend 'ray': {self._labels([k])} could not build inner backend {o.inner!r}: "
                    f"{type(cause).__name__}: {cause}", self._triples([k])) from cause
            except ray.exceptions.RayError as exc:
                raise ShardStartupError(f"backend 'ray': {self._labels([k])} died while starting: {exc}",
                                        self._triples([k])) from exc
            desc = res["description"]
            signature = (tuple(desc["capabilities"]), res["widths"])
            if getattr(self, "_signature", signature) != signature:
                raise ShardStartupError(f"backend 'ray': {self._labels([k])} built a different model or "
                                        f"capability set than the other shards", self._triples([k]))
            self._signature = signature
            results[k] = res
            a, b = self._ranges[k]
            restarts = 0 if self._record is None else int(self._record.restarts[k])
            info = ShardInfo(index=k, env_start=a, env_stop=b, node_ip=res["node_ip"], node_id=res["node_id"],
                             hostname=res["hostname"], pid=res["pid"], actor_id=self._actors[k]._actor_id.hex(),
                             inner=f"{desc['inner_name']} {desc['inner_version']}", startup_s=res["startup_s"],
                             restarts=restarts)
            self._shards[k] = info
            self._report(info)
        return results

    def _alloc_cache(self, first: dict) -> None:
        n = self._num_envs
        widths, dtypes = first["widths"], [np.dtype(d) for d in first["dtypes"]]
        self._state = np.zeros((n, int(sum(widths))), dtype=np.dtype(first["pack_dtype"]))
        nb = len(self._inner_info.body_names)
        tails = {"xpos": (nb, 3), "xquat": (nb, 4), "lin_vel": (nb, 3), "ang_vel": (nb, 3)}
        off = 0
        self._views: dict[str, np.ndarray] = {}
        self._dtypes: dict[str, np.dtype] = {}
        for name, w, dt in zip(STATE_FIELDS, widths, dtypes):
            view = self._state[:, off:off + w]
            if name in tails:
                view = view.reshape((n,) + tails[name])
                if not np.shares_memory(view, self._state):  # pragma: no cover - numpy guarantees a view
                    raise AssertionError("state cache view is not a view")
            self._views[name], self._dtypes[name] = view, dt
            off += w
        info = self._inner_info
        self._sensor_cols = [np.arange(a, a + d) for a, d in zip(info.sensor_adr, info.sensor_dims)]
        # Sensor policy (RayOptions.prefetch_sensors): with True every state reply carries
        # sensordata; otherwise replies without it mark the shard's sensors stale and the next
        # sensor read fetches them. "auto" asks a step for sensordata when sensors were read
        # since the previous step.
        self._has_sensors = widths[-1] > 0
        self._sensor_policy = self.options.prefetch_sensors
        self._lazy_sensors = self._has_sensors and self._sensor_policy is not True
        self._sensor_stale = np.zeros(len(self._ranges), dtype=bool)
        self._sensors_read = False
        # Body tables follow the same "auto" policy: a step brings them back only when a body
        # getter was used since the previous step; otherwise the reply is qpos/qvel alone and the
        # first body read after it fetches the tables (one more round trip).
        self._core_width = int(widths[0] + widths[1])
        self._body_end = int(sum(widths[:6]))
        self._body_stale = np.zeros(len(self._ranges), dtype=bool)
        self._bodies_read = True

    # ------------------------------------------------------------------ plumbing
    def _labels(self, shards: Sequence[int]) -> str:
        parts = [f"shard {k} (envs [{self._ranges[k][0]}:{self._ranges[k][1]}))" for k in shards]
        return ", ".join(parts)

    def _triples(self, shards: Sequence[int]) -> tuple[tuple[int, int, int], ...]:
        return tuple((k, *self._ranges[k]) for k in shards)

    def _check_open(self) -> None:
        if self._fault is not None:
            raise ShardFaultedError(
                f"backend 'ray' refuses calls after a shard fault: {self._fault}",
                getattr(self._fault, "shards", ())) from self._fault
        if self._closed:
            raise BackendClosedError("backend 'ray' is closed")

    def _poison(self, err: ShardError) -> ShardError:
        self._fault = err
        self._release()
        return err

    def _call(self, what: str, calls: list[tuple[int, str, tuple]], *, mutating: bool,
              tracked: dict[int, np.ndarray | None] | None = None) -> list[Any]:
        """Run ``actor.method(*args)`` for each ``(shard, method, args)`` under ``call_timeout_s``;
        the replies in the order of ``calls``, every failure mapped to a clear error.

        A shard whose actor or node died is rebuilt and its part of the call retried (up to
        ``max_shard_restarts`` per shard). ``tracked`` maps the shards of a state-changing call to
        the local envs it touched (``None``: all): with recovery on, their replies carry restore rows.
        """
        ray = self._ray
        pending, results, task_errors = list(calls), {}, []
        while pending:
            refs = [(k, self._actors[k].call.remote(method, *args)) for k, method, args in pending]
            try:
                done, failures = self._settle(what, refs)
            except ShardError:
                raise
            except BaseException as exc:  # KeyboardInterrupt: results unknown
                self._poison(ShardCallError(f"backend 'ray': {what} was interrupted ({type(exc).__name__})",
                                            self._triples([k for k, _, _ in pending])))
                raise
            results.update(done)
            dead = [k for k, e in failures if not isinstance(e, ray.exceptions.RayTaskError)]
            task_errors += [(k, e) for k, e in failures if isinstance(e, ray.exceptions.RayTaskError)]
            if dead:
                self._recover(dead, what, dict(failures))
            pending = [c for c in pending if c[0] in dead]
        if self._record is not None and tracked is not None:
            for k, ids in tracked.items():
                if k in results:
                    results[k], rows = results[k]
                    self._record.record_rows(k, ids, rows)
        if task_errors:
            self._raise_task_error(what, task_errors, [k for k, _, _ in calls] if mutating else [])
        return [results[k] for k, _, _ in calls]

    def _settle(self, what: str, refs: list[tuple[int, Any]]) -> tuple[dict[int, Any], list[tuple[int, Exception]]]:
        """``({shard: reply}, [(shard, exception)])`` of submitted calls; a shard past
        ``call_timeout_s`` poisons the backend (:class:`ShardTimeoutError`)."""
        ray = self._ray
        deadline = time.monotonic() + self.options.call_timeout_s
        try:
            replies = ray.get([r for _, r in refs], timeout=self.options.call_timeout_s)
            return dict(zip([k for k, _ in refs], replies)), []
        except ray.exceptions.GetTimeoutError:
            pass
        except Exception:  # noqa: S110 - some call failed: settled one by one below
            pass
        done, failures, slow = {}, [], []
        for k, ref in refs:
            try:
                done[k] = ray.get(ref, timeout=max(0.0, deadline - time.monotonic()))
            except ray.exceptions.GetTimeoutError:
                slow.append(k)
            except Exception as exc:
                failures.append((k, exc))
        if slow:
            raise self._poison(ShardTimeoutError(
                f"backend 'ray': {self._labels(slow)} gave no answer to {what} within call_timeout_s="
                f"{self.options.call_timeout_s:g} s; the backend is now unusable", self._triples(slow))) from None
        return done, failures

    def _raise_task_error(self, what: str, failures: list[tuple[int, Exception]], resync: list[int]) -> None:
        """An exception raised inside shards: the inner backend's own error class when it is one
        (the backend stays usable; ``resync`` shards' cached state is re-read), else a fault."""
        causes = [(k, remote_cause(e)) for k, e in failures]
        k0, c0 = causes[0]
        if all(isinstance(c, UniSimError) for _, c in causes):
            # The inner backend raised on purpose and stays usable (bad input, engine error):
            # the same class reaches the caller, naming the shard; the live shards go on.
            if resync:
                self._resync(resync)
            raise with_context(c0, f"backend 'ray', {self._labels([k0])}") from None
        shards = [k for k, _ in causes]
        raise self._poison(ShardCallError(
            f"backend 'ray': inner backend raised in {self._labels(shards)} during {what}: "
            f"{type(c0).__name__}: {c0}; envs may be half-updated, the backend is now unusable",
            self._triples(shards))) from c0

    def _recover(self, dead: list[int], what: str, errors: dict[int, Exception]) -> None:
        """Rebuild the shards ``dead`` from the host's record (see ``_recovery``), or poison the
        backend with :class:`ShardDiedError` when ``max_shard_restarts`` allows no more."""
        ray, rec, limit = self._ray, self._record, self.options.max_shard_restarts
        exc0 = errors[dead[0]]
        reason = (str(exc0).splitlines() or [type(exc0).__name__])[0]
        spent = [k for k in dead if rec is None or rec.restarts[k] >= limit]
        if spent:
            hint = ("max_shard_restarts=0: pass max_shard_restarts > 0 to rebuild dead shards" if limit == 0
                    else f"{self._labels(spent)} already rebuilt max_shard_restarts={limit} time(s)")
            raise self._poison(ShardDiedError(
                f"backend 'ray': {self._labels(dead)} died during {what} ({reason}); {hint}; "
                f"the backend is now unusable", self._triples(dead))) from exc0
        t0 = time.perf_counter()
        rec.restarts[dead] += 1
        deadline = time.monotonic() + self.options.init_timeout_s
        while True:
            for k in dead:
                with contextlib.suppress(Exception):
                    ray.kill(self._actors[k], no_restart=True)
            try:
                self._launch(dead)
                ray.get([self._actors[k].call.remote("recover", *rec.recover_args(k)) for k in dead],
                        timeout=max(0.0, deadline - time.monotonic()))
                break
            except Exception as exc:
                # A new actor placed on a node Ray has not yet declared dead dies with it: place again.
                cause = exc.__cause__ if isinstance(exc, ShardStartupError) else exc
                if isinstance(cause, ray.exceptions.RayActorError) and time.monotonic() < deadline:
                    continue
                raise self._poison(ShardDiedError(
                    f"backend 'ray': {self._labels(dead)} died during {what} ({reason}) and could not be rebuilt "
                    f"within init_timeout_s={self.options.init_timeout_s:g} s: {type(exc).__name__}: {exc}; "
                    f"the backend is now unusable", self._triples(dead))) from exc
        took = time.perf_counter() - t0
        self._recoveries.append(took)
        msg = (f"backend 'ray': {self._labels(dead)} died during {what} ({reason}); rebuilt in {took:.2f} s "
               f"from the state of the last completed call (restart {int(rec.restarts[dead].max())} of "
               f"max_shard_restarts={limit}); retrying the {what}")
        log.info(msg)
        warnings.warn(msg, ShardRecoveredWarning, stacklevel=2)

    def _resync(self, shards: list[int]) -> None:
        """Re-read the whole state of ``shards`` into the cache (after a call that raised in some)."""
        results = self._fanout("state refresh", "state", lambda k, a, b: (self._has_sensors,), shards=shards)
        for k, rows in zip(shards, results):
            a, b = self._ranges[k]
            self._state[a:b] = rows
        self._body_stale[shards] = False
        if self._lazy_sensors:
            self._sensor_stale[shards] = False
        if self._record is not None:
            for k, rows in zip(shards, self._fanout("state refresh", "restore_rows", shards=shards)):
                self._record.record_rows(k, None, rows)

    def _fanout(self, what: str, method: str, per_shard: Callable[[int, int, int], tuple] | None = None, *,
                shards: Sequence[int] | None = None, mutating: bool = False, tracked: bool = False) -> list[Any]:
        """Call ``actor.method(*per_shard(k, start, stop))`` on ``shards`` (all by default);
        ``tracked``: a state-changing call of all the shards' envs."""
        self._check_open()
        ks = range(len(self._actors)) if shards is None else shards
        calls = [(k, method, per_shard(k, *self._ranges[k]) if per_shard is not None else ()) for k in ks]
        return self._call(what, calls, mutating=mutating, tracked=dict.fromkeys(ks) if tracked else None)

    def _routed(self, what: str, method: str, env_ids: np.ndarray,
                args: Callable[[np.ndarray, np.ndarray], tuple]) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """Route ``env_ids`` to their shards, call ``method(*args(rows, local_ids))`` on each
        (``rows`` index ``env_ids`` and the value rows), write the returned state rows into the
        cache; the routes ``[(shard, rows, local_ids)]``."""
        self._check_open()
        routes = route(env_ids, self._ranges)
        calls = [(k, method, args(rows, local)) for k, rows, local in routes]
        results = self._call(what, calls, mutating=True, tracked={k: local for k, _, local in routes})
        for (k, _, local), rows_state in zip(routes, results):
            self._state[self._ranges[k][0] + local] = rows_state
        self._mark_sensors_stale([k for k, _, _ in routes])
        return routes

    def _mark_sensors_stale(self, shards: Sequence[int]) -> None:
        if self._lazy_sensors:
            self._sensor_stale[list(shards)] = True

    def _fresh_sensors(self) -> np.ndarray:
        """The sensordata cache, fetched first from shards whose sensors are stale (lazy mode)."""
        self._check_open()
        self._sensors_read = True
        if self._lazy_sensors and self._sensor_stale.any():
            stale = np.flatnonzero(self._sensor_stale).tolist()
            results = self._fanout("sensor read", "read_sensors", shards=stale)
            view = self._views["sensordata"]
            for k, rows in zip(stale, results):
                a, b = self._ranges[k]
                view[a:b] = rows
            self._sensor_stale[:] = False
        return self._views["sensordata"]

    # ------------------------------------------------------------------ capabilities and layout
    @property
    def capabilities(self) -> frozenset[Capability]:
        """The inner backend's capabilities that cross processes faithfully (see FORWARDED_CAPABILITIES)."""
        return self._caps

    @property
    def inner_backend(self) -> str:
        """``"module:Class"`` of the backend each shard runs."""
        return self._inner_class

    @property
    def num_shards(self) -> int:
        return len(self._ranges)

    def describe_shards(self) -> list[ShardInfo]:
        """One :class:`ShardInfo` per shard: env range, node, pid, actor id, restarts."""
        return list(self._shards)

    @property
    def recovery_seconds(self) -> tuple[float, ...]:
        """Seconds each shard recovery took (kill noticed to shard rebuilt and restored), in order."""
        return tuple(self._recoveries)

    # ------------------------------------------------------------------ primitives: model and state
    def _load_model_info(self) -> ModelInfo:
        return self._inner_info  # shard 0's, fetched while starting

    def _read(self, field: str) -> np.ndarray:
        self._check_open()
        return self._views[field].astype(self._dtypes[field], order="C")

    def get_qpos(self) -> np.ndarray:
        return self._read("qpos")

    def get_qvel(self) -> np.ndarray:
        return self._read("qvel")

    def _fresh_bodies(self) -> None:
        """Fetch the body tables of shards whose last step replied with qpos/qvel only."""
        self._bodies_read = True
        if self._body_stale.any():
            stale = np.flatnonzero(self._body_stale).tolist()
            results = self._fanout("body read", "state", lambda k, a, b: (False,), shards=stale)
            cols = slice(self._core_width, self._body_end)
            for k, rows in zip(stale, results):
                a, b = self._ranges[k]
                self._state[a:b, cols] = rows[:, cols]
            self._body_stale[:] = False

    def _bodies(self, field: str, body_ids: np.ndarray) -> np.ndarray:
        self._check_open()
        self._fresh_bodies()
        # fancy indexing a strided view keeps its layout: force C order (one copy either way)
        return np.ascontiguousarray(self._views[field][:, body_ids], dtype=self._dtypes[field])

    def _body_pos_w(self, body_ids: np.ndarray) -> np.ndarray:
        return self._bodies("xpos", body_ids)

    def _body_quat_w(self, body_ids: np.ndarray) -> np.ndarray:
        return self._bodies("xquat", body_ids)

    def _body_lin_vel_w(self, body_ids: np.ndarray) -> np.ndarray:
        return self._bodies("lin_vel", body_ids)

    def _body_ang_vel_w(self, body_ids: np.ndarray) -> np.ndarray:
        return self._bodies("ang_vel", body_ids)

    def _read_sensor(self, index: int) -> np.ndarray:
        a, d = int(self._inner_info.sensor_adr[index]), int(self._inner_info.sensor_dims[index])
        return self._fresh_sensors()[:, a:a + d].astype(self._dtypes["sensordata"], order="C")

    def _read_sensors(self, indices: np.ndarray) -> np.ndarray:
        if len(indices) == 0:
            self._check_open()
            return np.zeros((self._num_envs, 0), dtype=self._dtypes["sensordata"])
        cols = np.concatenate([self._sensor_cols[int(i)] for i in indices])
        return np.ascontiguousarray(self._fresh_sensors()[:, cols], dtype=self._dtypes["sensordata"])

    def _step(self, ctrl: np.ndarray, nsteps: int) -> None:
        # The base clears staged wrenches after the last _step call of a step (``_final_call``):
        # that call clears them in the shard before the state is read, where the in-process base would.
        self._check_open()
        before, after = self._pending_clear, self._final_call
        sensors = self._has_sensors and (self._sensor_policy is True
                                         or (self._sensor_policy == "auto" and self._sensors_read))
        bodies = self._bodies_read or sensors
        calls = [(k, "step", (ctrl[a:b], nsteps, before, after, sensors, bodies))
                 for k, (a, b) in enumerate(self._ranges)]
        self._cleared = False
        results = self._call("step", calls, mutating=True, tracked=dict.fromkeys(range(len(calls))))
        self._pending_clear, self._cleared = False, after
        if after and self._record is not None:
            self._record.clear_forces()
        width = self._state.shape[1] if bodies else self._core_width
        diverged = None
        for (a, b), (rows, bad) in zip(self._ranges, results):
            self._state[a:b, :width] = rows
            if bad is not None:
                if diverged is None:
                    diverged = np.zeros(self._num_envs, dtype=bool)
                diverged[a + bad] = True
        self._step_diverged = diverged
        if self._lazy_sensors:
            self._sensor_stale[:] = not sensors
        self._body_stale[:] = not bodies
        self._sensors_read = self._bodies_read = False

    def _diverged_mask(self) -> np.ndarray | None:
        mask, self._step_diverged = self._step_diverged, None
        return mask

    def _set_state(self, env_ids: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> None:
        self._routed("set_state", "set_state", env_ids, lambda rows, local: (local, qpos[rows], qvel[rows]))

    # ------------------------------------------------------------------ primitives: forces
    def _apply_body_force(self, body_ids: np.ndarray, force: np.ndarray, torque: np.ndarray | None) -> None:
        clear = self._pending_clear
        self._fanout("apply_body_force", "apply_body_force",
                     lambda k, a, b: (body_ids, force[a:b], None if torque is None else torque[a:b], clear),
                     mutating=True)
        self._pending_clear = False
        if self._record is not None:
            self._record.stage_forces(clear, body_ids, force, torque)

    def _clear_body_forces(self) -> None:
        # Normally already done by the shard at the end of the step. Otherwise (a step that
        # raised) deferred: the next step/apply_body_force clears first, in the same round trip.
        if not self._cleared:
            self._pending_clear = True

    # ------------------------------------------------------------------ primitives: kinematics, snapshots, fields
    def _site_jacobian(self, site_id: int, dof_indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        parts = self._fanout("get_site_jacobian_w", "site_jacobian", lambda k, a, b: (site_id, dof_indices))
        return (_cat([p[0] for p in parts]), _cat([p[1] for p in parts]))

    def _get_physics_state(self) -> np.ndarray:
        return _cat(self._fanout("get_physics_state", "get_physics_state"))

    def _set_physics_state(self, state: np.ndarray) -> None:
        results = self._fanout("set_physics_state", "set_physics_state", lambda k, a, b: (state[a:b],),
                               mutating=True, tracked=True)
        for (a, b), rows in zip(self._ranges, results):
            self._state[a:b] = rows
        self._mark_sensors_stale(range(len(self._ranges)))

    def _write_model_field(self, term: str, env_ids: np.ndarray, target_ids: np.ndarray | None,
                           values: np.ndarray) -> None:
        routes = self._routed(f"write of model field {term!r}", "write_model_field", np.asarray(env_ids, np.int64),
                              lambda rows, local: (term, local, target_ids, values[rows]))
        if self._record is not None:
            for k, rows, local in routes:
                self._record.record_field(k, term, local, target_ids, values[rows])

    def _read_model_field(self, term: str) -> np.ndarray:
        return _cat(self._fanout(f"read of model field {term!r}", "read_model_field", lambda k, a, b: (term,)))

    # ------------------------------------------------------------------ primitives: terrain, scanners, mocap
    def _terrain_spawn_data(self) -> BackendTerrainSpawnData:
        data = self._handle("get_terrain_spawn_data", "terrain_spawn_data", (), shards=[0])[0]

        def sample_height(xy: np.ndarray) -> np.ndarray:
            out = self._fanout("sample_height", "sample_height", lambda k, a, b: (np.asarray(xy),), shards=[0])[0]
            return np.array(out)  # replies can be read-only views of Ray's object store

        return BackendTerrainSpawnData(origins=np.array(data["origins"]), sample_height=sample_height,
                                       hfield_geom_id=data["hfield_geom_id"], size=data["size"])

    def _create_hfield_scanner(self, hfield_geom_id: int, offsets: np.ndarray, frame_body_id: int,
                               alignment: str, output: str) -> BackendHeightScanner:
        key = next(self._handle_keys)
        points = self._handle("create_hfield_scanner", "create_scanner",
                              (key, hfield_geom_id, offsets, frame_body_id, alignment, output))
        return _RayHeightScanner(self, key, points[0])

    def _bind_mocap_pose(self, body_id: int) -> BackendMocapPoseBinding:
        key = next(self._handle_keys)
        self._handle("bind_mocap_pose", "bind_mocap", (key, body_id))
        return _RayMocapBinding(self, key, self._inner_info.body_names[body_id])

    def _bind_contact_forces(self, body_ids: np.ndarray, against_ids: np.ndarray | None):
        """Every shard binds its inner backend's fill (a recorded handle); a read gathers the shards' rows."""
        key = next(self._handle_keys)
        self._handle("bind_contact_forces", "bind_contacts", (key, body_ids, against_ids))

        def fill(out: np.ndarray) -> None:
            out[...] = _cat(self._fanout("contact forces", "contacts", lambda k, a, b: (key,)))
        return fill

    def _handle(self, what: str, method: str, args: tuple, shards: Sequence[int] | None = None) -> list[Any]:
        """A call that creates a handle in the shards (recorded: a rebuilt shard replays it)."""
        out = self._fanout(what, method, lambda k, a, b: args, shards=shards)
        if self._record is not None:
            self._record.handles.append((method, args))
        return out

    def cleanup_scene_assets(self) -> None:
        """Forwarded to every shard."""
        self._fanout("cleanup_scene_assets", "cleanup_scene_assets")

    # ------------------------------------------------------------------ teardown
    def _kill_actors(self) -> None:
        ray, actors = self._ray, [a for a in self._actors if a is not None]
        self._actors = []
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

    def _release(self) -> None:
        if getattr(self, "_ray", None) is None:
            return
        self._kill_actors()
        if self._placement is not None:
            self._placement.release()

    def _close(self) -> None:
        self._release()

    def __reduce_ex__(self, protocol: int) -> Any:
        raise InvalidTypeError(self._unpicklable("its shards are Ray actors this backend owns and kills on close"))

    def _after_fork_in_child(self) -> None:
        # the actors and the local Ray instance are the parent's: a child's normal exit must not
        # shut them down (ray.shutdown, registered with atexit when this process started Ray)
        ray = sys.modules.get("ray")
        if ray is not None:
            atexit.unregister(ray.shutdown)


class _RayHeightScanner(BackendHeightScanner):
    """One scanner per shard; ``scan()`` gathers them in env order (one call per shard)."""

    def __init__(self, backend: RayBackend, key: int, num_points: int) -> None:
        self._backend, self._key, self.num_points = backend, key, num_points

    def scan(self) -> np.ndarray:
        b = self._backend
        return _cat(b._fanout("scan", "scan", lambda k, a, c: (self._key,)))


class _RayMocapBinding(BackendMocapPoseBinding):
    """One binding per shard; ``get`` gathers, writes are routed and refresh the state cache."""

    def __init__(self, backend: RayBackend, key: int, body_name: str) -> None:
        self._backend, self._key = backend, key
        self.body_name, self.num_envs = body_name, backend.num_envs

    def get(self) -> tuple[np.ndarray, np.ndarray]:
        parts = self._backend._fanout("mocap get", "mocap_get", lambda k, a, b: (self._key,))
        return (_cat([p[0] for p in parts]), _cat([p[1] for p in parts]))

    def _write(self, env_ids: np.ndarray, pos: np.ndarray, quat: np.ndarray) -> None:
        self._backend._routed("mocap write", "mocap_write", env_ids,
                              lambda rows, local: (self._key, local, pos[rows], quat[rows]))
