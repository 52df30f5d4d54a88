"""``RayBackend``: ``num_envs`` envs presented as one ``SimBackend``, run as K shards of any
registered backend inside Ray actors.

Envs are split contiguously (earlier shards take the remainder). Every contract
call fans out to the shards owning the requested envs and gathers the results
in env order. The hot path is one remote call per shard per ``step``: the shard
returns its packed state (qpos, qvel, all body poses/velocities, sensordata) in
the same round trip, and the getters read that host cache without any further
remote call. ``ray`` is imported when a backend is constructed, never when the
plugin is listed. The remote calls (fan-out, deadlines, faults, recovery) are in ``_calls``,
the Ray session in ``_session``, what runs in each actor in ``_shard``.

What the inner backend computes with the core's shared code from its model and the contract's state
(the description's ``shared_capabilities``: site Jacobian, height scans, terrain, video frames) is
computed here, over all envs, from the same model info and the host's state cache (the height-field
sampler fetched once from shard 0): the same answers as in-process, without a round trip per call.
Native versions (a Jacobian, scanner or terrain of the engine's own) are forwarded to the shards.
"""

from __future__ import annotations

import atexit
import importlib.metadata
import itertools
import logging
import sys
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from unisim_core.contract.backend import SimBackend
from unisim_core.contract.bindings import BackendHeightScanner, BackendMocapPoseBinding
from unisim_core.contract.capabilities import Capability
from unisim_core.contract.config import BackendTerrainSpawnData, SceneCfg
from unisim_core.contract.errors import InvalidTypeError, UniSimError
from unisim_core.contract.heightfield import HFieldSampler
from unisim_core.contract.kinematics import site_jacobian
from unisim_core.contract.model import ModelInfo
from unisim_core.contract.options import build_options
from unisim_core.plugin.servant import adopt_description
from unisim_core.plugin.servant.plain import sampler_from_plain, shared_capabilities

from . import _forwarded
from ._calls import ShardCalls, ShardInfo
from ._errors import ShardError
from ._layout import split_envs
from ._options import RayOptions
from ._placement import Placement
from ._pool import evict_reserving, pool_key
from ._recovery import RecoveryRecord
from ._scene import pack_scene
from ._session import LOCAL_RAY_SYSTEM_CONFIG, ensure_ray, import_ray, kill_actors, park_actors, shutdown_ray
from ._shard import STATE_FIELDS

__all__ = ["RayBackend", "ShardInfo", "FORWARDED_CAPABILITIES", "LOCAL_RAY_SYSTEM_CONFIG"]

log = logging.getLogger("unisim_ray")

#: Capabilities offered when the inner backend declares them (see ``unisim_ray._forwarded``).
FORWARDED_CAPABILITIES: frozenset[Capability] = _forwarded()
_FRAMES = frozenset({Capability.VIDEO_CAPTURE, Capability.PLAYBACK})


def _version() -> str:
    try:
        return importlib.metadata.version("unisim-ray")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - source checkout
        return "0"


def _cat(parts: list[np.ndarray]) -> np.ndarray:
    """Per-shard replies stacked in env order into one new C-contiguous, writeable array."""
    first = parts[0]
    out = np.empty((sum(len(p) for p in parts),) + first.shape[1:], dtype=first.dtype)
    return np.concatenate(parts, axis=0, out=out)


# ----------------------------------------------------------------------------- the Ray session

# ----------------------------------------------------------------------------- the backend
class RayBackend(ShardCalls, SimBackend):
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
        self._pool_key: Any = None  # key of this backend's actors in the idle pool (None: not pooled)
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
        ray = self._ray = import_ray()
        ensure_ray(ray, o, self._num_envs)
        try:
            self._start(payload, inner_kwargs)
        except BaseException as exc:
            # the inner backend refused (bad scene, option, keyframe): its shards are healthy
            self._release(park=isinstance(exc, UniSimError | TypeError) and not isinstance(exc, ShardError))
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
            from unisim_core.contract.registry import get_backend_spec

            spec = get_backend_spec(o.inner)  # BackendNotFoundError for a typo, before Ray starts
            build_options(spec.options_cls, o.inner, kwargs)
        return kwargs

    def _start(self, payload: dict[str, Any], inner_kwargs: dict[str, Any]) -> None:
        ray, o = self._ray, self.options
        cpus = o.actor_num_cpus
        if cpus is None:
            multi = sum(1 for n in ray.nodes() if n.get("Alive")) > 1
            cpus = 1.0 if multi or o.placement is not None else 0.0
        self._actor_cpus = cpus
        if o.placement is not None:  # idle actors holding CPUs must not keep the group's bundles from fitting
            evict_reserving(ray, None)
        self._placement = Placement(ray, o, self._ranges, cpus)
        if o.reuse_actors and self._placement.group is None:
            self._pool_key = pool_key(ray, self._placement.options(0))
        self._actors = [None] * len(self._ranges)
        self._payload_ref, self._inner_kwargs = ray.put(payload), inner_kwargs
        results = self._launch(range(len(self._ranges)))
        if self._record is None:
            self._payload_ref = None  # kept only to rebuild shards
        first = results[0]
        desc = first["description"]
        # the inner backend's declarations (terms, what it refuses, known kit deviations, snapshot tier)
        self._inner_info, caps = adopt_description(self, desc)
        self._shared = shared_capabilities(desc) & caps  # computed here (see the module docstring)
        self._caps = caps if Capability.VIDEO_CAPTURE in self._shared else caps - _FRAMES
        self._height_fields: dict[int, HFieldSampler] = {}
        self._inner_class = desc["inner_class"]
        self._alloc_cache(first)
        for k, (a, b) in enumerate(self._ranges):
            self._state[a:b] = results[k]["state"]
            if self._record is not None:
                self._record.record_rows(k, None, results[k]["restore"])

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
        if Capability.SITE_JACOBIAN in self._shared:  # the core's, over the cached body poses
            return site_jacobian(self, site_id, dof_indices)
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
    def _height_field(self, geom_id: int) -> HFieldSampler:
        """Shard 0's sampler, fetched once per geom (static: height fields fixed to the world)."""
        sampler = self._height_fields.get(geom_id)
        if sampler is None:
            plain = self._fanout("height field", "height_field", lambda k, a, b: (geom_id,), shards=[0])[0]
            sampler = self._height_fields[geom_id] = sampler_from_plain(plain)
        return sampler

    def _terrain_spawn_data(self) -> BackendTerrainSpawnData:
        if Capability.TERRAIN in self._shared:  # the core's, from the sampler
            return super()._terrain_spawn_data()
        data = self._handle("get_terrain_spawn_data", "terrain_spawn_data", (), shards=[0])[0]

        def sample_height(xy: np.ndarray) -> np.ndarray:
            out = self._fanout("sample_height", "sample_height", lambda k, a, b: (np.asarray(xy),), shards=[0])[0]
            return np.array(out)  # replies can be read-only views of Ray's object store

        return BackendTerrainSpawnData(origins=np.array(data["origins"]), sample_height=sample_height,
                                       hfield_geom_id=data["hfield_geom_id"], size=data["size"])

    def _create_hfield_scanner(self, hfield_geom_id: int, offsets: np.ndarray, frame_body_id: int,
                               alignment: str, output: str) -> BackendHeightScanner:
        if Capability.HEIGHT_SCAN in self._shared:  # the core's scanner over the cached body poses
            return super()._create_hfield_scanner(hfield_geom_id, offsets, frame_body_id, alignment, output)
        key = next(self._handle_keys)
        points = self._handle("create_hfield_scanner", "create_scanner",
                              (key, hfield_geom_id, offsets, frame_body_id, alignment, output))
        return _RayHeightScanner(self, key, points[0])

    def _bind_mocap_pose(self, body_id: int) -> BackendMocapPoseBinding:
        key = next(self._handle_keys)
        self._handle("bind_mocap_pose", "bind_mocap", (key, body_id))
        return _RayMocapBinding(self, key, self._inner_info.body_names[body_id])

    def _bind_contact_forces(self, body_ids: np.ndarray, against_ids: np.ndarray | None):
        """Every shard binds its inner backend's fill (a recorded handle; ``width`` 6 for a binding with
        torques); a read gathers the shards' rows."""
        key = next(self._handle_keys)
        self._handle("bind_contact_forces", "bind_contacts", (key, body_ids, against_ids, self._contact_fill_width))

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
    def _release(self, park: bool = False) -> None:
        """Let go of the shards: parked in the idle pool when ``park`` (a normal close, healthy
        shards) and this backend's actors are poolable, else killed; the placement group removed."""
        if getattr(self, "_ray", None) is None:
            return
        actors, self._actors = [a for a in self._actors if a is not None], []
        if park and self._pool_key is not None:
            park_actors(self._ray, self._pool_key, actors)
        else:
            kill_actors(self._ray, actors)
        if self._placement is not None:
            self._placement.release()

    def _close(self) -> None:
        self._release(park=self._fault is None)

    def __reduce_ex__(self, protocol: int) -> Any:
        raise InvalidTypeError(self._unpicklable("its shards are Ray actors this backend owns and releases on close"))

    def _after_fork_in_child(self) -> None:
        # the actors and the local Ray instance are the parent's: a child's normal exit must not
        # shut them down (shutdown_ray / ray.shutdown, registered with atexit when this process
        # started Ray); the idle pool forgets the parent's actors by itself (see _pool)
        atexit.unregister(shutdown_ray)
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
