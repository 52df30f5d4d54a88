"""The shard host: one inner backend inside one Ray actor, served by the core's
:class:`~unisim_core.plugin.servant.Servant` (the op table); this module adds only what the Ray transport
needs: the packed-state replies, restore rows for recovery, and the actor (:class:`ShardActor`).

The host side (:class:`unisim_ray.RayBackend`) has already validated every input
with the contract's checks, so the servant calls the inner backend's *primitives*
directly (results stay bit-identical to the inner backend run in-process). Every call that
can change what the getters read returns the shard's packed state rows, so the host cache
is refreshed in the same round trip. With ``track`` (recovery enabled) each of those replies is
``(reply, restore rows)``: the inner's ``_restore_rows`` (its ``restore_tier`` says what loading
them into a rebuilt shard reproduces; MuJoCo's are exact).

Packed state row (one per env, dtype ``pack_dtype``)::

    qpos (nq) | qvel (nv) | xpos (nbody*3) | xquat (nbody*4) | lin_vel (nbody*3)
    | ang_vel (nbody*3) | sensordata (nsensordata, when SENSORS)
"""

from __future__ import annotations

import gc
import os
import shutil
import socket
import tempfile
import threading
import time
from typing import Any

import numpy as np

from unisim_core.contract.capabilities import Capability
from unisim_core.plugin.servant import ErrorRecord, RemoteError, Servant

from ._scene import materialize_scene

__all__ = ["ShardHost", "ShardActor", "STATE_FIELDS", "remote_cause"]

STATE_FIELDS = ("qpos", "qvel", "xpos", "xquat", "lin_vel", "ang_vel", "sensordata")
#: Seconds a parked shard actor stays idle before it collects the closed engine's garbage.
PARK_GC_DELAY_S = 1.0


def remote_cause(exc: BaseException) -> BaseException:
    """What a shard raised, from the Ray error ``exc`` of a failed call: the original exception
    rebuilt from its :class:`~unisim_core.plugin.servant.ErrorRecord` (same class, message, attributes);
    the carried error or ``exc`` itself when it cannot be rebuilt here."""
    cause = getattr(exc, "cause", None) or exc
    if isinstance(cause, RemoteError):
        return cause.record.rebuild() or cause
    return cause


class ShardActor:
    """What Ray hosts: one :class:`ShardHost`. Every op goes through ``call`` (the servant's op
    table); an exception leaves as a :class:`RemoteError` carrying its record."""

    def __init__(self, index: int, env_start: int, env_stop: int) -> None:
        self.host = ShardHost(index, env_start, env_stop)

    def call(self, op: str, *args: Any) -> Any:
        try:
            return self.host.call(op, *args)
        except Exception as exc:
            raise RemoteError(ErrorRecord.capture(exc)) from None

    def ping(self) -> int:
        return os.getpid()

    def park(self) -> int:
        """Close the inner backend and remove the scene files before this actor waits idle in the
        host's pool (``_pool``); its pid. Raises (a :class:`RemoteError`) if the inner close did."""
        try:
            self.host.close()
        except Exception as exc:
            raise RemoteError(ErrorRecord.capture(exc)) from None
        # An idle actor allocates nothing, so no automatic collection would free the closed engine's
        # cyclic garbage: collect once it has stayed idle PARK_GC_DELAY_S (a full collection takes
        # ~0.1 s and holds the GIL: not in the close, nor under a backend that took the actor at once).
        self._parked = parked = object()
        timer = threading.Timer(PARK_GC_DELAY_S, self._collect_if_idle, args=(parked,))
        timer.daemon = True
        timer.start()
        return os.getpid()

    def _collect_if_idle(self, parked: object) -> None:
        if getattr(self, "_parked", None) is parked:
            gc.collect()

    def restart(self, index: int, env_start: int, env_stop: int, *start_args: Any) -> dict:
        """A parked actor taken by another backend: a fresh host for shard ``index`` owning envs
        ``[env_start, env_stop)``, started with ``start_args`` (those of the ``start`` op)."""
        self._parked = None
        self.host.close()  # already closed when parked; idempotent
        self.host = ShardHost(index, env_start, env_stop)
        return self.call("start", *start_args)


class ShardHost(Servant):
    """Hosts ``create_backend(inner, scene, env_stop - env_start, sim_dt, **options)``."""

    OPS = Servant.OPS | {"start", "recover", "state", "restore_rows", "read_sensors"}

    def __init__(self, index: int, env_start: int, env_stop: int) -> None:
        super().__init__()
        self.index = index
        self.env_start, self.env_stop = env_start, env_stop
        self.num_envs = env_stop - env_start
        self._workdir: str | None = None
        self._track = False  # whether state-changing replies carry restore rows

    # ------------------------------------------------------------------ cold path
    def start(self, inner: str, scene_payload: dict[str, Any], sim_dt: float, options: dict[str, Any],
              prefetch_sensors: bool | str = "auto", track: bool = False) -> dict:
        """Build the inner backend; return what the host needs (its ``description``: model info and
        declarations, from shard 0). With ``track`` every state-changing reply also carries the
        shard's restore rows."""
        from unisim_core.contract.factory import create_backend

        t0 = time.perf_counter()
        if scene_payload["kind"] == "files":
            self._workdir = tempfile.mkdtemp(prefix=f"unisim-ray-shard{self.index}-")
        try:
            scene = materialize_scene(scene_payload, self._workdir or "")
            self.backend = b = create_backend(inner, scene, self.num_envs, sim_dt, **options)
        except BaseException:
            self.close()
            raise
        info = b.model_info
        caps = frozenset(b.capabilities)
        nbody = len(info.body_names)
        self._bodies = np.arange(nbody, dtype=np.int64)
        self._sensors = (np.arange(len(info.sensor_names), dtype=np.int64)
                         if Capability.SENSORS in caps and len(info.sensor_names) else None)
        self._prefetch = prefetch_sensors is True
        self._body_force = Capability.BODY_FORCE in caps
        readers = [
            b.get_qpos, b.get_qvel,
            lambda: b._body_pos_w(self._bodies), lambda: b._body_quat_w(self._bodies),
            lambda: b._body_lin_vel_w(self._bodies), lambda: b._body_ang_vel_w(self._bodies),
        ]
        if self._sensors is not None:
            readers.append(lambda: b._read_sensors(self._sensors))
        first = [np.asarray(r()).reshape(self.num_envs, -1) for r in readers]
        widths = [a.shape[1] for a in first] + [0] * (len(STATE_FIELDS) - len(first))
        dtypes = [a.dtype.str for a in first] + [np.dtype(b.np_dtype).str] * (len(STATE_FIELDS) - len(first))
        self._pack_dtype = np.result_type(*[a.dtype for a in first])
        offsets = np.concatenate(([0], np.cumsum(widths))).astype(int)
        self._readers = [(slice(int(offsets[i]), int(offsets[i + 1])), r) for i, r in enumerate(readers[:6])]
        self._sensor_cols = slice(int(offsets[6]), int(offsets[7]))
        self._core_width = int(offsets[2])  # qpos and qvel
        self._width = int(offsets[-1])
        state = self.state(True)
        self._track = track
        import ray

        if ray.is_initialized():  # get_runtime_context() would start Ray outside an actor
            node_ip, node_id = ray.util.get_node_ip_address(), ray.get_runtime_context().get_node_id()
        else:  # outside Ray (unit tests of this class)
            node_ip, node_id = "127.0.0.1", ""
        return {
            "description": self.describe(),
            "widths": tuple(int(w) for w in widths),
            "dtypes": tuple(dtypes),
            "pack_dtype": self._pack_dtype.str,
            "node_ip": node_ip,
            "node_id": node_id,
            "hostname": socket.gethostname(),
            "pid": os.getpid(),
            "startup_s": time.perf_counter() - t0,
            "state": state,
            "restore_tier": b.restore_tier if track else None,
            "restore": b._restore_rows() if track else None,
        }

    def _tracked(self, reply: Any, env_ids: np.ndarray | None = None) -> Any:
        """``reply``, or ``(reply, restore rows of env_ids / all envs)`` when tracking."""
        return (reply, self.backend._restore_rows(env_ids)) if self._track else reply

    def _changed(self, env_ids: np.ndarray | None) -> Any:
        """The reply of a state-changing op: the packed state rows of ``env_ids`` (all: ``None``)."""
        return self._tracked(self.state() if env_ids is None else self.state()[env_ids], env_ids)

    def recover(self, model_writes: list[tuple], handles: list[tuple[str, tuple]], forces: list[tuple],
                rows: np.ndarray) -> None:
        """Bring a rebuilt shard to where the dead one stood: model-field writes (host's record, in
        order), handles (scanners, mocap bindings, terrain), the restore rows, then staged wrenches."""
        for term, env_ids, target_ids, values in model_writes:
            self.backend._write_model_field(term, env_ids, target_ids, values)
        for op, args in handles:
            self.call(op, *args)
        self.backend._load_restore_rows(rows)
        for body_ids, force, torque in forces:
            self.backend._apply_body_force(body_ids, force, torque)

    def state(self, sensors: bool | None = None, bodies: bool = True) -> np.ndarray:
        """``(num_envs, width)`` packed state rows (see the module docstring). Without
        ``sensors`` (default: the ``prefetch_sensors=True`` policy) the sensor columns are
        left unset and the host marks them stale. Without ``bodies`` (and sensors) only the
        qpos and qvel columns are returned: a narrow reply, and the host marks bodies stale."""
        if not bodies and not (self._sensors is not None and (self._prefetch if sensors is None else sensors)):
            out = np.empty((self.num_envs, self._core_width), dtype=self._pack_dtype)
            for cols, read in self._readers[:2]:
                out[:, cols] = np.asarray(read()).reshape(self.num_envs, -1)
            return out
        out = np.empty((self.num_envs, self._width), dtype=self._pack_dtype)
        for cols, read in self._readers:
            out[:, cols] = np.asarray(read()).reshape(self.num_envs, -1)
        if self._sensors is not None and (self._prefetch if sensors is None else sensors):
            out[:, self._sensor_cols] = self.read_sensors()
        return out

    def restore_rows(self) -> np.ndarray:
        """``(num_envs, width)`` float64 restore rows (after a call that raised part-way)."""
        return self.backend._restore_rows()

    def read_sensors(self) -> np.ndarray:
        """``(num_envs, nsensordata)`` all sensors (when not prefetched with the state)."""
        return np.asarray(self.backend._read_sensors(self._sensors)).astype(self._pack_dtype, copy=False)

    # ------------------------------------------------------------------ hot path
    def step(self, ctrl: np.ndarray, nsteps: int, clear_before: bool, clear_after: bool,  # type: ignore[override]
             sensors: bool, bodies: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """The servant's ``step`` (wrenches cleared only where the inner declares BODY_FORCE).
        Returns the packed state and the shard-local envs whose state diverged (``None``: none)."""
        rows = super().step(ctrl, nsteps, clear_before and self._body_force, clear_after and self._body_force)
        return self._tracked((self.state(sensors, bodies), rows))

    def apply_body_force(self, body_ids: np.ndarray, force: np.ndarray, torque: np.ndarray | None,
                         clear_first: bool = False) -> None:
        super().apply_body_force(body_ids, force, torque, clear_first and self._body_force)

    # ------------------------------------------------------------------ teardown
    def close(self) -> None:
        try:
            super().close()
        finally:
            if self._workdir is not None:
                shutil.rmtree(self._workdir, ignore_errors=True)
                self._workdir = None
