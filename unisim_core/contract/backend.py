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

This module holds the class, its declared facts, the construction checks, the primitives,
capabilities, sensors, forces, kinematics, terrain and mocap. The rest of the surface is mixed in
from modules named for what they hold: ``lifecycle`` (close, closed variant, pickling, the
metaclass), ``model_queries`` (``model_info``, sizes, names, model tables), ``stepping`` (``step``,
divergence), ``frames`` (base and body state), ``state`` (``set_state``, physics snapshots),
``randomize`` (applying randomization plans), ``playback`` (rendering), ``contacts`` (contact
sensing) and ``kit_facts`` (what the conformance kit reads).
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import attrs
import numpy as np

from unisim_core.contract._frames import Frames
from unisim_core.contract._kit_facts import KitFacts
from unisim_core.contract._lifecycle import _UNGUARDED, READABLE_AFTER_CLOSE, Lifecycle, _BackendMeta
from unisim_core.contract._model_queries import ModelQueries
from unisim_core.contract._playback import Playback
from unisim_core.contract._randomizing import Randomizing
from unisim_core.contract._state import StateSnapshots
from unisim_core.contract._stepping import _MIN_CHUNK, Stepping, diverged_rows
from unisim_core.contract.bindings import BackendHeightScanner, BackendMocapPoseBinding, SensorDataView
from unisim_core.contract.capabilities import Capability
from unisim_core.contract.config import (
    BackendPlayCapabilities,
    BackendTerrainSpawnData,
    DomainRandomizationCapabilities,
    SceneCfg,
)
from unisim_core.contract.construction import env_memory_check, model_file_memory_check
from unisim_core.contract.contacts import ContactSensing
from unisim_core.contract.errors import (
    InvalidInputError,
    InvalidTypeError,
    UnknownNameError,
    UnsupportedCapabilityError,
)
from unisim_core.contract.guards import guard_methods, init_guard
from unisim_core.contract.heightfield import HeightScanner, HFieldSampler, terrain_spawn_data
from unisim_core.contract.model import ModelInfo
from unisim_core.contract.options import BackendOptions, build_options
from unisim_core.contract.portable_options import split_portable
from unisim_core.contract.validation import as_plain_array, check_float_array, check_index_array, check_int, check_names

# ``READABLE_AFTER_CLOSE`` (``lifecycle``) and ``diverged_rows`` (``stepping``) are public here too: the
# user guide and plugins (unisim-motrix) name them as ``unisim_core.contract.backend``'s.
__all__ = ["SimBackend", "DeviceArrays", "diverged_rows", "READABLE_AFTER_CLOSE"]

#: Primitive methods a backend must override for each capability it declares (a tuple of names: one
#: of them, e.g. ``_height_field``, from which the base derives the other, or the other itself).
CAPABILITY_PRIMITIVES: dict[Capability, tuple[str | tuple[str, ...], ...]] = {
    Capability.SENSORS: ("_read_sensor",),
    Capability.BODY_FORCE: ("_apply_body_force", "_clear_body_forces"),
    Capability.BODY_TORQUE: ("_apply_body_force", "_clear_body_forces"),
    Capability.SITE_JACOBIAN: ("_site_jacobian",),
    Capability.HEIGHT_SCAN: (("_height_field", "_create_hfield_scanner"),),
    Capability.TERRAIN: (("_height_field", "_terrain_spawn_data"),),
    Capability.MOCAP: ("_bind_mocap_pose",),
    Capability.PHYSICS_SNAPSHOT: ("_get_physics_state", "_set_physics_state"),
    Capability.RENDER: ("_init_renderer", "_render"),
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
    Capability.CONTACT_TORQUES: (Capability.CONTACT_FORCES,),
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



class SimBackend(Lifecycle, ModelQueries, Stepping, Frames, StateSnapshots, Randomizing, Playback,
                 ContactSensing, KitFacts, metaclass=_BackendMeta):
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
    #: Model terms the engine cannot randomize per env, with the engine's reason: an op naming one is
    #: refused by ``UnsupportedCapabilityError`` naming the term and the reason, nothing written.
    REFUSED_TERMS: ClassVar[Mapping[str, str]] = {}
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

    # ------------------------------------------------------------------ construction
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
        #: ``{option: why}``: cross-backend options given that this backend accepted as no-ops (``portable_options``).
        self.noop_options = split_portable({f.name for f in attrs.fields(self.options_cls)}, options)[1]
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
                names = (prim,) if isinstance(prim, str) else prim
                if all(getattr(cls, n) is getattr(SimBackend, n) for n in names):
                    raise TypeError(f"{cls.__name__} declares {cap.value!r} but does not implement "
                                    f"{' or '.join(n + '()' for n in names)}")
            for need in CAPABILITY_REQUIRES.get(cap, ()):
                if need not in caps:
                    raise TypeError(f"{cls.__name__} declares {cap.value!r}, which needs {need.value!r}")
        SimBackend._checked_classes.add(cls)

    def _check_construction(self) -> None:
        """Checks run once the constructor returned: the model loads, and every name the scene
        and options give (``base_name``, ``push_body_name``, ``scene.default_keyframe``) exists; then
        the envs are put in the default state (``get_default_qpos``, zero velocity) where the engine
        did not start them there."""
        info = self.model_info  # resolves base_name
        if self.options.push_body_name is not None:
            self._lookup(self._body_index, self.options.push_body_name, "body", "push_body_name")
        key = self.scene.default_keyframe
        if key is not None and key not in info.keyframes:
            raise UnknownNameError(f"scene.default_keyframe: unknown keyframe {key!r}; "
                                   f"known keyframes: {sorted(info.keyframes)}")
        # every engine's envs start in the default state (the default keyframe, else qpos0, at rest)
        if not (np.all(self.get_qpos() == np.asarray(self.get_default_qpos())) and not self.get_qvel().any()):
            self._reset_to_default(np.arange(self._num_envs))

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

    def _height_field(self, geom_id: int) -> HFieldSampler:
        """Primitive (HEIGHT_SCAN, TERRAIN): the sampler of the height-field geom ``geom_id``
        (``HFieldSampler.from_lite(self._lite, geom_id)`` for a backend that reads the scene with
        ``mjcf_lite`` and ``accept={"hfield"}``; ``HFieldSampler.from_mjmodel(m, geom_id)`` from an
        ``mjModel``). The base builds the scanner and the spawn data from it."""
        raise self._unsupported(Capability.HEIGHT_SCAN)

    def _create_hfield_scanner(
        self, hfield_geom_id: int, offsets: np.ndarray, frame_body_id: int, alignment: str, output: str
    ) -> BackendHeightScanner:
        """HEIGHT_SCAN: a scanner from validated arguments; by default the core's ``HeightScanner`` over
        ``_height_field`` and the body pose primitives (override only with a native scanner proven equal)."""
        return HeightScanner(self, self._height_field(hfield_geom_id), offsets, frame_body_id, alignment, output)

    def _terrain_spawn_data(self) -> BackendTerrainSpawnData:
        """TERRAIN: terrain metadata for ``scene.terrain``; by default sampled with ``_height_field``."""
        return terrain_spawn_data(self, self.scene.terrain)

    def _bind_mocap_pose(self, body_id: int) -> BackendMocapPoseBinding:
        """Primitive (MOCAP): binding for the mocap body ``body_id``."""
        raise self._unsupported(Capability.MOCAP)

    def _get_physics_state(self) -> np.ndarray:
        """Primitive (PHYSICS_SNAPSHOT): ``(num_envs, physics_state_size)`` snapshot rows."""
        raise self._unsupported(Capability.PHYSICS_SNAPSHOT)

    def _set_physics_state(self, state: np.ndarray) -> None:
        """Primitive (PHYSICS_SNAPSHOT): restore validated float64 rows, refresh derived data."""
        raise self._unsupported(Capability.PHYSICS_SNAPSHOT)


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

    # ------------------------------------------------------------------ scene
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


# the mixins' public methods, under the call guard like SimBackend's own
guard_methods(SimBackend, {name: attr for base in reversed(SimBackend.__mro__[1:-1])
                           for name, attr in vars(base).items() if name not in vars(SimBackend)}, _UNGUARDED)

