"""The shard host: one inner backend inside one Ray actor (plain class, no Ray import).

The host side (:class:`unisim_ray.RayBackend`) has already validated every input
with the contract's checks, so the shard calls the inner backend's *primitives*
directly (no second validation or quaternion normalization: results stay
bit-identical to the inner backend run in-process). Every call that can change
what the getters read returns the shard's packed state rows, so the host cache
is refreshed in the same round trip. With ``track`` (recovery enabled) each of those replies is
``(reply, restore rows)``: the inner's ``_restore_rows`` (its ``restore_tier`` says what loading
them into a rebuilt shard reproduces; MuJoCo's are exact).

Packed state row (one per env, dtype ``pack_dtype``)::

    qpos (nq) | qvel (nv) | xpos (nbody*3) | xquat (nbody*4) | lin_vel (nbody*3)
    | ang_vel (nbody*3) | sensordata (nsensordata, when SENSORS)
"""

from __future__ import annotations

import functools
import os
import pickle
import shutil
import socket
import tempfile
import time
from typing import Any

import numpy as np

from unisim_core.capabilities import Capability
from unisim_core.errors import rebuild_error

from ._scene import materialize_scene

__all__ = ["ShardHost", "STATE_FIELDS", "RemoteException", "rebuild_exception"]

STATE_FIELDS = ("qpos", "qvel", "xpos", "xquat", "lin_vel", "ang_vel", "sensordata")


class RemoteException(Exception):
    """Carries an exception that does not survive pickling (e.g. one whose ``__init__`` takes
    other arguments than its message) from a shard to the host, which rebuilds it."""

    def __init__(self, module: str, qualname: str, message: str, attrs: dict, traceback: str) -> None:
        super().__init__(module, qualname, message, attrs, traceback)
        self.module, self.qualname, self.message, self.attrs = module, qualname, message, attrs

    def __str__(self) -> str:
        return f"{self.qualname}: {self.message}"


def _picklable(value: Any) -> bool:
    try:
        pickle.loads(pickle.dumps(value))
    except Exception:
        return False
    return True


def _portable(fn):
    """Let exceptions raised by ``fn`` cross to the host (see :class:`RemoteException`)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            if _picklable(exc):
                raise
            import traceback

            cls = type(exc)
            attrs = {k: v for k, v in vars(exc).items() if _picklable(v)}
            raise RemoteException(cls.__module__, cls.__qualname__, str(exc), attrs,
                                  traceback.format_exc()) from None

    return wrapper


def rebuild_exception(exc: BaseException) -> BaseException:
    """The original exception for a :class:`RemoteException` (same type, message, attributes),
    built without calling its ``__init__``; ``exc`` itself when that is not possible."""
    if not isinstance(exc, RemoteException):
        return exc
    out = rebuild_error(f"{exc.module}.{exc.qualname}", exc.message, exc.attrs)
    return exc if out is None else out


def _w(arr: Any) -> Any:
    """A writeable array (arrays arriving through Ray's object store are read-only)."""
    if isinstance(arr, np.ndarray) and not arr.flags.writeable:
        return arr.copy()
    return arr


class ShardHost:
    """Hosts ``create_backend(inner, scene, env_stop - env_start, sim_dt, **options)``."""

    def __init__(self, index: int, env_start: int, env_stop: int) -> None:
        self.index = index
        self.env_start, self.env_stop = env_start, env_stop
        self.num_envs = env_stop - env_start
        self.backend: Any = None
        self._workdir: str | None = None
        self._handles: dict[int, Any] = {}
        self._track = False  # whether state-changing replies carry restore rows

    # ------------------------------------------------------------------ cold path
    def start(self, inner: str, scene_payload: dict[str, Any], sim_dt: float, options: dict[str, Any],
              prefetch_sensors: bool | str = "auto", track: bool = False) -> dict:
        """Build the inner backend; return what the host needs (model info from shard 0).
        With ``track`` every state-changing reply also carries the shard's restore rows."""
        from unisim_core.registry import create_backend

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
        cls = type(b)
        import ray

        if ray.is_initialized():  # get_runtime_context() would start Ray outside an actor
            node_ip, node_id = ray.util.get_node_ip_address(), ray.get_runtime_context().get_node_id()
        else:  # outside Ray (unit tests of this class)
            node_ip, node_id = "127.0.0.1", ""
        return {
            "model_info": info,
            "capabilities": caps,
            "init_terms": frozenset(cls.INIT_TERMS),
            "interval_terms": frozenset(cls.INTERVAL_TERMS),
            "reset_terms": frozenset(cls.RESET_TERMS),
            "inner_class": f"{cls.__module__}:{cls.__qualname__}",
            "inner_name": cls.name or cls.__name__,
            "inner_version": cls.version,
            "widths": tuple(int(w) for w in widths),
            "dtypes": tuple(dtypes),
            "pack_dtype": self._pack_dtype.str,
            "node_ip": node_ip,
            "node_id": node_id,
            "hostname": socket.gethostname(),
            "pid": os.getpid(),
            "startup_s": time.perf_counter() - t0,
            "max_abs_value": float(cls.MAX_ABS_VALUE),
            "declarations": {"UNSUPPORTED_SCENE_FEATURES": dict(cls.UNSUPPORTED_SCENE_FEATURES),
                             "KNOWN_KIT_DEVIATIONS": dict(cls.KNOWN_KIT_DEVIATIONS), "KIT_RULES": cls.KIT_RULES,
                             "SNAPSHOT_TIER": self.backend.snapshot_tier},
            "state": state,
            "restore_tier": b.restore_tier if track else None,
            "restore": b._restore_rows() if track else None,
        }

    def _tracked(self, reply: Any, env_ids: np.ndarray | None = None) -> Any:
        """``reply``, or ``(reply, restore rows of env_ids / all envs)`` when tracking."""
        return (reply, self.backend._restore_rows(env_ids)) if self._track else reply

    def recover(self, model_writes: list[tuple], handles: list[tuple[str, tuple]], forces: list[tuple],
                rows: np.ndarray) -> None:
        """Bring a rebuilt shard to where the dead one stood: model-field writes (host's record, in
        order), handles (scanners, mocap bindings, terrain), the restore rows, then staged wrenches."""
        for term, env_ids, target_ids, values in model_writes:
            self.backend._write_model_field(term, env_ids, target_ids, values)
        for method, args in handles:
            getattr(self, method)(*args)
        self.backend._load_restore_rows(rows)
        for body_ids, force, torque in forces:
            self.backend._apply_body_force(body_ids, force, torque)

    def ping(self) -> int:
        return os.getpid()

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

    def _clear(self, clear_forces: bool) -> None:
        if clear_forces and self._body_force:
            self.backend._clear_body_forces()

    # ------------------------------------------------------------------ hot path
    def step(self, ctrl: np.ndarray, nsteps: int, clear_before: bool, clear_after: bool,
             sensors: bool, bodies: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """``_step``; staged wrenches are cleared where the in-process base would clear them
        (after the last substep of a ``step``), before the state is read. Returns the packed
        state and the shard-local envs whose state diverged (``None``: none)."""
        self._clear(clear_before)
        try:
            self.backend._step(_w(ctrl), nsteps)
        finally:
            self._clear(clear_after)
        diverged = self.backend._diverged_mask()
        rows = None if diverged is None or not diverged.any() else np.flatnonzero(diverged)
        return self._tracked((self.state(sensors, bodies), rows))

    def set_state(self, env_ids: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> np.ndarray:
        self.backend._set_state(_w(env_ids), _w(qpos), _w(qvel))
        return self._tracked(self.state()[env_ids], env_ids)

    def apply_body_force(self, clear_forces: bool, body_ids: np.ndarray, force: np.ndarray,
                         torque: np.ndarray | None) -> None:
        self._clear(clear_forces)
        self.backend._apply_body_force(_w(body_ids), _w(force), _w(torque))

    # ------------------------------------------------------------------ model fields, snapshots, kinematics
    def write_model_field(self, term: str, env_ids: np.ndarray, target_ids: np.ndarray | None,
                          values: np.ndarray) -> np.ndarray:
        self.backend._write_model_field(term, _w(env_ids), _w(target_ids), _w(values))
        return self._tracked(self.state()[env_ids], env_ids)

    def read_model_field(self, term: str) -> np.ndarray:
        return self.backend._read_model_field(term)

    def get_physics_state(self) -> np.ndarray:
        return self.backend._get_physics_state()

    def set_physics_state(self, state: np.ndarray) -> np.ndarray:
        self.backend._set_physics_state(_w(state))
        return self._tracked(self.state())

    def site_jacobian(self, site_id: int, dof_indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.backend._site_jacobian(site_id, _w(dof_indices))

    # ------------------------------------------------------------------ terrain, scanners, mocap
    def terrain_spawn_data(self) -> dict[str, Any]:
        data = self.backend._terrain_spawn_data()
        self._handles[-1] = data.sample_height
        return {"origins": np.asarray(data.origins), "hfield_geom_id": int(data.hfield_geom_id),
                "size": tuple(float(x) for x in data.size)}

    def sample_height(self, xy: np.ndarray) -> np.ndarray:
        return np.asarray(self._handles[-1](xy))

    def create_scanner(self, key: int, hfield_geom_id: int, offsets: np.ndarray, frame_body_id: int,
                       alignment: str, output: str) -> int:
        scanner = self.backend._create_hfield_scanner(hfield_geom_id, _w(offsets), frame_body_id, alignment, output)
        self._handles[key] = scanner
        return int(scanner.num_points)

    def scan(self, key: int) -> np.ndarray:
        return self._handles[key].scan()

    def bind_mocap(self, key: int, body_id: int) -> None:
        self._handles[key] = self.backend._bind_mocap_pose(body_id)

    def mocap_get(self, key: int) -> tuple[np.ndarray, np.ndarray]:
        return self._handles[key].get()

    def mocap_write(self, key: int, env_ids: np.ndarray, pos: np.ndarray, quat: np.ndarray) -> np.ndarray:
        self._handles[key]._write(_w(env_ids), _w(pos), _w(quat))
        return self._tracked(self.state()[env_ids], env_ids)

    def bind_contacts(self, key: int, body_ids: np.ndarray, against_ids: np.ndarray | None) -> None:
        fill = self.backend._bind_contact_forces(_w(body_ids), None if against_ids is None else _w(against_ids))
        self._handles[key] = (fill, len(body_ids))

    def contacts(self, key: int) -> np.ndarray:
        """``(shard envs, n, 3)`` contact forces of the shard's engine (the host zeroes reset envs)."""
        fill, n = self._handles[key]
        out = np.zeros((self.backend.num_envs, n, 3))
        fill(out)
        return out

    def cleanup_scene_assets(self) -> None:
        self.backend.cleanup_scene_assets()

    # ------------------------------------------------------------------ teardown
    def close(self) -> None:
        try:
            if self.backend is not None:
                self.backend.close()
        finally:
            self.backend = None
            self._handles.clear()
            if self._workdir is not None:
                shutil.rmtree(self._workdir, ignore_errors=True)
                self._workdir = None


for _name, _fn in list(vars(ShardHost).items()):
    if callable(_fn) and not _name.startswith("_"):
        setattr(ShardHost, _name, _portable(_fn))
del _name, _fn
