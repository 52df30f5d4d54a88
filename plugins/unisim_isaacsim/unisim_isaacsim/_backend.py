"""``IsaacSimBackend``: the SDK-free host of an Isaac Sim worker process (5.1 / Isaac Lab 2.3, 6 / Isaac Lab 3.0).

It is a configuration of the core :class:`~unisim_core.plugin.worker.backend.WorkerBackend`: the worker
runs ``python -m unisim_isaacsim.worker`` in Isaac Sim's interpreter (found by
:func:`~unisim_isaacsim._runtime.require_runtime`), with this host's ``unisim_core`` and
``unisim_isaacsim`` made importable there (see :mod:`unisim_isaacsim._launch`). Everything else
(input validation, shared-memory state, deadlines, fault handling, environment row order and
quaternion order at the boundary) is the core layer's.

At construction the worker's ``describe`` reply must carry a solver readback that
:func:`~unisim_isaacsim._readback.verify_solver_readback` accepts for the requested ``physx``
options; otherwise the worker is stopped and :class:`~unisim_isaacsim._readback.SolverReadbackError`
is raised. This module never imports the Isaac SDK.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Mapping
from typing import Any

import numpy as np

from unisim_core.contract._playback import Playback
from unisim_core.contract.backend import SimBackend
from unisim_core.contract.capabilities import Capability
from unisim_core.contract.config import CameraCfg
from unisim_core.contract.errors import InvalidInputError
from unisim_core.contract.heightfield import HFieldSampler
from unisim_core.contract.kinematics import site_jacobian
from unisim_core.plugin.worker.backend import WorkerBackend, WorkerLaunch
from unisim_core.plugin.worker.hosted import scene_to_plain

from ._hooks import CAPABILITIES, REQUIRED_RUNTIME, __version__
from ._launch import WorkerPath
from ._layout import ACCEPTED_FEATURES, REFUSED_ROOTS, root_mount
from ._mocap import COLLIDER_TYPES, mocap_geom_refusal
from ._options import IsaacSimOptions
from ._physx_solver import PhysxSolverConfig
from ._readback import verify_solver_readback
from ._runtime import require_runtime

__all__ = ["IsaacSimBackend", "init_payload", "check_model", "HOST_RENDERED", "HOST_COMPUTED"]

#: Drawn in this process from the worker's state by the shared renderer (``unisim_core.contract._playback``),
#: whatever the worker reports: frame capture and playback need no Isaac Sim rendering.
HOST_RENDERED = frozenset({Capability.VIDEO_CAPTURE, Capability.PLAYBACK})
#: Computed in this process by the core from the MJCF read here and the worker's state: the site Jacobian
#: (``unisim_core.contract.kinematics``), height scans and terrain spawn data
#: (``unisim_core.contract.heightfield``, MuJoCo's triangles of the field the worker made PhysX collide
#: with: ``_terrain``).
HOST_COMPUTED = frozenset({Capability.SITE_JACOBIAN, Capability.HEIGHT_SCAN, Capability.TERRAIN})

log = logging.getLogger("unisim_isaacsim")


def init_payload(scene, num_envs: int, sim_dt: float, options: IsaacSimOptions) -> dict[str, Any]:
    """The INIT arguments every Isaac worker (and its test double) receives; plain data only."""
    return {
        "scene": scene_to_plain(scene), "num_envs": num_envs, "sim_dt": sim_dt,
        "np_dtype": np.dtype(options.np_dtype).str, "base_name": options.base_name,
        "physx": options.physx.to_payload() if options.physx is not None else {},
        "device": options.device, "headless": options.headless, "enable_cameras": options.enable_cameras,
        "env_spacing": float(options.env_spacing),
    }


def check_model(scene):
    """Refuse, before Isaac Sim starts, a scene the worker cannot build: a model the worker's MJCF
    reader rejects (``UnsupportedCapabilityError`` naming the scene feature when it has one), a
    height field that is not fixed to the world (``hfield``: the worker authors static colliders), a
    colliding mocap geom the worker cannot author (``mocap_geom``), an unknown ``default_keyframe``, or
    a root :func:`~unisim_isaacsim._layout.root_mount` refuses (exactly one top-level body besides
    the mocap bodies, floating or welded). Returns the model as read (``LiteModel``)."""
    from unisim_core.contract.errors import UnknownNameError, UnsupportedCapabilityError
    from unisim_core.plugin.plugin_support import load_mjcf_or_refuse

    lite = load_mjcf_or_refuse(scene.model_file, IsaacSimBackend.name, accept=ACCEPTED_FEATURES)
    for g, geom in enumerate(lite.geoms):
        if geom["type"] == "hfield":
            try:
                lite.geom_pose_w(g)
            except ValueError as exc:
                raise UnsupportedCapabilityError(IsaacSimBackend.name, "hfield",
                                                 f"height field geom {g} ({geom['name']!r}): {exc}; the worker "
                                                 f"authors height fields as static colliders") from None
    why = mocap_geom_refusal(lite)
    if why is not None:
        raise UnsupportedCapabilityError(IsaacSimBackend.name, "mocap_geom", why)
    key = scene.default_keyframe
    if key is not None and key not in lite.keyframes:
        raise UnknownNameError(f"scene.default_keyframe: unknown keyframe {key!r}; known keyframes: "
                               f"{sorted(lite.keyframes)}")
    info = lite.model_info()
    try:
        root_mount(info.body_names, info.body_parent, info.joint_types, info.joint_body, info.mocap_body_names)
    except ValueError as exc:
        raise InvalidInputError(f"scene.model_file: {exc}") from exc
    return lite


class IsaacSimBackend(WorkerBackend):
    """Isaac Sim 5.1 / Isaac Lab 2.3 or Isaac Sim 6 / Isaac Lab 3.0 (PhysX) in a worker process running Isaac
    Sim's python."""

    name = "isaacsim"
    version = __version__
    options_cls = IsaacSimOptions
    required_runtime = REQUIRED_RUNTIME
    CAPABILITIES = CAPABILITIES
    UNSUPPORTED_SCENE_FEATURES = {
        **REFUSED_ROOTS,
        "frictionloss": "PhysX joint friction is not MuJoCo's frictionloss law; the worker's MJCF reader rejects it",
        "mocap_geom": f"a colliding mocap geom of another type than {list(COLLIDER_TYPES)}: the worker authors a "
                      f"mocap body's colliders as USD primitives",
    }
    #: Module the worker interpreter runs with ``-m``.
    worker_module = "unisim_isaacsim.worker"

    options: IsaacSimOptions

    def __init__(self, scene, num_envs: int, sim_dt: float, **options: Any) -> None:
        try:
            super().__init__(scene, num_envs, sim_dt, **options)
        except BaseException:
            finalizer = getattr(self, "_path_finalizer", None)
            if finalizer is not None:
                finalizer()
            raise

    def _worker_launch(self, options: Mapping[str, Any]) -> WorkerLaunch:
        self._lite = check_model(self.scene)  # also the host's height fields (_height_field)
        self._samplers: dict[int, HFieldSampler] = {}
        runtime = require_runtime()  # OptionalDependencyError with the setup hint
        path = WorkerPath()
        self._path_finalizer = weakref.finalize(self, path.close)
        opts = self.options
        return WorkerLaunch(
            argv=(str(runtime.python), "-m", self.worker_module),
            env=path.env(),
            init_args=init_payload(self.scene, self._num_envs, self.sim_dt, opts),
            init_timeout=float(opts.init_timeout_s), call_timeout=float(opts.call_timeout_s),
            on_progress=lambda msg: log.info("isaacsim worker: %s", msg),
        )

    def _check_description(self, desc: Mapping[str, Any]) -> None:
        requested = self.options.physx if self.options.physx is not None else PhysxSolverConfig()
        self.solver_readback = verify_solver_readback(requested, desc.get("solver_readback"),
                                                      num_envs=self._num_envs)
        engine = desc.get("engine")
        self.engine_info: dict[str, Any] = dict(engine) if isinstance(engine, Mapping) else {}
        self.env_rows: tuple[int, ...] = tuple(desc.get("env_rows") or range(self._num_envs))

    @property
    def capabilities(self) -> frozenset[Capability]:
        return super().capabilities | HOST_RENDERED | HOST_COMPUTED

    _site_jacobian = site_jacobian  # the core's, from the model tables and the worker's body poses

    def _height_field(self, geom_id: int) -> HFieldSampler:
        """MuJoCo's surface of a height-field geom, from the MJCF read in this process (the worker
        collides with the same triangles: ``_terrain``); no worker op."""
        sampler = self._samplers.get(geom_id)
        if sampler is None:
            sampler = self._samplers[geom_id] = HFieldSampler.from_lite(self._lite, geom_id)
        return sampler

    # The core's scanner and spawn grid over _height_field and the body poses in shared memory (the
    # WorkerBackend would forward them to a worker serving scanner ops; this one does not).
    _create_hfield_scanner = SimBackend._create_hfield_scanner
    _terrain_spawn_data = SimBackend._terrain_spawn_data

    def _check_model_values(self, term: str, env_ids: np.ndarray, target_ids: np.ndarray | None,
                            values: np.ndarray) -> None:
        """The worker's refusals (targets Isaac Sim cannot hold per env), before any op of a plan is written."""
        self._call("check_model_values", term=term, target_ids=None if target_ids is None else target_ids.tolist())

    def _init_renderer(self, spacing: float, offset_mode: str, headless: bool, capture: bool, width: int,
                       height: int, camera: CameraCfg) -> None:
        """Frames: MuJoCo's renderer in this process draws the worker's state (shared memory); with
        ``enable_cameras=True``, Isaac Sim's RTX camera in the worker draws them instead."""
        if self.options.enable_cameras:
            super()._init_renderer(spacing, offset_mode, headless, capture, width, height, camera)
        else:
            Playback._init_renderer(self, spacing, offset_mode, headless, capture, width, height, camera)

    def _capture_frame(self) -> np.ndarray:
        if self.options.enable_cameras:
            return super()._capture_frame()
        return Playback._capture_frame(self)

    def _close(self) -> None:
        try:
            super()._close()
        finally:
            finalizer = getattr(self, "_path_finalizer", None)
            if finalizer is not None:
                finalizer()
