"""The ``SimBackend`` contract: ``num_envs`` copies of one scene, numpy in and out.

A backend implements a small set of primitives (marked *primitive* below) and
this base class derives the rest of the surface once. Conventions:

- Arrays are C-contiguous, leading dimension ``num_envs``, float dtype
  ``np_dtype``. Quaternions are ``wxyz``.
- A free root occupies ``qpos[0:7] = [x, y, z, qw, qx, qy, qz]`` and
  ``qvel[0:6] = [world linear velocity of the root origin, body-frame angular velocity]``.
- ``*_w``: world frame. ``get_body_pos_b``/``get_body_quat_b``: relative to the
  base link. ``get_body_lin_vel_b``/``get_body_ang_vel_b``: each body's world
  velocity expressed in its own frame.
- Every public method validates its input before writing anything.

Name resolution and model tables are mixed in from ``model_queries.ModelQueries``, rendering
and playback from ``playback.Playback``; this module holds the primitives, lifecycle,
capabilities, stepping, state getters, sensors, forces and randomization.
"""

from __future__ import annotations

import abc
import inspect
import math
import pickle
import time
from collections.abc import Callable, Mapping, Sequence
from threading import get_ident
from typing import Any, ClassVar

import attrs
import numpy as np

from . import quat as Q
from .bindings import BackendHeightScanner, BackendMocapPoseBinding, SensorDataView
from .capabilities import Capability
from .config import (
    BackendPlayCapabilities,
    BackendTerrainSpawnData,
    CameraCfg,
    DomainRandomizationCapabilities,
    SceneCfg,
)
from .construction import construction_error, env_memory_check, model_file_memory_check
from .contacts import ContactSensing
from .errors import (
    BackendClosedError,
    DivergenceError,
    InvalidInputError,
    InvalidTypeError,
    UnknownNameError,
    UnsupportedCapabilityError,
)
from .guards import DeferredInterrupt, guard_methods, init_guard
from .model import ModelInfo
from .model_queries import ModelQueries
from .options import BackendOptions, build_options
from .playback import Playback
from .randomization import (
    MODEL_TERMS,
    TERM_SPECS,
    InitRandomizationPlan,
    IntervalRandomizationPlan,
    ResetRandomizationPayload,
    resolve_op,
    resolved_model_values,
)
from .validation import (
    as_plain_array,
    check_env_ids,
    check_float_array,
    check_index_array,
    check_int,
    check_limit,
    check_names,
)

__all__ = ["SimBackend", "DeviceArrays", "diverged_rows"]

#: Primitive methods a backend must override for each capability it declares.
CAPABILITY_PRIMITIVES: dict[Capability, tuple[str, ...]] = {
    Capability.SENSORS: ("_read_sensor",),
    Capability.BODY_FORCE: ("_apply_body_force", "_clear_body_forces"),
    Capability.BODY_TORQUE: ("_apply_body_force", "_clear_body_forces"),
    Capability.SITE_JACOBIAN: ("_site_jacobian",),
    Capability.HEIGHT_SCAN: ("_create_hfield_scanner",),
    Capability.TERRAIN: ("_terrain_spawn_data",),
    Capability.MOCAP: ("_bind_mocap_pose",),
    Capability.PHYSICS_SNAPSHOT: ("_get_physics_state", "_set_physics_state"),
    Capability.RENDER: ("_init_renderer", "_render"),
    Capability.VIDEO_CAPTURE: ("_init_renderer", "_capture_frame"),
    Capability.INIT_RANDOMIZATION: ("_write_model_field", "_read_model_field"),
    Capability.RESET_RANDOMIZATION: ("_write_model_field", "_read_model_field"),
    Capability.DEVICE_ARRAYS: ("_device_arrays",),
    Capability.CONTACT_FORCES: ("_bind_contact_forces",),
}
#: Capabilities that are derived from others.
CAPABILITY_REQUIRES: dict[Capability, tuple[Capability, ...]] = {
    Capability.PUSH: (Capability.BODY_FORCE,),
    Capability.PLAYBACK: (Capability.VIDEO_CAPTURE,),
    Capability.CONTACT_FORCES: (Capability.CONTACTS,),
    Capability.CONTACT_FILTERS: (Capability.CONTACT_FORCES,),
}


@attrs.frozen(kw_only=True)
class DeviceArrays:
    """Zero-copy views of a backend's own state buffers (``get_device_arrays``).

    Every field exports DLPack (``__dlpack__``/``__dlpack_device__``): hand it to
    ``torch.from_dlpack``, ``jax.dlpack.from_dlpack``, ``warp.from_dlpack`` or, on the CPU,
    ``np.from_dlpack``. The views are live: after ``step``/``set_state``/``set_physics_state``
    return they hold the new state, without a copy. dtype is the engine's (float32 for the
    GPU engines), not ``np_dtype``; ``device`` names where they live (``"cpu"``, ``"cuda:0"``).
    They are read-only by contract: a write bypasses validation and the derived quantities.

    - ``qpos`` ``(num_envs, nq)``, ``qvel`` ``(num_envs, nv)``: MuJoCo layout (wxyz quaternions).
    - ``ctrl`` ``(num_envs, num_actuators)``: the controls of the last substep.
    - ``body_pos_w`` ``(num_envs, num_bodies, 3)`` m, ``body_quat_w`` ``(num_envs, num_bodies, 4)``
      wxyz: world pose of each body frame (as ``get_body_pos_w``/``get_body_quat_w``).
    - ``sensordata`` ``(num_envs, total sensor dim)``: every sensor, in model order.
    """

    device: str
    qpos: Any
    qvel: Any
    ctrl: Any
    body_pos_w: Any
    body_quat_w: Any
    sensordata: Any


#: Public members a closed backend still answers: they describe the model, not its state.
READABLE_AFTER_CLOSE = frozenset({
    "close", "closed", "name", "version", "contract_range", "options_cls", "required_runtime", "options", "scene",
    "sim_dt", "np_dtype", "num_envs", "nq", "nv", "num_actuators", "num_dof", "num_dof_vel", "num_bodies",
    "base_body_id", "capabilities", "model_info", "physics_state_size",
})
#: Public members outside the call guard: the model description, and ``close`` (its own rules).
_UNGUARDED = READABLE_AFTER_CLOSE
#: Seconds a long ``step`` runs between two points where a ``KeyboardInterrupt`` can land.
INTERRUPT_LATENCY_S = 0.2
_MIN_CHUNK = 8
#: Tolerance on the norm of the quaternions of a ``set_physics_state`` row.
_SNAPSHOT_QUAT_TOL = 1e-6
_closed_classes: dict[type, type] = {}


def _closed_member(name: str) -> Callable[..., Any]:
    def closed(self: SimBackend, *args: Any, **kwargs: Any) -> Any:
        raise BackendClosedError(f"backend {self._label!r} is closed: {name} is not available after close()")

    closed.__name__ = closed.__qualname__ = name
    return closed


def _closed_variant(cls: type) -> type:
    """The class a backend of ``cls`` becomes on ``close()``: the same, except that every public
    member outside ``READABLE_AFTER_CLOSE`` raises ``BackendClosedError`` (no engine, worker or
    shared memory is touched after close, and the open hot path pays nothing for the check)."""
    variant = _closed_classes.get(cls)
    if variant is None:
        ns: dict[str, Any] = {"__module__": cls.__module__, "__qualname__": cls.__qualname__,
                              "__doc__": cls.__doc__}
        for name in dir(cls):
            if name.startswith("_") or name.isupper() or name in READABLE_AFTER_CLOSE:
                continue
            attr = inspect.getattr_static(cls, name)
            if isinstance(attr, property):
                ns[name] = property(_closed_member(name))
            elif callable(attr) or isinstance(attr, staticmethod | classmethod):
                ns[name] = _closed_member(name)
        ns["__unisim_closed__"] = True
        variant = _closed_classes[cls] = type(cls)(cls.__name__, (cls,), ns)
    return variant


class _BackendMeta(abc.ABCMeta):
    """Puts each class's public methods under the call guard (``guards``); runs the
    construction-time checks once the backend's own ``__init__`` returned, and dresses what an
    engine raised while loading the scene as a UniSim error naming the file."""

    def __init__(cls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(name, bases, namespace, **kwargs)
        if not namespace.get("__unisim_closed__"):
            guard_methods(cls, namespace, _UNGUARDED)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        backend = None
        try:
            backend = super().__call__(*args, **kwargs)
            backend._check_construction()
        except BaseException as exc:
            if backend is not None:
                backend.close()
            if not isinstance(exc, Exception):
                raise
            # an engine's own error while loading the scene or allocating the envs: in UniSim's words
            err = construction_error(cls.name or cls.__name__, args, kwargs, exc)
            if err is exc:
                raise
            raise err from exc
        return backend


_INDEX_ATTRS = frozenset({
    "_body_index", "_joint_index", "_actuator_index", "_sensor_index", "_site_index", "_geom_index",
    "_sensor_dims", "_base_id", "_root_joint", "_root_q", "_root_v", "_dof_qpos_cols", "_dof_qvel_cols",
    "_dof_qpos_sel", "_dof_qvel_sel", "_single_dof_joints", "_quat_cols", "_clears_forces", "_ctrl_shape",
})


class SimBackend(ModelQueries, Playback, ContactSensing, metaclass=_BackendMeta):
    """Unified simulation backend contract (see module docstring for conventions)."""

    #: Registry name (entry-point name), e.g. ``"mujoco"``.
    name: ClassVar[str] = ""
    #: Version of the distribution providing the backend.
    version: ClassVar[str] = "0"
    #: Contract versions this backend implements, e.g. ``">=1.0,<2"``.
    contract_range: ClassVar[str] = ">=1.0,<2"
    #: Typed options accepted as keyword arguments.
    options_cls: ClassVar[type[BackendOptions]] = BackendOptions
    #: Human-readable name of an external runtime the backend needs (``None``: none).
    required_runtime: ClassVar[str | None] = None
    #: Capabilities the backend honours.
    CAPABILITIES: ClassVar[frozenset[Capability]] = frozenset({Capability.PRE_STEP_CONTROL})
    #: Randomization terms per phase (names from ``randomization.TERM_SPECS``).
    INIT_TERMS: ClassVar[frozenset[str]] = frozenset()
    INTERVAL_TERMS: ClassVar[frozenset[str]] = frozenset()
    RESET_TERMS: ClassVar[frozenset[str]] = frozenset()
    #: Scene features the backend refuses, ``{feature: reason}``: its constructor raises
    #: ``UnsupportedCapabilityError(name, feature, detail)`` for a scene that uses one. The
    #: conformance kit fails a refusal that is not listed here, and a listed one that never refuses.
    UNSUPPORTED_SCENE_FEATURES: ClassVar[Mapping[str, str]] = {}
    #: Conformance checks the backend is known to fail, ``{check id: reason}`` (strict xfail in the kit).
    KNOWN_KIT_DEVIATIONS: ClassVar[Mapping[str, str]] = {}
    #: Kit rules version the backend was written against (``unisim_conformance._rules.KIT_RULES``; the
    #: kit CHANGELOG's "Kit rules N"). ``None`` reads as 1; failures of newer rules are reported as new.
    KIT_RULES: ClassVar[int | None] = None
    #: Largest magnitude the engine integrates faithfully in a state or input value (reads back as
    #: written): larger inputs are rejected, a state beyond it counts as diverged (MuJoCo: its
    #: ``mjMAXVAL`` 1e10; PhysX: its 1e6 m/s link-speed clamp, not float32's range). Default:
    #: float64's range (only non-finite is bad); capped at ``np_dtype``'s range.
    MAX_ABS_VALUE: ClassVar[float] = float(np.finfo(np.float64).max)
    #: Whether every ``step`` defers SIGINT to the end of an engine call (backends whose calls
    #: are round trips to another process, which an interrupt would leave half-answered).
    ATOMIC_STEP_CALLS: ClassVar[bool] = False
    #: What a physics snapshot restores (``snapshot_tier``): ``"exact"`` or ``"state"``.
    SNAPSHOT_TIER: ClassVar[str] = "exact"
    #: Whether ``_restore_rows`` loaded into another instance continues bit for bit (``restore_tier``).
    EXACT_RESTORE: ClassVar[bool] = False

    _checked_classes: ClassVar[set[type]] = set()

    # ------------------------------------------------------------------ lifecycle
    def __new__(cls, *args: Any, **kwargs: Any) -> SimBackend:
        self = super().__new__(cls)
        init_guard(self)  # one thread at a time, refused in a forked child (see ``guards``)
        return self

    def __init__(self, scene: SceneCfg, num_envs: int, sim_dt: float, **options: Any) -> None:
        if not isinstance(scene, SceneCfg):
            raise InvalidTypeError(f"scene: expected SceneCfg, got {type(scene).__name__}")
        self._num_envs = check_int("num_envs", num_envs, 1)
        self._check_env_memory(8, "divergence counters")  # a backend checks its own estimate before allocating
        if (isinstance(sim_dt, bool | np.bool_) or not isinstance(sim_dt, int | float | np.integer | np.floating)
                or not np.isfinite(sim_dt) or sim_dt <= 0):
            raise InvalidInputError(f"sim_dt: expected a positive finite time step in s, got {sim_dt!r}")
        model_file_memory_check(self._label, scene.model_file)
        self.scene = scene
        self.sim_dt = float(sim_dt)
        self.options = build_options(self.options_cls, self.name or type(self).__name__, options)
        self.np_dtype = np.dtype(self.options.np_dtype).type
        # values the getters could not return finite are out of bounds too
        self.MAX_ABS_VALUE = min(self.MAX_ABS_VALUE, float(np.finfo(self.np_dtype).max))
        self._rng = np.random.default_rng(self.options.seed)
        self._pre_step: Callable[[SimBackend, np.ndarray], np.ndarray] | None = None
        self._closed = False
        self._info: ModelInfo | None = None
        self._chunk = _MIN_CHUNK  # substeps per engine call of a long step (re-estimated from every call)
        self._final_call = True  # whether the running _step call ends the current step
        self._last_diverged: np.ndarray | None = None
        self._divergence_counts = np.zeros(self._num_envs, dtype=np.int64)
        self._check_declared_primitives()

    def _check_env_memory(self, bytes_per_env: float, what: str) -> None:
        """Call before the engine allocates the envs: ``num_envs`` envs of about ``bytes_per_env``
        (``what`` they hold) that do not fit in the memory available raise ``InvalidInputError``
        naming ``num_envs``, the estimate and what is available (``construction.env_memory_check``)."""
        env_memory_check(self._label, self._num_envs, bytes_per_env, what)

    def _check_declared_primitives(self) -> None:
        cls = type(self)
        if cls in SimBackend._checked_classes:
            return
        caps = cls.CAPABILITIES
        for cap in caps:
            for prim in CAPABILITY_PRIMITIVES.get(cap, ()):
                if getattr(cls, prim) is getattr(SimBackend, prim):
                    raise TypeError(f"{cls.__name__} declares {cap.value!r} but does not implement {prim}()")
            for need in CAPABILITY_REQUIRES.get(cap, ()):
                if need not in caps:
                    raise TypeError(f"{cls.__name__} declares {cap.value!r}, which needs {need.value!r}")
        SimBackend._checked_classes.add(cls)

    def _check_construction(self) -> None:
        """Checks run once the constructor returned: the model loads, and every name the scene
        and options give (``base_name``, ``push_body_name``, ``scene.default_keyframe``) exists."""
        info = self.model_info  # resolves base_name
        if self.options.push_body_name is not None:
            self._lookup(self._body_index, self.options.push_body_name, "body", "push_body_name")
        key = self.scene.default_keyframe
        if key is not None and key not in info.keyframes:
            raise UnknownNameError(f"scene.default_keyframe: unknown keyframe {key!r}; "
                                   f"known keyframes: {sorted(info.keyframes)}")

    def close(self) -> None:
        """Release engine resources. Idempotent.

        Afterwards every public member raises ``BackendClosedError``, except those in
        ``READABLE_AFTER_CLOSE`` that describe the model (``num_envs``, ``nq``, ``nv``,
        ``num_actuators``, ``model_info``, ``capabilities``, ``options``, ...).

        From another thread it waits for the call in flight to end; from inside a call on this
        thread (a pre-step hook, a callback) it is deferred to the end of that call (a step stops
        after the current substep). In a forked child it only forgets the backend (the parent's
        engine and worker are left alone).
        """
        if self.__dict__.get("_closed", True):
            return
        if self._forked:
            self._closed = True
            self.__class__ = _closed_variant(type(self))
            return
        if self._owner == get_ident():  # inside a call on this thread (a hook): close when it returns
            self._close_pending = True
            return
        while True:  # take the guard's token for good; another thread's call in flight: once it ended
            try:
                self._slot.pop()
                break
            except IndexError:
                if self._closed:
                    return
                time.sleep(0.002)
        self._closed, self._close_pending = True, False
        try:
            self._close()
        finally:
            self.__class__ = _closed_variant(type(self))

    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called."""
        return self._closed

    def _close(self) -> None:
        """Primitive (optional): release engine resources."""

    def _after_fork_in_child(self) -> None:
        """Hook: run in a child forked from the process that created the backend, once the backend
        refuses every call there (e.g. let go of a worker process without stopping it)."""

    def __copy__(self) -> SimBackend:
        raise InvalidTypeError(f"backend {self._label!r} cannot be copied: a shallow copy would share its engine "
                               f"(closing one would free the other's); create another with create_backend")

    def __reduce_ex__(self, protocol: int) -> Any:
        # the state is pickled here, so that what cannot be pickled is refused in UniSim's words
        try:
            payload = pickle.dumps(self.__getstate__(), protocol)
        except (TypeError, AttributeError, pickle.PicklingError) as exc:
            raise InvalidTypeError(self._unpicklable(str(exc))) from None
        return (_unpickled_backend, (type(self), payload))

    def _unpicklable(self, why: str) -> str:
        return (f"backend {self._label!r} cannot be pickled or deep-copied ({why}): it owns an engine in this "
                f"process; send its scene, num_envs, sim_dt and options instead and create it where it runs "
                f"(or use unisim-ray, which creates backends inside its actors)")

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for key in ("_slot", "_owner", "_close_pending", "_forked", "_created_pid"):
            state.pop(key, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)  # the guard is this object's own (``__new__``)

    def __enter__(self) -> SimBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise BackendClosedError(f"backend {self._label} is closed")

    @property
    def _label(self) -> str:
        return self.name or type(self).__name__

    # ------------------------------------------------------------------ primitives
    @abc.abstractmethod
    def _load_model_info(self) -> ModelInfo:
        """Primitive: describe the loaded model (called once, cold path)."""

    @abc.abstractmethod
    def _step(self, ctrl: np.ndarray, nsteps: int) -> None:
        """Primitive: hold validated ``ctrl (num_envs, nu)`` over ``nsteps`` substeps.

        Afterwards every getter must reflect the new state (refresh derived quantities).
        """

    @abc.abstractmethod
    def _set_state(self, env_ids: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> None:
        """Primitive: write validated ``qpos (k, nq)``, ``qvel (k, nv)`` (float64, unit
        quaternions) into the envs ``env_ids`` (unique ``int64``), refresh derived quantities."""

    @abc.abstractmethod
    def get_qpos(self) -> np.ndarray:
        """Primitive: generalized positions ``(num_envs, nq)`` in MuJoCo layout (a copy)."""

    @abc.abstractmethod
    def get_qvel(self) -> np.ndarray:
        """Primitive: generalized velocities ``(num_envs, nv)`` in MuJoCo layout (a copy)."""

    @abc.abstractmethod
    def _body_pos_w(self, body_ids: np.ndarray) -> np.ndarray:
        """Primitive: ``(num_envs, len(body_ids), 3)`` world positions of body frames, m."""

    @abc.abstractmethod
    def _body_quat_w(self, body_ids: np.ndarray) -> np.ndarray:
        """Primitive: ``(num_envs, len(body_ids), 4)`` world orientations, wxyz."""

    @abc.abstractmethod
    def _body_lin_vel_w(self, body_ids: np.ndarray) -> np.ndarray:
        """Primitive: ``(num_envs, len(body_ids), 3)`` world linear velocity of body origins, m/s."""

    @abc.abstractmethod
    def _body_ang_vel_w(self, body_ids: np.ndarray) -> np.ndarray:
        """Primitive: ``(num_envs, len(body_ids), 3)`` world angular velocities, rad/s."""

    # Optional primitives (see CAPABILITY_PRIMITIVES) -----------------------------
    def _read_sensor(self, index: int) -> np.ndarray:
        """Primitive (SENSORS): ``(num_envs, dim)`` values of sensor ``index``."""
        raise self._unsupported(Capability.SENSORS)

    def _read_sensors(self, indices: np.ndarray) -> np.ndarray:
        """``(num_envs, sum of dims)``: sensors concatenated; override for one native read."""
        return np.concatenate([self._read_sensor(int(i)) for i in indices], axis=1)

    def _apply_body_force(self, body_ids: np.ndarray, force: np.ndarray, torque: np.ndarray | None) -> None:
        """Primitive (BODY_FORCE): stage world wrenches ``(num_envs, len(body_ids), 3)`` for the
        next ``step`` (all its substeps), replacing any staged wrench on those bodies."""
        raise self._unsupported(Capability.BODY_FORCE)

    def _clear_body_forces(self) -> None:
        """Primitive (BODY_FORCE): drop staged wrenches (called after each ``step``)."""
        raise self._unsupported(Capability.BODY_FORCE)

    def _site_jacobian(self, site_id: int, dof_indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Primitive (SITE_JACOBIAN): ``(jacp, jacr)``, each ``(num_envs, 3, len(dof_indices))``."""
        raise self._unsupported(Capability.SITE_JACOBIAN)

    def _create_hfield_scanner(
        self, hfield_geom_id: int, offsets: np.ndarray, frame_body_id: int, alignment: str, output: str
    ) -> BackendHeightScanner:
        """Primitive (HEIGHT_SCAN): build a scanner from validated arguments."""
        raise self._unsupported(Capability.HEIGHT_SCAN)

    def _terrain_spawn_data(self) -> BackendTerrainSpawnData:
        """Primitive (TERRAIN): materialize terrain metadata for ``scene.terrain``."""
        raise self._unsupported(Capability.TERRAIN)

    def _bind_mocap_pose(self, body_id: int) -> BackendMocapPoseBinding:
        """Primitive (MOCAP): binding for the mocap body ``body_id``."""
        raise self._unsupported(Capability.MOCAP)

    def _get_physics_state(self) -> np.ndarray:
        """Primitive (PHYSICS_SNAPSHOT): ``(num_envs, physics_state_size)`` snapshot rows."""
        raise self._unsupported(Capability.PHYSICS_SNAPSHOT)

    def _set_physics_state(self, state: np.ndarray) -> None:
        """Primitive (PHYSICS_SNAPSHOT): restore validated float64 rows, refresh derived data."""
        raise self._unsupported(Capability.PHYSICS_SNAPSHOT)

    def _restore_rows(self, env_ids: np.ndarray | None = None) -> np.ndarray:
        """Hook: ``(len(env_ids) or num_envs, width)`` float64 rows holding what the next call of these
        envs depends on, for ``_load_restore_rows`` in another instance of this backend on the same
        scene and options (a rebuilt Ray shard). Staged wrenches and model fields are not in them.
        The default (``restore_tier``): the physics snapshot row with ``PHYSICS_SNAPSHOT``, else qpos
        and qvel. A backend whose snapshot row lacks state its continuation depends on (solver warm
        starts) overrides both hooks and sets ``EXACT_RESTORE``."""
        if Capability.PHYSICS_SNAPSHOT in self.capabilities:
            rows = np.asarray(self._get_physics_state(), dtype=np.float64)
        else:
            rows = np.concatenate([np.asarray(self.get_qpos(), np.float64),
                                   np.asarray(self.get_qvel(), np.float64)], axis=1)
        return np.array(rows if env_ids is None else rows[env_ids], dtype=np.float64, order="C")

    def _load_restore_rows(self, rows: np.ndarray) -> None:
        """Hook: put every env back to ``rows`` (``_restore_rows()`` of all envs of an instance)."""
        if Capability.PHYSICS_SNAPSHOT in self.capabilities:
            self._set_physics_state(rows)
        else:
            self._set_state(np.arange(len(rows)), rows[:, :self.nq].copy(), rows[:, self.nq:].copy())

    def _init_renderer(self, spacing: float, offset_mode: str, headless: bool, capture: bool,
                       width: int, height: int, camera: CameraCfg) -> None:
        """Primitive (RENDER/VIDEO_CAPTURE): create the renderer."""
        raise self._unsupported(Capability.RENDER)

    def _render(self) -> None:
        """Primitive (RENDER): draw one frame interactively."""
        raise self._unsupported(Capability.RENDER)

    def _capture_frame(self) -> np.ndarray:
        """Primitive (VIDEO_CAPTURE): ``(height, width, 3)`` uint8 RGB frame."""
        raise self._unsupported(Capability.VIDEO_CAPTURE)

    def _write_model_field(self, term: str, env_ids: np.ndarray, target_ids: np.ndarray | None,
                           values: np.ndarray) -> None:
        """Primitive (randomization): write absolute per-env values of a model term."""
        raise self._unsupported(Capability.INIT_RANDOMIZATION)

    def _check_model_values(self, term: str, env_ids: np.ndarray, target_ids: np.ndarray | None,
                            values: np.ndarray) -> None:
        """Hook (randomization): reject engine-specific invalid values before any op of the plan is
        written (e.g. inertias an engine cannot represent). Raise ``InvalidInputError``."""

    def _read_model_field(self, term: str) -> np.ndarray:
        """Primitive (randomization): per-env table of a model term,
        ``(num_envs, count, *value_shape)`` (``(num_envs, *value_shape)`` when global)."""
        raise self._unsupported(Capability.INIT_RANDOMIZATION)

    def _device_arrays(self) -> DeviceArrays:
        """Primitive (DEVICE_ARRAYS): the live views (built once by the backend)."""
        raise self._unsupported(Capability.DEVICE_ARRAYS)

    # ------------------------------------------------------------------ capabilities
    @property
    def capabilities(self) -> frozenset[Capability]:
        """The optional features this backend honours."""
        return frozenset(self.CAPABILITIES)

    def _unsupported(self, cap: Capability, detail: str = "") -> UnsupportedCapabilityError:
        return UnsupportedCapabilityError(self._label, cap, detail)

    def _require(self, cap: Capability) -> None:
        if cap not in self.capabilities:
            raise self._unsupported(cap)

    def get_device_arrays(self) -> DeviceArrays:
        """Zero-copy DLPack views of the engine's state buffers (see ``DeviceArrays``).

        For GPU engines these skip the device-to-host copy of the numpy getters, which
        stay the contract.
        """
        self._require(Capability.DEVICE_ARRAYS)
        self._check_open()
        return self._device_arrays()

    def get_dr_capabilities(self) -> DomainRandomizationCapabilities:
        """Randomization terms honoured per phase (empty where the phase is undeclared)."""
        caps = self.capabilities
        return DomainRandomizationCapabilities(
            init_terms=self.INIT_TERMS if Capability.INIT_RANDOMIZATION in caps else (),
            interval_terms=self.INTERVAL_TERMS if Capability.INTERVAL_RANDOMIZATION in caps else (),
            reset_terms=self.RESET_TERMS if Capability.RESET_RANDOMIZATION in caps else (),
        )

    def get_play_capabilities(self) -> BackendPlayCapabilities:
        """Rendering and playback offered by this backend."""
        caps = self.capabilities
        return BackendPlayCapabilities(
            supports_render=Capability.RENDER in caps,
            supports_video_capture=Capability.VIDEO_CAPTURE in caps,
            supports_playback=Capability.PLAYBACK in caps,
        )

    # ------------------------------------------------------------------ model metadata
    @property
    def model_info(self) -> ModelInfo:
        """Engine-neutral model tables (built once)."""
        if self._info is None:
            self._info = self._load_model_info()
            self._index_model(self._info)
        return self._info

    def _index_model(self, info: ModelInfo) -> None:
        def index(names: Sequence[str]) -> dict[str, int]:
            return {n: i for i, n in enumerate(names) if n}

        self._body_index = index(info.body_names)
        self._joint_index = index(info.joint_names)
        self._actuator_index = index(info.actuator_names)
        self._sensor_index = index(info.sensor_names)
        self._site_index = index(info.site_names)
        self._geom_index = index(info.geom_names)
        self._sensor_dims = info.sensor_dims
        # base link and floating root
        if self.options.base_name is not None:
            self._base_id = self._lookup(self._body_index, self.options.base_name, "body", "base_name")
        else:
            roots = [int(info.joint_body[j]) for j, t in enumerate(info.joint_types)
                     if t == "free" and info.body_parent[info.joint_body[j]] == 0]
            self._base_id = roots[0] if roots else (1 if len(info.body_names) > 1 else 0)
        self._root_joint = next(
            (j for j, t in enumerate(info.joint_types) if t == "free" and info.joint_body[j] == self._base_id), None
        )
        if self._root_joint is not None:
            qa, va = int(info.joint_qposadr[self._root_joint]), int(info.joint_dofadr[self._root_joint])
            self._root_q, self._root_v = qa, va
            self._dof_qpos_cols = np.array([c for c in range(info.nq) if not qa <= c < qa + 7], np.int64)
            self._dof_qvel_cols = np.array([c for c in range(info.nv) if not va <= c < va + 6], np.int64)
        else:
            self._root_q = self._root_v = None
            self._dof_qpos_cols = np.arange(info.nq, dtype=np.int64)
            self._dof_qvel_cols = np.arange(info.nv, dtype=np.int64)
        self._dof_qpos_sel = _as_slice(self._dof_qpos_cols)
        self._dof_qvel_sel = _as_slice(self._dof_qvel_cols)
        self._single_dof_joints = [j for j, t in enumerate(info.joint_types) if t in ("hinge", "slide")]
        self._clears_forces = Capability.BODY_FORCE in self.capabilities
        self._ctrl_shape = (self._num_envs, len(info.actuator_names))
        self._quat_cols = [(int(info.joint_qposadr[j]) + (3 if t == "free" else 0))
                           for j, t in enumerate(info.joint_types) if t in ("free", "ball")]

    def __getattr__(self, name: str) -> Any:
        # The name tables and root layout are built from ``model_info`` on first use.
        if name in _INDEX_ATTRS and self.__dict__.get("_info") is None and "_num_envs" in self.__dict__:
            self.model_info  # noqa: B018
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _lookup(self, table: Mapping[str, int], name: str, what: str, arg: str = "names") -> int:
        if not isinstance(name, str):
            raise InvalidTypeError(f"{arg}: expected a {what} name (str), got {type(name).__name__} {name!r}")
        try:
            return table[name]
        except KeyError:
            known = sorted(table)
            shown = ", ".join(known[:12]) + (", …" if len(known) > 12 else "")
            raise UnknownNameError(f"{arg}: unknown {what} {name!r}; known {what}s: {shown}") from None

    def _lookup_many(self, table: Mapping[str, int], names: Sequence[str], what: str) -> np.ndarray:
        names = check_names("names", names)
        return np.array([self._lookup(table, n, what) for n in names], dtype=np.int32)

    @property
    def model(self) -> Any:
        """Underlying physics model (engine-native where the backend exposes one)."""
        return self.model_info

    @property
    def num_envs(self) -> int:
        return self._num_envs

    @property
    def nq(self) -> int:
        return self.model_info.nq

    @property
    def nv(self) -> int:
        return self.model_info.nv

    @property
    def num_actuators(self) -> int:
        return len(self.model_info.actuator_names)

    @property
    def num_dof(self) -> int:
        """Joint position columns excluding the floating root."""
        return len(self._dof_qpos_cols)

    @property
    def num_dof_vel(self) -> int:
        """Joint velocity DoFs excluding the floating root."""
        return len(self._dof_qvel_cols)

    @property
    def num_bodies(self) -> int:
        return len(self.model_info.body_names)

    @property
    def base_body_id(self) -> int:
        return self._base_id

    def get_scene_visual_model_file(self) -> str | None:
        return self.scene.visual_model_file

    def get_terrain_spawn_data(self) -> BackendTerrainSpawnData | None:
        """Terrain metadata for ``scene.terrain``; ``None`` when the scene has no terrain
        or the backend has no terrain support."""
        if self.scene.terrain is None or Capability.TERRAIN not in self.capabilities:
            return None
        return self._terrain_spawn_data()

    def get_playback_model(self, env_index: int | None = None) -> Any:
        """The model used for playback (the shared model; per-env variants share topology)."""
        if env_index is not None:
            check_int("env_index", env_index, 0, self.num_envs - 1)
        return self.model

    def cleanup_scene_assets(self) -> None:
        """Release cold-path scene artifacts (none by default)."""

    # ------------------------------------------------------------------ stepping and state
    def set_pre_step_control(self, fn: Callable[[SimBackend, np.ndarray], np.ndarray] | None) -> None:
        """Register ``fn(backend, ctrl) -> ctrl`` called before every substep (``None`` clears)."""
        self._require(Capability.PRE_STEP_CONTROL)
        if fn is not None and not callable(fn):
            raise InvalidTypeError(f"fn: expected a callable or None, got {type(fn).__name__}")
        self._pre_step = fn

    def step(self, ctrl: np.ndarray, nsteps: int = 1) -> dict | None:
        """Hold ``ctrl (num_envs, num_actuators)`` over ``nsteps`` substeps of ``sim_dt``.

        Staged body forces act over all substeps and are cleared afterwards. A long call runs
        in engine calls of about ``INTERRUPT_LATENCY_S`` each: a ``KeyboardInterrupt`` lands at
        the end of one, leaving the state a whole number of substeps on. Envs whose state
        diverged during the step are reset to the default state at its end and reported (see
        ``BackendOptions.divergence``). If the pre-step
        control's output is rejected on substep k, the k - 1 substeps before it have run
        (the error says so) and the state is theirs.
        """
        if self._closed:  # a step method looked up before close()
            self._check_open()
        # Fast path: a float C-contiguous array of the right shape whose sum of squares is finite
        # and within the squared bound (then every |value| is; NaN/inf make it fail); everything
        # else gets the full check and its error message.
        if not (type(ctrl) is np.ndarray and ctrl.shape == self._ctrl_shape and ctrl.dtype.kind == "f"
                and ctrl.flags.c_contiguous and _within(ctrl, self.MAX_ABS_VALUE)):
            ctrl = self._check_ctrl("ctrl", ctrl)
        if type(nsteps) is not int or nsteps < 1:
            nsteps = check_int("nsteps", nsteps, 1)
        self._last_diverged = None
        if self._pre_step is None and nsteps <= self._chunk and not self.ATOMIC_STEP_CALLS:
            try:  # the hot path: one engine call (timed only when it may size the chunks of long steps)
                if nsteps <= _MIN_CHUNK:
                    self._step(ctrl, nsteps)
                else:
                    t0 = time.perf_counter()
                    self._step(ctrl, nsteps)
                    self._time_chunk(time.perf_counter() - t0, nsteps)
                mask = self._diverged_mask()  # _collect_divergence inlined: one engine call
                if mask is not None and mask.any():
                    self._last_diverged = mask
            finally:
                if self._clears_forces:
                    self._clear_body_forces()
            if self._contact_watch:
                self._contacts_stepped(nsteps)
            if self._last_diverged is not None:
                self._settle_divergence(nsteps)
            return None
        with DeferredInterrupt() as interrupt:
            try:
                self._step_chunked(ctrl, nsteps, interrupt)
            finally:
                self._final_call = True  # outside a chunked step, every _step call ends its step
                if self._clears_forces:
                    self._clear_body_forces()
            if self._contact_watch:
                self._contacts_stepped(nsteps)
            if self._last_diverged is not None:
                self._settle_divergence(nsteps)
        return None

    def _step_chunked(self, ctrl: np.ndarray, nsteps: int, interrupt: DeferredInterrupt) -> None:
        done = 0
        while done < nsteps:
            if self._pre_step is None:
                k = min(self._chunk, nsteps - done)
                self._final_call = done + k == nsteps
                t0 = time.perf_counter()
                self._step(ctrl, k)
                self._time_chunk(time.perf_counter() - t0, k)
            else:
                k = 1
                try:
                    sub_ctrl = self._check_ctrl("pre-step control output", self._pre_step(self, ctrl))
                except (InvalidInputError, InvalidTypeError) as exc:
                    raise type(exc)(f"{exc} (on substep {done + 1} of {nsteps}; the {done} substep(s) before "
                                    f"it ran and the state is theirs)") from None
                self._final_call = done + 1 == nsteps
                self._step(sub_ctrl, 1)
            done += k
            self._collect_divergence()
            if self._close_pending:  # close() from the hook: it runs once this step returns
                return
            if interrupt.stop:
                interrupt.message = f"step interrupted after {done} of {nsteps} substeps (state consistent)"
                return

    def _time_chunk(self, seconds: float, substeps: int) -> None:
        """Size the engine calls of long steps from the last call's duration (at least
        ``_MIN_CHUNK`` substeps: a short step stays one engine call, whatever its overhead)."""
        self._chunk = max(_MIN_CHUNK, int(INTERRUPT_LATENCY_S * substeps / max(seconds, 1e-9)))

    def _check_ctrl(self, name: str, ctrl: object) -> np.ndarray:
        shape = (self._num_envs, self.num_actuators)
        if (type(ctrl) is np.ndarray and ctrl.shape == shape and ctrl.dtype.kind == "f"
                and ctrl.flags.c_contiguous):
            if not np.isfinite(ctrl).all():
                check_float_array(name, ctrl, shape)  # raises with the offending index
            check_limit(name, ctrl, self.MAX_ABS_VALUE)
            return ctrl
        return check_float_array(name, ctrl, shape, limit=self.MAX_ABS_VALUE)

    # ------------------------------------------------------------------ divergence
    def _diverged_mask(self) -> np.ndarray | None:
        """Hook: ``(num_envs,)`` bool mask of the envs whose state diverged during the last
        ``_step`` call (non-finite, or beyond ``MAX_ABS_VALUE``), or ``None`` when none did.

        The default reads ``get_qpos``/``get_qvel``. Override where the engine detects it itself
        (MuJoCo resets an unstable env on its own) or where the state lives elsewhere.
        """
        with np.errstate(over="ignore", invalid="ignore"):  # a state cast to float32 may overflow: detected
            q, v = self.get_qpos(), self.get_qvel()
        return diverged_rows(self.MAX_ABS_VALUE, q, v)

    def _collect_divergence(self) -> None:
        """After each engine call of a step: remember the envs that diverged in it."""
        mask = self._diverged_mask()
        if mask is not None and mask.any():
            self._last_diverged = mask if self._last_diverged is None else self._last_diverged | mask

    def _settle_divergence(self, nsteps: int) -> None:
        """At the end of a step: reset the envs that diverged in it, count them, apply the policy."""
        ids = np.flatnonzero(self._last_diverged)
        self._reset_to_default(ids)
        self._divergence_counts[ids] += 1
        if self.options.divergence == "raise":
            raise DivergenceError(
                f"backend {self._label!r}: the simulation diverged in env(s) {ids.tolist()} during a step of "
                f"{nsteps} substep(s): a state value became non-finite or exceeded {self.MAX_ABS_VALUE:g}. "
                f"Those envs were reset to the default state at the end of the step; the others stepped "
                f"normally. Reduce sim_dt or the controls/forces, or pass divergence='reset' to reset and "
                f"carry on (see get_diverged_envs).", tuple(int(i) for i in ids))

    def _reset_to_default(self, env_ids: np.ndarray) -> None:
        """Write the default state (default keyframe or ``qpos0``, zero velocity) into ``env_ids``."""
        qpos0 = np.asarray(self.get_default_qpos(), dtype=np.float64)  # UnknownNameError for a bad keyframe
        self._set_state(env_ids, np.tile(qpos0, (len(env_ids), 1)), np.zeros((len(env_ids), self.nv)))
        self._contacts_reset(env_ids)

    def get_diverged_envs(self) -> np.ndarray:
        """``(num_envs,)`` bool: the envs the last ``step`` reset because their state diverged."""
        if self._last_diverged is None:
            return np.zeros(self._num_envs, dtype=bool)
        return self._last_diverged.copy()

    def get_divergence_counts(self) -> np.ndarray:
        """``(num_envs,)`` int64: how many times each env was reset for divergence since construction."""
        return self._divergence_counts.copy()

    def set_state(self, env_indices: np.ndarray, qpos: np.ndarray, qvel: np.ndarray,
                  randomization: ResetRandomizationPayload | None = None) -> dict | None:
        """Write ``qpos (k, nq)`` and ``qvel (k, nv)`` into the ``k`` envs ``env_indices``.

        Other envs stay bit-identical; getters reflect the new state at once.
        Quaternions off unit norm by more than 1e-6 are normalized (a zero quaternion is rejected).
        ``randomization`` applies reset terms to these envs.
        """
        self._check_open()
        env_ids = check_env_ids("env_indices", env_indices, self._num_envs)
        # copies: normalization and velocity deltas must never write into the caller's arrays
        qpos = np.array(check_float_array("qpos", qpos, (len(env_ids), self.nq)), copy=True)
        qvel = np.array(check_float_array("qvel", qvel, (len(env_ids), self.nv), limit=self.MAX_ABS_VALUE),
                        copy=True)
        for c in self._quat_cols:
            unit, norms = _unit_quats(qpos[:, c:c + 4])
            if not np.all(norms >= 1e-12):
                raise InvalidInputError(f"qpos: quaternion columns {c}:{c + 4} have zero norm")
            off = ~(np.abs(norms - 1.0) <= 1e-6)  # unit to float32 precision: written as given (exact round trips)
            qpos[off, c:c + 4] = unit[off]
        check_limit("qpos", qpos, self.MAX_ABS_VALUE)
        resolved = []
        if randomization is not None:
            self._require(Capability.RESET_RANDOMIZATION)
            if not isinstance(randomization, ResetRandomizationPayload):
                raise InvalidTypeError(
                    f"randomization: expected ResetRandomizationPayload, got {type(randomization).__name__}"
                )
            resolved = self._resolve_ops(randomization, self.RESET_TERMS, "reset", subset=env_ids)
            row_of = {int(e): r for r, e in enumerate(env_ids)}
            for spec, ids, _, values in resolved:
                if spec.kind == "state":
                    self._add_root_velocity(qvel, np.array([row_of[int(i)] for i in ids]), spec, values)
        self._set_state(env_ids, qpos, qvel)
        self._contacts_reset(env_ids)
        self._apply_resolved(resolved, skip_kinds=("state",))
        return None

    def _add_root_velocity(self, qvel: np.ndarray, rows: np.ndarray, spec, values: np.ndarray) -> None:
        """Add root velocity deltas (linear world m/s, or angular body-frame rad/s) to ``qvel[rows]``."""
        v = self._root_v
        if spec is TERM_SPECS["root_lin_vel_delta"]:
            qvel[rows, v:v + 3] += values
        else:
            qvel[rows, v + 3:v + 6] += values

    def get_state(self, fields: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """Detached ``{"qpos": (num_envs, nq), "qvel": (num_envs, nv)}`` (or the requested fields)."""
        getters = {"qpos": self.get_qpos, "qvel": self.get_qvel}
        fields = tuple(getters) if fields is None else check_names("fields", fields)
        for f in fields:
            if f not in getters:
                raise UnknownNameError(f"fields: unknown state field {f!r}; known: {sorted(getters)}")
        return {f: getters[f]() for f in fields}

    # ------------------------------------------------------------------ state getters
    def get_base_pos(self) -> np.ndarray:
        """``(num_envs, 3)`` base position, world frame, m."""
        if self._root_q is not None:
            q = self._root_q
            return np.ascontiguousarray(self.get_qpos()[:, q:q + 3])
        return self._body_pos_w(np.array([self._base_id]))[:, 0]

    def get_base_quat(self) -> np.ndarray:
        """``(num_envs, 4)`` base orientation, world frame, wxyz."""
        if self._root_q is not None:
            q = self._root_q
            return np.ascontiguousarray(self.get_qpos()[:, q + 3:q + 7])
        return self._body_quat_w(np.array([self._base_id]))[:, 0]

    def get_base_lin_vel(self) -> np.ndarray:
        """``(num_envs, 3)`` world linear velocity of the base origin, m/s."""
        if self._root_v is not None:
            v = self._root_v
            return np.ascontiguousarray(self.get_qvel()[:, v:v + 3])
        return self._body_lin_vel_w(np.array([self._base_id]))[:, 0]

    def get_base_ang_vel(self) -> np.ndarray:
        """``(num_envs, 3)`` base angular velocity in the world frame, rad/s."""
        if self._root_v is not None:
            v = self._root_v
            w_body = self.get_qvel()[:, v + 3:v + 6]
            return Q.quat_apply(self.get_base_quat(), w_body).astype(self.np_dtype, copy=False)
        return self._body_ang_vel_w(np.array([self._base_id]))[:, 0]

    def get_dof_pos(self) -> np.ndarray:
        """``(num_envs, num_dof)`` joint positions without the floating root."""
        return np.ascontiguousarray(self.get_qpos()[:, self._dof_qpos_sel])

    def get_dof_vel(self) -> np.ndarray:
        """``(num_envs, num_dof_vel)`` joint velocities without the floating root."""
        return np.ascontiguousarray(self.get_qvel()[:, self._dof_qvel_sel])

    def _ids(self, body_ids: object) -> np.ndarray:
        if (type(body_ids) is np.ndarray and body_ids.ndim == 1 and body_ids.dtype.kind in "iu"
                and body_ids.size and body_ids.min() >= 0 and body_ids.max() < self.num_bodies):
            return body_ids
        return check_index_array("body_ids", body_ids, self.num_bodies, what="body")

    def get_body_pos_w(self, body_ids: np.ndarray) -> np.ndarray:
        """``(num_envs, len(body_ids), 3)`` world positions, m."""
        return self._body_pos_w(self._ids(body_ids))

    def get_body_quat_w(self, body_ids: np.ndarray) -> np.ndarray:
        """``(num_envs, len(body_ids), 4)`` world orientations, wxyz."""
        return self._body_quat_w(self._ids(body_ids))

    def get_body_lin_vel_w(self, body_ids: np.ndarray) -> np.ndarray:
        """``(num_envs, len(body_ids), 3)`` world linear velocities of body origins, m/s."""
        return self._body_lin_vel_w(self._ids(body_ids))

    def get_body_ang_vel_w(self, body_ids: np.ndarray) -> np.ndarray:
        """``(num_envs, len(body_ids), 3)`` world angular velocities, rad/s."""
        return self._body_ang_vel_w(self._ids(body_ids))

    def get_body_pose_w(self, body_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ids = self._ids(body_ids)
        return self._body_pos_w(ids), self._body_quat_w(ids)

    def get_body_vel_w(self, body_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ids = self._ids(body_ids)
        return self._body_lin_vel_w(ids), self._body_ang_vel_w(ids)

    def get_body_state_w(self, body_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(pos, quat, lin_vel, ang_vel)`` in the world frame."""
        ids = self._ids(body_ids)
        return self._body_pos_w(ids), self._body_quat_w(ids), self._body_lin_vel_w(ids), self._body_ang_vel_w(ids)

    def copy_body_state_w(self, body_ids: np.ndarray, out_pos: np.ndarray, out_quat: np.ndarray,
                          out_lin_vel: np.ndarray, out_ang_vel: np.ndarray):
        """Copy world-frame body state into caller-owned ``np_dtype`` buffers and return them."""
        ids = self._ids(body_ids)
        outs = (("out_pos", out_pos, 3), ("out_quat", out_quat, 4),
                ("out_lin_vel", out_lin_vel, 3), ("out_ang_vel", out_ang_vel, 3))
        for name, buf, width in outs:
            shape = (self._num_envs, len(ids), width)
            if not isinstance(buf, np.ndarray) or buf.shape != shape or buf.dtype != self.np_dtype:
                got = f"{buf.dtype} {buf.shape}" if isinstance(buf, np.ndarray) else type(buf).__name__
                expected = f"a {np.dtype(self.np_dtype)} array of shape {shape}"
                raise InvalidInputError(f"{name}: expected {expected}, got {got}")
            if not buf.flags.writeable:
                raise InvalidInputError(f"{name}: buffer is read-only")
        np.copyto(out_pos, self._body_pos_w(ids))
        np.copyto(out_quat, self._body_quat_w(ids))
        np.copyto(out_lin_vel, self._body_lin_vel_w(ids))
        np.copyto(out_ang_vel, self._body_ang_vel_w(ids))
        return out_pos, out_quat, out_lin_vel, out_ang_vel

    def _rows(self, env_ids: object) -> np.ndarray:
        return check_index_array("env_ids", env_ids, self._num_envs, what="env")

    def get_body_pose_w_rows(self, env_ids: np.ndarray, body_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(pos (k, B, 3), quat (k, B, 4))`` for the env rows ``env_ids``."""
        rows, ids = self._rows(env_ids), self._ids(body_ids)
        return self._body_pos_w(ids)[rows], self._body_quat_w(ids)[rows]

    def get_body_lin_vel_w_rows(self, env_ids: np.ndarray, body_ids: np.ndarray) -> np.ndarray:
        rows, ids = self._rows(env_ids), self._ids(body_ids)
        return self._body_lin_vel_w(ids)[rows]

    def get_body_ang_vel_w_rows(self, env_ids: np.ndarray, body_ids: np.ndarray) -> np.ndarray:
        rows, ids = self._rows(env_ids), self._ids(body_ids)
        return self._body_ang_vel_w(ids)[rows]

    def _base_pose(self) -> tuple[np.ndarray, np.ndarray]:
        base = np.array([self._base_id])
        return self._body_pos_w(base), self._body_quat_w(base)

    def get_body_pos_b(self, body_ids: np.ndarray) -> np.ndarray:
        """``(num_envs, len(body_ids), 3)`` positions relative to the base link, in its frame."""
        ids = self._ids(body_ids)
        bpos, bquat = self._base_pose()
        out = Q.quat_apply_inverse(bquat, self._body_pos_w(ids) - bpos)
        return out.astype(self.np_dtype, copy=False)

    def get_body_quat_b(self, body_ids: np.ndarray) -> np.ndarray:
        """``(num_envs, len(body_ids), 4)`` orientations relative to the base link, wxyz."""
        ids = self._ids(body_ids)
        _, bquat = self._base_pose()
        out = Q.quat_mul(Q.quat_conjugate(bquat), self._body_quat_w(ids))
        return out.astype(self.np_dtype, copy=False)

    def get_body_lin_vel_b(self, body_ids: np.ndarray) -> np.ndarray:
        """``(num_envs, len(body_ids), 3)`` each body's world linear velocity in its own frame."""
        ids = self._ids(body_ids)
        return Q.quat_apply_inverse(self._body_quat_w(ids), self._body_lin_vel_w(ids)).astype(self.np_dtype, copy=False)

    def get_body_ang_vel_b(self, body_ids: np.ndarray) -> np.ndarray:
        """``(num_envs, len(body_ids), 3)`` each body's world angular velocity in its own frame."""
        ids = self._ids(body_ids)
        return Q.quat_apply_inverse(self._body_quat_w(ids), self._body_ang_vel_w(ids)).astype(self.np_dtype, copy=False)

    # ------------------------------------------------------------------ sensors
    def _sensor(self, name: str) -> int:
        self._require(Capability.SENSORS)
        return self._lookup(self._sensor_index, name, "sensor", "name")

    def get_sensor_data(self, name: str) -> np.ndarray:
        """``(num_envs, dim)`` values of the named sensor."""
        return self._read_sensor(self._sensor(name))

    def get_sensor_data_rows(self, name: str, env_ids: np.ndarray) -> np.ndarray:
        """``(k, dim)`` values of the named sensor for the env rows ``env_ids``."""
        index = self._sensor(name)
        return self._read_sensor(index)[self._rows(env_ids)]

    def get_sensor_data_batch(self, names: Sequence[str]) -> np.ndarray:
        """``(num_envs, total)`` named sensors' flattened values concatenated in order."""
        indices = np.array([self._sensor(n) for n in check_names("names", names)], dtype=np.int64)
        if not len(indices):
            return np.zeros((self._num_envs, 0), dtype=self.np_dtype)
        return self._read_sensors(indices)

    def bind_sensor_data(self, names: Sequence[str]) -> SensorDataView:
        """Validate named sensors once; the returned view reads them on the hot path."""
        names = check_names("names", names)
        indices = np.array([self._sensor(n) for n in names], dtype=np.int64)
        return SensorDataView(self, names, indices, self._sensor_dims[indices])

    # ------------------------------------------------------------------ forces
    def apply_body_force(self, body_ids: np.ndarray, force: np.ndarray, torque: np.ndarray | None = None) -> None:
        """Stage world-frame ``force`` (N) and optional ``torque`` (N·m), each
        ``(num_envs, len(body_ids), 3)``, on bodies for the next ``step``.

        The wrench acts at the body frame origin over every substep of that step,
        then is cleared. It replaces any wrench staged earlier on the same bodies.
        """
        if torque is not None:  # a torque call names the torque capability when it is the one missing
            self._require(Capability.BODY_TORQUE)
        self._require(Capability.BODY_FORCE)
        ids = check_index_array("body_ids", body_ids, self.num_bodies, what="body", unique=True).copy()
        shape = (self._num_envs, len(ids), 3)
        # copies: the wrench acts at the next step, whatever the caller does with its arrays meanwhile
        force = check_float_array("force", force, shape, limit=self.MAX_ABS_VALUE).copy()
        if torque is not None:
            torque = check_float_array("torque", torque, shape, limit=self.MAX_ABS_VALUE).copy()
        self._apply_body_force(ids, force, torque)

    def push_robots(self, force_range: Sequence[float] | np.ndarray) -> np.ndarray:
        """Stage a random horizontal world force on the push body (``push_body_name``,
        default the base) of every env for the next ``step``.

        ``force_range`` is ``[low, high]`` in N; x and y are drawn uniformly from it.
        Returns the drawn forces ``(num_envs, 3)``.
        """
        self._require(Capability.PUSH)
        rng = check_float_array("force_range", force_range, (2,))
        if rng[0] > rng[1]:
            raise InvalidInputError(f"force_range: expected [low, high] with low <= high, got {rng.tolist()}")
        name = self.options.push_body_name
        body = self._base_id if name is None else self._lookup(self._body_index, name, "body", "push_body_name")
        force = np.zeros((self._num_envs, 1, 3))
        force[:, 0, :2] = self._rng.uniform(rng[0], rng[1], size=(self._num_envs, 2))
        self._apply_body_force(np.array([body]), force, None)
        return force[:, 0].astype(self.np_dtype)

    # ------------------------------------------------------------------ kinematics
    def get_site_jacobian_w(self, site_id: int, dof_indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(jacp, jacr)`` world-frame Jacobians ``(num_envs, 3, len(dof_indices))`` of a site
        w.r.t. the full-``qvel`` columns ``dof_indices``."""
        self._require(Capability.SITE_JACOBIAN)
        site = check_int("site_id", site_id, 0, len(self.model_info.site_names) - 1)
        dofs = check_index_array("dof_indices", dof_indices, self.nv, what="dof")
        return self._site_jacobian(site, dofs)

    # ------------------------------------------------------------------ terrain and mocap
    def create_hfield_scanner(self, *, hfield_geom_id: int, offsets: np.ndarray, frame_body_id: int,
                              alignment: str = "yaw", output: str = "height") -> BackendHeightScanner:
        """Build a reusable height scanner on the cold path (see ``BackendHeightScanner``).

        ``offsets``: ``(P, 2)`` or ``(P, 3)`` points in the frame body's frame, m (z ignored).
        """
        self._require(Capability.HEIGHT_SCAN)
        info = self.model_info
        geom = check_int("hfield_geom_id", hfield_geom_id, 0, len(info.geom_names) - 1)
        if info.geom_types[geom] != "hfield":
            raise InvalidInputError(f"hfield_geom_id: geom {geom} is a {info.geom_types[geom]}, expected an hfield")
        offsets = as_plain_array("offsets", offsets, "a (P, 2) or (P, 3) float array")
        width = offsets.shape[1] if offsets.ndim == 2 and offsets.shape[1] in (2, 3) else 2
        offsets = check_float_array("offsets", offsets, (None, width))[:, :2].copy()
        body = check_int("frame_body_id", frame_body_id, 0, self.num_bodies - 1)
        if alignment not in ("yaw", "full", "world"):
            raise InvalidInputError(f"alignment: expected 'yaw', 'full' or 'world', got {alignment!r}")
        if output not in ("height", "distance"):
            raise InvalidInputError(f"output: expected 'height' or 'distance', got {output!r}")
        return self._create_hfield_scanner(geom, offsets, body, alignment, output)

    def bind_mocap_pose(self, body_name: str) -> BackendMocapPoseBinding:
        """Resolve a mocap body once; the binding reads and writes its pose."""
        self._require(Capability.MOCAP)
        b = self._lookup(self._body_index, body_name, "body", "body_name")
        if body_name not in self.model_info.mocap_body_names:
            raise InvalidInputError(f"body_name: body {body_name!r} is not a mocap body; "
                                    f"mocap bodies: {list(self.model_info.mocap_body_names)}")
        return self._bind_mocap_pose(b)

    # ------------------------------------------------------------------ snapshots
    @property
    def physics_state_size(self) -> int:
        """Width of a snapshot row: ``1 + nq + nv + 7 * nmocap``."""
        return 1 + self.nq + self.nv + 7 * len(self.model_info.mocap_body_names)

    @property
    def snapshot_tier(self) -> str:
        """What ``set_physics_state`` restores (PHYSICS_SNAPSHOT), checked by the conformance kit:

        - ``"state"``: every state read (qpos, qvel, bodies, sensors, time, mocap) equals its value
          when the row was taken, bit for bit; stepping on may differ from the original continuation
          by the engine's hidden solver state (warm starts), i.e. within solver tolerance.
        - ``"exact"``: ``"state"``, and stepping on reproduces the original continuation bit for bit.

        The row itself is always the portable ``[time, qpos, qvel, mocap_pos, mocap_quat]`` (for
        playback and across backends); an ``"exact"`` backend keeps any hidden state it needs itself.
        """
        return self.SNAPSHOT_TIER

    @property
    def restore_tier(self) -> str:
        """What ``_restore_rows`` loaded into another instance (``_load_restore_rows``) reproduces:
        ``"exact"`` (the continuation bit for bit), ``"snapshot"`` (the physics snapshot row: reads
        equal, the continuation within solver tolerance) or ``"qpos_qvel"`` (time restarts)."""
        if self.EXACT_RESTORE:
            return "exact"
        return "snapshot" if Capability.PHYSICS_SNAPSHOT in self.capabilities else "qpos_qvel"

    def get_physics_state(self) -> np.ndarray:
        """``(num_envs, physics_state_size)`` rows ``[time, qpos, qvel, mocap_pos, mocap_quat]``
        (float64; see ``snapshot_tier`` for what a restore reproduces)."""
        self._require(Capability.PHYSICS_SNAPSHOT)
        return self._get_physics_state()

    def set_physics_state(self, state: np.ndarray) -> None:
        """Restore rows from ``get_physics_state``; getters reflect them at once.

        Every quaternion of a row (ball/free joints, mocap bodies) must be unit (within 1e-6)
        and every value within ``MAX_ABS_VALUE``; nothing is written otherwise.
        """
        self._require(Capability.PHYSICS_SNAPSHOT)
        state = check_float_array("state", state, (self._num_envs, self.physics_state_size),
                                  limit=self.MAX_ABS_VALUE)
        nmocap = len(self.model_info.mocap_body_names)
        mocap_quat = 1 + self.nq + self.nv + 3 * nmocap
        for c in [1 + c for c in self._quat_cols] + [mocap_quat + 4 * i for i in range(nmocap)]:
            _, norms = _unit_quats(state[:, c:c + 4])
            bad = np.flatnonzero(~(np.abs(norms - 1.0) <= _SNAPSHOT_QUAT_TOL))
            if bad.size:
                raise InvalidInputError(
                    f"state: expected unit quaternions in columns {c}:{c + 4} (as get_physics_state returns), "
                    f"got norm {norms[bad[0]]:g} in row {int(bad[0])}")
        self._set_physics_state(state)
        self._contacts_reset(None)

    # ------------------------------------------------------------------ randomization
    def _counts(self) -> dict[str, int]:
        info = self.model_info
        return {"body": len(info.body_names), "geom": len(info.geom_names), "dof": info.nv,
                "actuator": len(info.actuator_names)}

    def _resolve_ops(self, plan, allowed, phase, subset: np.ndarray | None = None) -> list:
        resolved = []
        for op in plan.iter_ops():
            spec, ids, targets, values = resolve_op(op, num_envs=self._num_envs, counts=self._counts(),
                                                    allowed=frozenset(allowed), phase=phase, subset=subset)
            if spec.kind == "state" and self._root_v is None:
                raise InvalidInputError(f"{op.term}: the model has no floating root to randomize")
            if spec.kind == "model":
                nominal = self._nominal(op.term, targets)
                values = resolved_model_values(spec, op.term, nominal, op.operation, values)
                self._check_model_values(op.term, ids, targets, values)
            resolved.append((spec, ids, targets, values))
        return resolved

    def _nominal(self, term: str, targets: np.ndarray | None) -> np.ndarray:
        info = self.model_info
        table = {
            "body_mass": info.body_mass, "body_inertia": info.body_inertia, "body_com_offset": info.body_ipos,
            "geom_friction": info.geom_friction, "geom_size": info.geom_size, "geom_solref": info.geom_solref,
            "geom_solimp": info.geom_solimp, "dof_damping": info.dof_damping, "dof_armature": info.dof_armature,
            "dof_frictionloss": info.dof_frictionloss, "actuator_kp": info.actuator_kp,
            "actuator_kd": info.actuator_kd, "gravity": info.gravity,
        }[term]
        return table if targets is None else table[targets]

    def _apply_resolved(self, resolved: list, skip_kinds: tuple[str, ...] = ()) -> None:
        forces: dict[int, list[np.ndarray | None]] = {}
        for spec, ids, targets, values in resolved:
            if spec.kind in skip_kinds:
                continue
            if spec.kind == "model":
                term = next(t for t, s in TERM_SPECS.items() if s is spec)
                self._write_model_field(term, ids, targets, values)
            elif spec.kind == "force":
                slot = 0 if spec is TERM_SPECS["body_force"] else 1
                for col, b in enumerate(targets):
                    pair = forces.setdefault(int(b), [None, None])
                    if pair[slot] is None:
                        pair[slot] = np.zeros((self._num_envs, 3))
                    pair[slot][ids] = values[:, col]
            else:
                self._add_state_delta(spec, ids, values)
        if forces:
            bodies = np.array(sorted(forces))
            f = np.stack([forces[b][0] if forces[b][0] is not None else np.zeros((self._num_envs, 3))
                          for b in bodies], axis=1)
            has_t = any(forces[b][1] is not None for b in bodies)
            t = np.stack([forces[b][1] if forces[b][1] is not None else np.zeros((self._num_envs, 3))
                          for b in bodies], axis=1) if has_t else None
            self.apply_body_force(bodies, f, t)

    def _add_state_delta(self, spec, ids, values) -> None:
        qpos, qvel = self.get_qpos()[ids].astype(np.float64), self.get_qvel()[ids].astype(np.float64)
        self._add_root_velocity(qvel, np.arange(len(ids)), spec, values)
        self._set_state(ids, qpos, qvel)

    def apply_init_randomization(self, plan: InitRandomizationPlan) -> None:
        """Apply cold-path model randomization; every op is validated before any is written."""
        self._require(Capability.INIT_RANDOMIZATION)
        if not isinstance(plan, InitRandomizationPlan):
            raise InvalidTypeError(f"plan: expected InitRandomizationPlan, got {type(plan).__name__}")
        self._apply_resolved(self._resolve_ops(plan, self.INIT_TERMS, "init"))

    def apply_interval_randomization(self, plan: IntervalRandomizationPlan) -> None:
        """Apply a scheduled plan: velocity deltas now, wrenches for the next step, model terms."""
        self._require(Capability.INTERVAL_RANDOMIZATION)
        if not isinstance(plan, IntervalRandomizationPlan):
            raise InvalidTypeError(f"plan: expected IntervalRandomizationPlan, got {type(plan).__name__}")
        self._apply_resolved(self._resolve_ops(plan, self.INTERVAL_TERMS, "interval"))

    def get_model_field(self, term: str) -> np.ndarray:
        """Current per-env values of a randomizable model term,
        ``(num_envs, count, *value_shape)`` (``(num_envs, *value_shape)`` for global terms)."""
        if term not in MODEL_TERMS:
            raise UnknownNameError(f"term: unknown model term {term!r}; known: {sorted(MODEL_TERMS)}")
        caps = self.capabilities
        if Capability.INIT_RANDOMIZATION not in caps and Capability.RESET_RANDOMIZATION not in caps:
            raise self._unsupported(Capability.INIT_RANDOMIZATION)
        return self._read_model_field(term)

def _unpickled_backend(cls: type[SimBackend], payload: bytes) -> SimBackend:
    backend = cls.__new__(cls)
    try:
        state = pickle.loads(payload)
    except Exception as exc:  # an engine object that pickles but does not unpickle
        raise InvalidTypeError(backend._unpicklable(f"unpickling its state failed: {type(exc).__name__}: {exc}")
                               ) from exc
    backend.__setstate__(state)
    return backend


# the mixins' public methods, under the call guard like SimBackend's own
guard_methods(SimBackend, {name: attr for base in reversed(SimBackend.__mro__[1:-1])
                           for name, attr in vars(base).items() if name not in vars(SimBackend)}, _UNGUARDED)


def diverged_rows(limit: float, *state: np.ndarray) -> np.ndarray | None:
    """``(num_envs,)`` mask of the envs with a value non-finite or beyond ``limit`` in any of the
    ``(num_envs, k)`` ``state`` arrays, or ``None`` when there is none (the common case: one BLAS
    reduction per array)."""
    for a in state:
        if not _within(a, limit):
            break
    else:
        return None
    with np.errstate(invalid="ignore"):
        return ~np.logical_and.reduce([(np.abs(a) <= limit).all(axis=1) for a in state])


def _within(arr: np.ndarray, limit: float) -> bool:
    """Sufficient test that every ``|value| <= limit`` (one BLAS reduction, no temporary): the
    sum of squares is finite and at most ``limit**2``. ``False`` (NaN, inf, overflow of the sum,
    or many values near the limit) sends the caller to the exact check."""
    ss = float(np.vdot(arr, arr))  # a BLAS call: no floating-point warnings
    return math.isfinite(ss) and ss <= limit * limit


def _unit_quats(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(q / |q|, |q|)`` for ``(k, 4)`` rows, scaled by the largest component first so that huge
    finite components cannot overflow (a zero row gives a zero norm and NaN unit)."""
    scale = np.abs(q).max(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        u = q / scale[:, None]
        n = np.linalg.norm(u, axis=1)
        return u / n[:, None], n * scale


def _as_slice(cols: np.ndarray) -> slice | np.ndarray:
    """A contiguous ascending column set as a slice (views instead of fancy-index copies)."""
    if len(cols) == 0:
        return slice(0, 0)
    if np.all(np.diff(cols) == 1):
        return slice(int(cols[0]), int(cols[-1]) + 1)
    return cols
