"""Calls from the ``ray`` backend to its shards: starting them, fan-out and routing by env, deadlines,
every failure mapped to a typed error naming the shards, and recovery of dead shards.

:class:`ShardCalls` is a mixin of :class:`~unisim_ray._backend.RayBackend`; each call crosses as
``actor.call.remote(op, *args)`` (the servant's op table, see ``_shard``).
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from unisim_core.contract.errors import BackendClosedError, UniSimError, with_context

from . import _pool as pool
from ._errors import (
    ShardCallError,
    ShardDiedError,
    ShardError,
    ShardFaultedError,
    ShardRecoveredWarning,
    ShardStartupError,
    ShardTimeoutError,
)
from ._layout import route
from ._session import remote_shard_cls
from ._shard import remote_cause

__all__ = ["ShardInfo", "ShardCalls"]

log = logging.getLogger("unisim_ray")


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
    reused: bool = False  #: whether the shard runs on an idle actor of an earlier backend (``reuse_actors``)

    @property
    def num_envs(self) -> int:
        return self.env_stop - self.env_start

    def label(self) -> str:
        return f"shard {self.index} (envs [{self.env_start}:{self.env_stop}))"



class ShardCalls:
    """Remote-call plumbing of a sharded backend (needs ``_ray``, ``_actors``, ``_ranges``,
    ``_shards``, ``_record``, ``_placement``, ``options`` and the state cache of the backend)."""

    def _report(self, info: ShardInfo) -> None:
        total = len(self._ranges)
        msg = (f"unisim-ray: {info.label()} of {total} ready on {info.hostname} ({info.node_ip}, pid {info.pid}"
               f"{', reused actor' if info.reused else ''}), {info.inner} built in {info.startup_s:.2f} s")
        log.info(msg)
        progress = self.options.progress
        if progress is True:
            print(msg, file=sys.stderr, flush=True)
        elif callable(progress):
            progress(info)


    def _launch(self, ks: Sequence[int], reuse: bool = True) -> dict[int, dict]:
        """Start shards ``ks`` on idle pooled actors (``reuse`` and the backend's actors are poolable)
        or fresh ones, and wait (``init_timeout_s``) until each has built its inner backend;
        ``{shard: start() reply}``. A pooled actor found dead is replaced by a fresh one. Every
        shard must build the model shard 0 built."""
        ray, o = self._ray, self.options
        cls = remote_shard_cls(ray)
        args = (o.inner, self._payload_ref, self.sim_dt, self._inner_kwargs, o.prefetch_sensors,
                self._record is not None)
        key = self._pool_key if reuse else None
        reused: set[int] = set()
        for k in ks:
            actor = pool.take(ray, key)
            if actor is not None:
                self._actors[k] = actor
                reused.add(k)

        def fresh(k: int) -> Any:
            self._actors[k] = cls.options(**self._placement.options(k)).remote(k, *self._ranges[k])
            return self._actors[k].call.remote("start", *args)

        if len(reused) < len(ks):  # idle actors of other layouts must not hold the CPUs these need
            pool.evict_reserving(ray, key)
        refs = [self._actors[k].restart.remote(k, *self._ranges[k], *args) if k in reused else fresh(k) for k in ks]
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
                if k in reused and isinstance(exc, ray.exceptions.RayActorError):
                    # a parked actor that died while idle: discarded, the shard starts on a fresh one
                    reused.discard(k)
                    log.info("unisim-ray: the idle actor taken for %s was dead; starting a fresh one",
                             self._labels([k]))
                    pending[fresh(k)] = k
                    continue
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
                             restarts=restarts, reused=k in reused)
            self._shards[k] = info
            self._report(info)
        return results


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
                self._launch(dead, reuse=False)  # a rebuilt shard is a fresh actor
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
