"""``WorkerBackend``: a backend whose primitives run in a worker process.

``create_backend(name, ..., isolation="subprocess")`` returns one that hosts any registered
backend (``unisim_core.plugin.worker.hosted``: the core's :class:`~unisim_core.plugin.servant.Servant` behind the
worker's pipes and shared memory; Ray's shard actors serve the same op table). A subclass hosts
something else by overriding :meth:`WorkerBackend._worker_launch` (interpreter, argv, environment,
INIT arguments, deadlines) and, optionally, :meth:`WorkerBackend._check_description` (e.g. verify
an engine report). The ``unisim-isaacsim`` host is such a subclass: Isaac Sim's interpreter runs its worker module.

The host validates every input (the base class), forwards primitives over the worker channel, and
reads hot-path state from shared memory refreshed by the worker after each ``step`` and
``set_state``. Capabilities are the worker's (its ``describe`` reply), limited to the class's
``CAPABILITIES``, less an interactive ``render`` window and device arrays (``NOT_FORWARDED``) and
less those needing ops the worker does not serve. What the inner backend computes with the core's
shared code from its model and the contract's state (``describe``'s ``shared_capabilities``: site
Jacobian, height scans, terrain, video frames) is computed here from the same model info and the
state in shared memory (the height-field sampler fetched once by the ``height_field`` op): the same
answers without a round trip. Otherwise the op is forwarded (native Jacobians, scanners, terrain,
renderers); mocap bindings are forwarded. Errors the inner backend raises
for bad input come back as the same UniSim error class (rebuilt from the worker's
:class:`~unisim_core.plugin.servant.ErrorRecord`); any other failure poisons the backend (see ``WorkerClient``).

Worker wire layout (declared in ``describe``, converted here at the boundary):

- ``env_rows``: the contract env id held by each engine row, in engine row order (a permutation
  of ``range(num_envs)``; absent or ``None``: identity). Every per-env slot and array crosses in
  engine row order, and ``env_ids`` sent to the worker are engine rows.
- ``quat_order``: ``"wxyz"`` (default) or ``"xyzw"``, the order of quaternions in ``qpos``
  (free/ball joints) and in the body orientation table (mocap poses cross as wxyz).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

import attrs
import numpy as np

from unisim_core.contract._playback import Playback
from unisim_core.contract.backend import SimBackend
from unisim_core.contract.bindings import BackendHeightScanner, BackendMocapPoseBinding
from unisim_core.contract.capabilities import Capability
from unisim_core.contract.config import BackendTerrainSpawnData, CameraCfg, SceneCfg
from unisim_core.contract.errors import EngineError, InvalidInputError, InvalidTypeError, UniSimError
from unisim_core.contract.heightfield import HFieldSampler
from unisim_core.contract.kinematics import site_jacobian
from unisim_core.contract.model import ModelInfo
from unisim_core.plugin.servant.plain import (
    adopt_description,
    pack_array,
    sampler_from_plain,
    scene_to_plain,
    shared_capabilities,
    unpack_array,
)
from unisim_core.plugin.worker.client import WorkerClient
from unisim_core.plugin.worker.errors import WorkerCallError, WorkerStartupError

__all__ = ["WorkerBackend", "WorkerLaunch", "NOT_FORWARDED", "QUAT_ORDERS"]

#: Capabilities that cannot cross a process boundary: an interactive window, views of the worker's memory.
NOT_FORWARDED = frozenset({Capability.RENDER, Capability.DEVICE_ARRAYS})
#: Worker ops a capability needs when the host forwards it (``_SHARED_OPS`` when the host computes it).
_FORWARD_OPS = {Capability.HEIGHT_SCAN: ("create_scanner", "scan"),
                Capability.TERRAIN: ("terrain_spawn_data", "sample_height"),
                Capability.MOCAP: ("bind_mocap", "mocap_get", "mocap_write"),
                Capability.SITE_JACOBIAN: ("site_jacobian",),
                Capability.VIDEO_CAPTURE: ("init_renderer", "capture_frame")}
_SHARED_OPS = {Capability.HEIGHT_SCAN: ("height_field",), Capability.TERRAIN: ("height_field",)}
INIT_TIMEOUT_S = 300.0
CALL_TIMEOUT_S = 60.0
QUAT_ORDERS = ("wxyz", "xyzw")
_WXYZ_FROM_XYZW = np.array([3, 0, 1, 2])
_XYZW_FROM_WXYZ = np.array([1, 2, 3, 0])


@attrs.frozen(kw_only=True)
class WorkerLaunch:
    """How a :class:`WorkerBackend` starts its worker.

    ``argv`` runs a program that serves the hosted op protocol (``unisim_core.plugin.worker.serve``),
    ``env`` replaces the environment (``None``: inherit), ``init_args`` is the INIT payload,
    deadlines are in seconds (INIT's is re-armed by every progress message, which goes to
    ``on_progress``). ``reuse``: the program serves several INITs in turn (its factory is
    ``reusable``), so a closed backend's worker may serve the next one (``unisim_core.plugin.worker.pool``).
    """

    argv: tuple[str, ...] = attrs.field(converter=tuple)
    init_args: Any = None
    env: Mapping[str, str] | None = None
    init_timeout: float = INIT_TIMEOUT_S
    call_timeout: float = CALL_TIMEOUT_S
    on_progress: Callable[[str], None] | None = None
    reuse: bool = False


def hosted_launch(target: str, scene: SceneCfg, num_envs: int, sim_dt: float, options: Mapping[str, Any]
                  ) -> WorkerLaunch:
    """Host any registered backend in a worker of this interpreter."""
    plain = {k: (np.dtype(v).name if k == "np_dtype" else v) for k, v in options.items()}
    return WorkerLaunch(
        argv=(sys.executable, "-m", "unisim_core.plugin.worker", "unisim_core.plugin.worker.hosted:factory"),
        init_args={"target": target, "scene": scene_to_plain(scene), "num_envs": num_envs, "sim_dt": sim_dt,
                   "options": plain},
        reuse=True,
    )


def _remote_error(exc: WorkerCallError) -> BaseException:
    """The error raised in the worker, rebuilt as its own class when it is a UniSim error (any
    module's) or a builtin input error; ``exc`` itself otherwise."""
    err = exc.record.rebuild()
    if isinstance(err, UniSimError) or ("." not in exc.record.type and isinstance(err, ValueError | TypeError
                                                                                   | KeyError)):
        return err
    return exc


def _positive_seconds(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value) or value <= 0:
        raise InvalidInputError(f"{name}: expected a positive finite number of seconds, got {value!r}")
    return float(value)


def _engine_rows(env_rows: Any, num_envs: int) -> np.ndarray | None:
    """``rows[e]`` = engine row of contract env ``e``; ``None`` for the identity layout."""
    if env_rows is None:
        return None
    if (type(env_rows) is not list or len(env_rows) != num_envs or not all(type(e) is int for e in env_rows)
            or sorted(env_rows) != list(range(num_envs))):
        raise EngineError(f"worker reported env_rows {env_rows!r}: expected a permutation of range({num_envs}) "
                          f"(the contract env id held by each engine row)")
    order = np.asarray(env_rows, dtype=np.int64)
    if np.array_equal(order, np.arange(num_envs)):
        return None
    rows = np.empty(num_envs, dtype=np.int64)
    rows[order] = np.arange(num_envs)
    return rows


class WorkerBackend(SimBackend):
    """A backend running in a worker process (same contract, same results)."""

    CAPABILITIES = frozenset(Capability) - NOT_FORWARDED
    ATOMIC_STEP_CALLS = True  # an interrupt must not cut a request/reply pair in two

    def __init__(self, scene: SceneCfg, num_envs: int, sim_dt: float, *, target: str | None = None,
                 target_cls: type[SimBackend] | None = None, call_timeout_s: float | None = None,
                 **options: Any) -> None:
        if target_cls is not None:
            self.name = target_cls.name or target
            self.version = target_cls.version
            self.options_cls = target_cls.options_cls
        if call_timeout_s is not None:
            call_timeout_s = _positive_seconds("call_timeout_s", call_timeout_s)
        self._target = target
        self._client: WorkerClient | None = None
        super().__init__(scene, num_envs, sim_dt, **options)
        self._fresh: set[str] = set()  # lazily published tables valid for the current state
        self._forces_staged = False
        self._step_diverged: list[int] | None = None
        launch = self._worker_launch(options)
        if call_timeout_s is not None:
            launch = attrs.evolve(launch, call_timeout=call_timeout_s)
        try:
            self._client = WorkerClient(launch.argv, env=launch.env, init_args=launch.init_args,
                                        init_timeout=launch.init_timeout, call_timeout=launch.call_timeout,
                                        on_progress=launch.on_progress, reuse=launch.reuse)
        except WorkerStartupError as exc:  # the inner backend refused: raise what it raised in-process
            cause = exc.__cause__
            if not isinstance(cause, WorkerCallError) or _remote_error(cause) is cause:
                raise
            raise _remote_error(cause) from exc
        try:
            self._setup(self._call("describe"))
        except BaseException:
            self._client.close()
            raise

    # -- customization points ------------------------------------------------------------
    def _worker_launch(self, options: Mapping[str, Any]) -> WorkerLaunch:
        """How to start the worker (``options``: the keyword options as passed)."""
        if self._target is None:
            raise TypeError(f"{type(self).__name__} needs target= or an overridden _worker_launch()")
        return hosted_launch(self._target, self.scene, self._num_envs, self.sim_dt, options)

    def _check_description(self, desc: Mapping[str, Any]) -> None:
        """Inspect the worker's ``describe`` reply before use; raise to refuse the worker."""

    # -- set-up ------------------------------------------------------------------------------
    def _setup(self, desc: Mapping[str, Any]) -> None:
        self._check_description(desc)
        # the hosted backend's declarations (terms, what it refuses, known kit deviations, snapshot tier)
        self._remote_info, caps = adopt_description(self, desc)
        self._shared = shared_capabilities(desc) & caps
        self._height_fields: dict[int, HFieldSampler] = {}
        served = set(self._client.ops)

        def offered(cap: Capability) -> bool:
            needs = _SHARED_OPS if cap in self._shared else _FORWARD_OPS
            return all(op in served for op in needs.get(cap, ()))
        self._caps = frozenset(c for c in caps - NOT_FORWARDED if offered(c))
        if Capability.VIDEO_CAPTURE not in self._caps:
            self._caps -= {Capability.PLAYBACK}
        self._env_row = _engine_rows(desc.get("env_rows"), self._num_envs)
        quat_order = desc.get("quat_order", "wxyz")
        if quat_order not in QUAT_ORDERS:
            raise EngineError(f"worker reported quat_order {quat_order!r}; expected one of {QUAT_ORDERS}")
        self._xyzw = quat_order == "xyzw"
        info, n = self._remote_info, self._num_envs
        nbody, dtype = len(info.body_names), np.dtype(desc["np_dtype"])
        slots = self._client.slots
        self._ctrl = slots.add("ctrl", (n, len(info.actuator_names)), dtype)
        self._in_qpos = slots.add("in_qpos", (n, info.nq), np.float64)
        self._in_qvel = slots.add("in_qvel", (n, info.nv), np.float64)
        self._qpos = slots.add("qpos", (n, info.nq), dtype)
        self._qvel = slots.add("qvel", (n, info.nv), dtype)
        self._xpos = slots.add("xpos", (n, nbody, 3), dtype)
        self._xquat = slots.add("xquat", (n, nbody, 4), dtype)
        self._linvel = slots.add("linvel", (n, nbody, 3), dtype)
        self._angvel = slots.add("angvel", (n, nbody, 3), dtype)
        self._sensordata = slots.add("sensordata", (n, max(1, int(info.sensor_dims.sum()))), dtype)
        self._step_frames: dict[int, bytes] = {}
        self._call("attach", descriptors=slots.descriptors)

    def _call(self, op: str, **args: Any) -> Any:
        if op not in ("bodies", "sensors"):
            self._fresh.clear()  # any other op may change the state
        try:
            return self._client.request(op, args)
        except WorkerCallError as exc:
            raise _remote_error(exc) from exc

    @property
    def capabilities(self) -> frozenset[Capability]:
        return self._caps

    @property
    def worker_pid(self) -> int:
        return self._client.pid

    def __reduce_ex__(self, protocol: int) -> Any:
        pid = self._client.pid if self._client is not None else None
        raise InvalidTypeError(self._unpicklable(f"its engine runs in worker process {pid}, reached through "
                                                 f"pipes and shared memory of this process"))

    def _after_fork_in_child(self) -> None:
        if self._client is not None:
            self._client.forget()  # the worker is the parent's: never stopped from here

    def _close(self) -> None:
        if self._client is None:
            return
        closed = False
        try:
            if self._client.faulted is None:
                self._call("close")
                closed = True
        finally:
            self._client.close(park=closed)  # a worker whose backend closed cleanly may serve the next one

    # -- boundary conversion -------------------------------------------------------------
    def _from_engine(self, table: np.ndarray) -> np.ndarray:
        """Engine rows -> contract env order, as a new array of ``np_dtype``."""
        if self._env_row is None:
            return table.astype(self.np_dtype)
        return table[self._env_row].astype(self.np_dtype, copy=False)

    def _env_order(self, arr: np.ndarray) -> np.ndarray:
        """Engine rows -> contract env order, keeping the dtype (cold-path arrays)."""
        return arr if self._env_row is None else np.ascontiguousarray(arr[self._env_row])

    def _to_engine(self, arr: np.ndarray) -> np.ndarray:
        """Contract env order -> engine rows (``arr`` itself for the identity layout)."""
        if self._env_row is None:
            return arr
        out = np.empty_like(arr)
        out[self._env_row] = arr
        return out

    def _engine_ids(self, env_ids: np.ndarray) -> list[int]:
        return (env_ids if self._env_row is None else self._env_row[env_ids]).tolist()

    def _qpos_from_wire(self, qpos: np.ndarray) -> np.ndarray:
        if self._xyzw:
            for c in self._quat_cols:
                qpos[:, c:c + 4] = qpos[:, c + _WXYZ_FROM_XYZW]
        return qpos

    def _qpos_to_wire(self, qpos: np.ndarray) -> np.ndarray:
        if self._xyzw:
            qpos = qpos.copy()
            for c in self._quat_cols:
                qpos[:, c:c + 4] = qpos[:, c + _XYZW_FROM_WXYZ]
        return qpos

    # primitives ------------------------------------------------------------------------
    def _load_model_info(self) -> ModelInfo:
        return self._remote_info

    def _step(self, ctrl: np.ndarray, nsteps: int) -> None:
        if self._env_row is None:
            self._ctrl[...] = ctrl
        else:
            self._ctrl[self._env_row] = ctrl
        frame = self._step_frames.get(nsteps)
        if frame is None:
            frame = self._step_frames[nsteps] = self._client.prepare("step", {"nsteps": nsteps})
        self._fresh.clear()
        try:
            self._step_diverged = self._client.request_prepared("step", frame)
        except WorkerCallError as exc:
            raise _remote_error(exc) from exc

    def _diverged_mask(self) -> np.ndarray | None:
        rows, self._step_diverged = self._step_diverged, None
        if not rows:
            return None
        mask = np.zeros(self._num_envs, dtype=bool)
        mask[rows] = True  # engine rows
        return mask if self._env_row is None else mask[self._env_row]

    def _set_state(self, env_ids: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> None:
        k = len(env_ids)
        self._in_qpos[:k] = self._qpos_to_wire(qpos)
        self._in_qvel[:k] = qvel
        self._call("set_state", env_ids=self._engine_ids(env_ids))

    def get_qpos(self) -> np.ndarray:
        if self._closed:  # a method bound before close() must not read released shared memory
            self._check_open()
        if self._env_row is None and not self._xyzw:
            return self._qpos.astype(self.np_dtype)
        return self._qpos_from_wire(self._from_engine(self._qpos))

    def get_qvel(self) -> np.ndarray:
        if self._closed:
            self._check_open()
        return self._from_engine(self._qvel)

    def _published(self, op: str) -> None:
        self._check_open()  # bindings reach here: never read released shared memory
        if op not in self._fresh:
            self._call(op)
            self._fresh.add(op)

    def _body(self, table: np.ndarray, body_ids: np.ndarray) -> np.ndarray:
        self._published("bodies")
        rows = table[:, body_ids] if self._env_row is None else table[self._env_row[:, None], body_ids]
        return np.ascontiguousarray(rows, dtype=self.np_dtype)

    def _body_pos_w(self, body_ids: np.ndarray) -> np.ndarray:
        return self._body(self._xpos, body_ids)

    def _body_quat_w(self, body_ids: np.ndarray) -> np.ndarray:
        quat = self._body(self._xquat, body_ids)
        return np.ascontiguousarray(quat[..., _WXYZ_FROM_XYZW]) if self._xyzw else quat

    def _body_lin_vel_w(self, body_ids: np.ndarray) -> np.ndarray:
        return self._body(self._linvel, body_ids)

    def _body_ang_vel_w(self, body_ids: np.ndarray) -> np.ndarray:
        return self._body(self._angvel, body_ids)

    def _read_sensor(self, index: int) -> np.ndarray:
        self._published("sensors")
        adr = int(self._remote_info.sensor_adr[index])
        dim = int(self._remote_info.sensor_dims[index])
        return np.ascontiguousarray(self._from_engine(self._sensordata[:, adr:adr + dim]))

    def _apply_body_force(self, body_ids: np.ndarray, force: np.ndarray, torque: np.ndarray | None) -> None:
        self._forces_staged = True
        self._call("apply_body_force", body_ids=body_ids.tolist(), force=pack_array(self._to_engine(force)),
                   torque=None if torque is None else pack_array(self._to_engine(torque)))

    def _clear_body_forces(self) -> None:
        # The base class clears after every step; only a staged force needs the round trip.
        if self._forces_staged:
            self._call("clear_body_forces")
            self._forces_staged = False

    def _site_jacobian(self, site_id: int, dof_indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if Capability.SITE_JACOBIAN in self._shared:  # the core's, over the body poses in shared memory
            return site_jacobian(self, site_id, dof_indices)
        jp, jr = self._call("site_jacobian", site_id=site_id, dof_indices=dof_indices.tolist())
        return self._env_order(unpack_array(jp)), self._env_order(unpack_array(jr))

    def _height_field(self, geom_id: int) -> HFieldSampler:
        """The worker's sampler, fetched once per geom (static: height fields fixed to the world)."""
        sampler = self._height_fields.get(geom_id)
        if sampler is None:
            sampler = self._height_fields[geom_id] = sampler_from_plain(self._call("height_field", geom_id=geom_id))
        return sampler

    def _create_hfield_scanner(self, hfield_geom_id: int, offsets: np.ndarray, frame_body_id: int,
                               alignment: str, output: str) -> BackendHeightScanner:
        if Capability.HEIGHT_SCAN in self._shared:  # the core's scanner over this host's body poses
            return super()._create_hfield_scanner(hfield_geom_id, offsets, frame_body_id, alignment, output)
        key, points = self._call("create_scanner", hfield_geom_id=hfield_geom_id, offsets=pack_array(offsets),
                                 frame_body_id=frame_body_id, alignment=alignment, output=output)
        return _WorkerHeightScanner(self, key, points)

    def _terrain_spawn_data(self) -> BackendTerrainSpawnData:
        if Capability.TERRAIN in self._shared:
            return super()._terrain_spawn_data()
        data = self._call("terrain_spawn_data")

        def sample_height(xy: np.ndarray) -> np.ndarray:
            self._check_open()
            return unpack_array(self._call("sample_height", xy=pack_array(np.asarray(xy, dtype=np.float64))))
        return BackendTerrainSpawnData(origins=unpack_array(data["origins"]), sample_height=sample_height,
                                       hfield_geom_id=data["hfield_geom_id"], size=tuple(data["size"]))

    def _bind_mocap_pose(self, body_id: int) -> BackendMocapPoseBinding:
        return _WorkerMocapBinding(self, self._call("bind_mocap", body_id=body_id),
                                   self._remote_info.body_names[body_id])

    def _get_physics_state(self) -> np.ndarray:
        return self._env_order(unpack_array(self._call("get_physics_state")))

    def _bind_contact_forces(self, body_ids: np.ndarray, against_ids: np.ndarray | None):
        """The worker binds the inner backend's fill once (op ``bind_contacts``, with ``width`` 6 for
        a binding with torques); each read is one ``contacts`` round trip returning
        ``(num_envs, n, width)`` in engine-row order."""
        args = {"body_ids": body_ids.tolist(), "against_ids": None if against_ids is None else against_ids.tolist()}
        if self._contact_fill_width != 3:  # a worker without contact_torques (Isaac Sim's) never sees width
            args["width"] = self._contact_fill_width
        key = self._call("bind_contacts", **args)

        def fill(out: np.ndarray) -> None:
            out[...] = self._env_order(unpack_array(self._call("contacts", key=key)))
        return fill

    def _set_physics_state(self, state: np.ndarray) -> None:
        self._call("set_physics_state", state=pack_array(self._to_engine(state)))
        self._forces_staged = True  # a snapshot may restore staged forces: clear after the next step

    def _write_model_field(self, term: str, env_ids: np.ndarray, target_ids: np.ndarray | None,
                           values: np.ndarray) -> None:
        self._call("write_model_field", term=term, env_ids=self._engine_ids(env_ids),
                   target_ids=None if target_ids is None else target_ids.tolist(), values=pack_array(values))

    def _read_model_field(self, term: str) -> np.ndarray:
        return self._env_order(unpack_array(self._call("read_model_field", term=term)))

    def _init_renderer(self, spacing: float, offset_mode: str, headless: bool, capture: bool, width: int,
                       height: int, camera: CameraCfg) -> None:
        """Frames of the core's renderer are drawn here from the state in shared memory; a worker's own
        renderer draws in the worker (the frame crosses the control channel)."""
        if Capability.VIDEO_CAPTURE in self._shared:
            return Playback._init_renderer(self, spacing, offset_mode, headless, capture, width, height, camera)
        cam = {k: (list(v) if isinstance(v, tuple) else v) for k, v in attrs.asdict(camera).items() if v is not None}
        self._call("init_renderer", spacing=spacing, offset_mode=offset_mode, headless=headless, capture=capture,
                   width=width, height=height, camera=cam)

    def _capture_frame(self) -> np.ndarray:
        if Capability.VIDEO_CAPTURE in self._shared:
            return Playback._capture_frame(self)
        return unpack_array(self._call("capture_frame"))


class _WorkerHeightScanner(BackendHeightScanner):
    """A scanner in the worker (a native one): each ``scan()`` is one round trip."""

    def __init__(self, backend: WorkerBackend, key: int, num_points: int) -> None:
        self._backend, self._key, self.num_points = backend, key, num_points

    def scan(self) -> np.ndarray:
        b = self._backend
        b._check_open()
        return b._env_order(unpack_array(b._call("scan", key=self._key)))


class _WorkerMocapBinding(BackendMocapPoseBinding):
    """A mocap binding in the worker: ``get`` and writes are one round trip each (a write republishes qpos)."""

    def __init__(self, backend: WorkerBackend, key: int, body_name: str) -> None:
        self._backend, self._key = backend, key
        self.body_name, self.num_envs = body_name, backend.num_envs

    def get(self) -> tuple[np.ndarray, np.ndarray]:
        b = self._backend
        b._check_open()
        pos, quat = b._call("mocap_get", key=self._key)
        return b._env_order(unpack_array(pos)), b._env_order(unpack_array(quat))

    def _write(self, env_ids: np.ndarray, pos: np.ndarray, quat: np.ndarray) -> None:
        b = self._backend
        b._check_open()
        b._call("mocap_write", key=self._key, env_ids=b._engine_ids(env_ids), pos=pack_array(pos),
                quat=pack_array(quat))
