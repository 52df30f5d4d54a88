"""``MjwarpBackend``: the SimBackend contract on MuJoCo Warp (``mujoco_warp``).

One ``mjw.Model``/``mjw.Data`` pair holds the ``num_envs`` worlds on one warp device (CUDA,
or warp's CPU device). The model is compiled by MuJoCo (``unisim_mujoco``'s loader, so
both backends read a scene identically) and described by the same ``ModelInfo`` builder.

Stepping: ``mj_step`` is ``step1`` (position and velocity stages) + ``step2`` (actuation,
constraint solve, integration). Every call that changes the state ends with ``step1`` at the
new state, so poses, velocities and position/velocity sensors always describe the current
state; a substep is then ``step2`` + ``step1`` and costs exactly one ``mj_step`` (RK4, which
has no two-phase form, runs ``mjw.step`` + ``step1``). Acceleration-stage sensors are refreshed
lazily by one ``mjw.forward`` on their first read after a change. On CUDA the substep is
replayed as a captured graph. Engine state is float32 (MuJoCo Warp's precision).
"""

from __future__ import annotations

import dataclasses
import re
import warnings

import mujoco
import mujoco_warp as mjw
import numpy as np
import warp as wp
from mujoco_warp._src import types as mjw_types

from unisim_core.contract.backend import DeviceArrays, SimBackend
from unisim_core.contract.config import SceneCfg
from unisim_core.contract.errors import InvalidInputError, UnsupportedCapabilityError
from unisim_core.contract.heightfield import HFieldSampler
from unisim_core.contract.model import ModelInfo
from unisim_core.plugin.plugin_support import SnapshotMemory, WarpKernelNotice, warp_device
from unisim_mujoco import (
    SETCONST_TERMS,
    TERM_FIELDS,
    MujocoMocapPoseBinding,
    actuator_gains,
    build_model_info,
    check_term_targets,
    load_model,
)

from . import _hooks
from ._buffers import FATAL_OVERFLOWS, buffer_sizes, overflow_error
from ._contacts import MjwarpContactFill
from ._features import check_model_features
from ._kernels import NONFINITE, host_views, scatter_rows, stage_wrench, world_health
from ._options import CONES, SOLVERS, MjwarpModellingWarning, MjwarpOptions

__all__ = ["MjwarpBackend"]

_FATAL = FATAL_OVERFLOWS
_STAGE_ACC = int(mujoco.mjtStage.mjSTAGE_ACC)
#: Model fields held per world (the randomizable ones and what ``set_const`` derives from them).
_PER_WORLD = ("body_mass", "body_inertia", "body_ipos", "body_subtreemass", "body_invweight0", "geom_friction",
              "geom_size", "geom_solref", "geom_solimp", "geom_aabb", "geom_rbound", "dof_damping",
              "dof_armature", "dof_frictionloss", "dof_invweight0", "actuator_gainprm", "actuator_biasprm",
              "actuator_acc0")
_BATCHABLE = {f.name for f in dataclasses.fields(mjw_types.Model)
              if getattr(f.type, "shape", ())[:1] == ("*",)}


class MjwarpBackend(SimBackend):
    """MuJoCo Warp behind the UniSim contract (``num_envs`` worlds on a CUDA or CPU warp device)."""

    name = "mjwarp"
    version = _hooks.__version__
    contract_range = ">=1.0,<2"
    options_cls = MjwarpOptions
    CAPABILITIES = _hooks.CAPABILITIES
    INIT_TERMS = _hooks.INIT_TERMS
    INTERVAL_TERMS = _hooks.INTERVAL_TERMS
    RESET_TERMS = _hooks.RESET_TERMS
    MAX_ABS_VALUE = float(np.finfo(np.float32).max)  # the engine's state and inputs are float32
    KIT_RULES = 4  # conformance kit rules this backend passes (unisim_conformance CHANGELOG)

    options: MjwarpOptions

    def __init__(self, scene: SceneCfg, num_envs: int, sim_dt: float, **options) -> None:
        super().__init__(scene, num_envs, sim_dt, **options)
        opts = self.options
        m = load_model(scene.model_file, self.sim_dt, opts)
        if opts.cone is not None:
            m.opt.cone = getattr(mujoco.mjtCone, CONES[opts.cone])
        if opts.solver is not None:
            m.opt.solver = getattr(mujoco.mjtSolver, SOLVERS[opts.solver])
        if m.opt.solver == mujoco.mjtSolver.mjSOL_PGS:
            # MuJoCo Warp has CG and Newton only. PGS, CG and Newton minimise the same convex problem (PGS its
            # dual), so a converged solve gives the same constraint forces: gymnasium's humanoid, 100 steps on
            # CPU MuJoCo, PGS vs Newton: joints 1.6e-7 rad apart (measured)
            m.opt.solver = mujoco.mjtSolver.mjSOL_NEWTON
            warnings.warn(MjwarpModellingWarning(
                f"{scene.model_file}: <option solver='PGS'> runs as MuJoCo Warp's Newton solver (no PGS in MuJoCo "
                f"Warp; both solve the same convex problem, so converged forces agree)"), stacklevel=2)
        check_model_features(self.name, scene.model_file, m)
        self._m = m
        self._device = warp_device(wp, opts.device)
        self._capture = opts.graph_capture is not False  # CUDA graphs; warp's recorded launches on its CPU device
        d = mujoco.MjData(m)
        if scene.default_keyframe is not None:
            key = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_KEY, scene.default_keyframe)
            if key < 0:
                raise InvalidInputError(f"scene.default_keyframe: unknown keyframe {scene.default_keyframe!r}")
            mujoco.mj_resetDataKeyframe(m, d, key)
        n = self._num_envs
        with wp.ScopedDevice(self._device):
            try:
                self._model = mjw.put_model(m, batch_sizes={f: n for f in _PER_WORLD if f in _BATCHABLE})
            except (NotImplementedError, ValueError) as exc:  # a model feature MuJoCo Warp lacks
                raise UnsupportedCapabilityError(self.name, _feature(str(exc)), str(exc)) from None
            self._model.opt.warn_overflow = 0  # no wp.printf per world and substep: _check_health raises instead
            nconmax, njmax = buffer_sizes(m, d)
            self._buffers = (opts.nconmax or nconmax, opts.njmax or njmax)
            try:
                self._data = mjw.put_data(m, d, nworld=n, nconmax=self._buffers[0], njmax=self._buffers[1])
            except ValueError as exc:  # the initial state needs more room than nconmax/njmax give
                raise InvalidInputError(f"nconmax/njmax: too small for scene {scene.model_file!r}: {exc}") from None
            self._model.opt.gravity = wp.array(np.tile(m.opt.gravity, (n, 1)), dtype=wp.vec3)
            self._flags = wp.zeros(n, dtype=wp.int32)  # world_health's output, written after every step
            #: its host view on warp's CPU device (host memory: read in place); on CUDA a copy per step
            self._flags_view = self._flags.numpy() if self._device == "cpu" else None
            #: host views of ctrl, qpos and qvel on warp's CPU device (``.numpy()`` costs ~5 µs a call)
            self._views = host_views(self._data, self._device)
        self._rk4 = m.opt.integrator == mujoco.mjtIntegrator.mjINT_RK4
        self._graph = None
        self._acc_sensor = m.sensor_needstage == _STAGE_ACC
        self._acc_fresh = False
        self._body_root = m.body_rootid.astype(np.int64)
        self._sensor_cols: dict[bytes, np.ndarray] = {}
        self._stage_force = np.zeros((n, m.nbody, 3))
        self._stage_torque = np.zeros((n, m.nbody, 3))
        self._staged = np.zeros(m.nbody, dtype=bool)
        self._staged_any = False
        self._nonfinite = self._healthy = np.zeros(n, dtype=bool)  # _healthy: never written
        #: each snapshot row's solver warm start and activations (bit-exact restores)
        self._snap_memory = SnapshotMemory(n)
        with WarpKernelNotice(wp, "unisim-mjwarp", self._device, "MuJoCo Warp kernels"):
            self._refresh()

    # ------------------------------------------------------------------ engine calls
    def _refresh(self) -> None:
        """Position and velocity stages (and their sensors) at the current state, all worlds."""
        with wp.ScopedDevice(self._device):
            mjw.step1(self._model, self._data)
        self._acc_fresh = False

    def _substep(self) -> None:
        m, d = self._model, self._data
        if self._rk4:
            mjw.step(m, d)
        else:
            mjw.step2(m, d)
        mjw.step1(m, d)

    def _advance(self, nsteps: int) -> None:
        if self._capture and self._graph is None:
            with wp.ScopedCapture(device=self._device) as capture:
                self._substep()
                world_health(self._data, _FATAL, self._flags)  # replayed with every substep: no launch per step
            self._graph = capture.graph
        for _ in range(nsteps):
            if self._staged_any:
                stage_wrench(self._bodies_dev, self._force_dev, self._torque_dev, self._data)
            if self._graph is not None:
                wp.capture_launch(self._graph)
            else:
                self._substep()
        if self._graph is None:
            world_health(self._data, _FATAL, self._flags)

    def _check_health(self) -> None:
        """After a step: remember non-finite worlds (the core's divergence policy resets them);
        a buffer overflow in a finite world is an ``EngineError`` naming the option to raise."""
        flags = self._flags.numpy() if self._flags_view is None else self._flags_view
        if not flags.any():  # every world healthy (the hot path)
            self._nonfinite = self._healthy
            return
        self._nonfinite = (flags & NONFINITE) != 0
        flags = np.where(self._nonfinite, 0, flags)
        if not flags.any():
            return
        self._data.overflow.zero_()  # reported once; the next overflow raises again
        raise overflow_error(flags, *self._buffers)

    # ------------------------------------------------------------------ primitives
    @property
    def model(self) -> mujoco.MjModel:
        """The compiled ``mjModel`` (per-world randomized fields live in ``warp_model``)."""
        return self._m

    @property
    def warp_model(self) -> mjw.Model:
        """The ``mujoco_warp.Model`` (advanced use; writes bypass validation)."""
        return self._model

    @property
    def warp_data(self) -> mjw.Data:
        """The ``mujoco_warp.Data`` of all worlds (advanced use; writes bypass validation)."""
        return self._data

    @property
    def device(self) -> str:
        """The warp device the worlds live on (``"cpu"``, ``"cuda:0"``, ...)."""
        return self._device

    @property
    def graph_captured(self) -> bool:
        """Whether ``step`` replays a captured CUDA graph (set up by the first step on CUDA)."""
        return self._graph is not None

    def _load_model_info(self) -> ModelInfo:
        return build_model_info(self._m)

    def _step(self, ctrl: np.ndarray, nsteps: int) -> None:
        d = self._data
        if self.num_actuators:
            if self._views is None:
                d.ctrl.assign(ctrl.astype(np.float32, copy=False))
            else:
                np.copyto(self._views[0], ctrl, casting="same_kind")
        self._staged_any = bool(self._staged.any())
        if self._staged_any:
            ids = np.flatnonzero(self._staged)
            with wp.ScopedDevice(self._device):
                self._bodies_dev = wp.array(ids.astype(np.int32), dtype=wp.int32)
                self._force_dev = wp.array(self._stage_force[:, ids].astype(np.float32), dtype=wp.vec3)
                self._torque_dev = wp.array(self._stage_torque[:, ids].astype(np.float32), dtype=wp.vec3)
        with wp.ScopedDevice(self._device):
            self._advance(nsteps)
        self._acc_fresh = False
        self._check_health()

    def _diverged_mask(self) -> np.ndarray | None:
        # float32 state: beyond MAX_ABS_VALUE (float32's range) means non-finite, flagged by one
        # kernel per step without copying the state to the host
        return self._nonfinite if self._nonfinite.any() else None

    def _set_state(self, env_ids: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> None:
        self._check_open()
        d = self._data
        scatter_rows(d.qpos, env_ids, qpos)
        scatter_rows(d.qvel, env_ids, qvel)
        # a new state starts the constraint solver cold, independent of the env's history
        scatter_rows(d.qacc_warmstart, env_ids, np.zeros((len(env_ids), self.nv)))
        self._refresh()

    def get_qpos(self) -> np.ndarray:
        return (self._data.qpos.numpy() if self._views is None else self._views[1]).astype(self.np_dtype)

    def get_qvel(self) -> np.ndarray:
        return (self._data.qvel.numpy() if self._views is None else self._views[2]).astype(self.np_dtype)

    def _body_pos_w(self, body_ids: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(self._data.xpos.numpy()[:, body_ids], dtype=self.np_dtype)

    def _body_quat_w(self, body_ids: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(self._data.xquat.numpy()[:, body_ids], dtype=self.np_dtype)

    def _body_lin_vel_w(self, body_ids: np.ndarray) -> np.ndarray:
        # cvel = [w, v] at the subtree COM of the body's root; shift v to the body frame origin
        d = self._data
        cvel = d.cvel.numpy()[:, body_ids]
        arm = d.xpos.numpy()[:, body_ids] - d.subtree_com.numpy()[:, self._body_root[body_ids]]
        return np.ascontiguousarray(cvel[..., 3:] + np.cross(cvel[..., :3], arm), dtype=self.np_dtype)

    def _body_ang_vel_w(self, body_ids: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(self._data.cvel.numpy()[:, body_ids, :3], dtype=self.np_dtype)

    # ------------------------------------------------------------------ sensors
    def _sensordata(self, needs_acc: bool) -> np.ndarray:
        if needs_acc and not self._acc_fresh:
            with wp.ScopedDevice(self._device):
                mjw.forward(self._model, self._data)
            self._acc_fresh = True
        return self._data.sensordata.numpy()

    def _read_sensor(self, index: int) -> np.ndarray:
        adr, dim = int(self._m.sensor_adr[index]), int(self._m.sensor_dim[index])
        return np.ascontiguousarray(self._sensordata(bool(self._acc_sensor[index]))[:, adr:adr + dim],
                                    dtype=self.np_dtype)

    def _read_sensors(self, indices: np.ndarray) -> np.ndarray:
        key = indices.tobytes()
        cols = self._sensor_cols.get(key)
        if cols is None:
            adr, dim = self._m.sensor_adr, self._m.sensor_dim
            cols = np.concatenate([np.arange(adr[i], adr[i] + dim[i]) for i in indices]).astype(np.int64)
            self._sensor_cols[key] = cols
        return np.ascontiguousarray(self._sensordata(bool(self._acc_sensor[indices].any()))[:, cols],
                                    dtype=self.np_dtype)

    # ------------------------------------------------------------------ forces
    def _apply_body_force(self, body_ids: np.ndarray, force: np.ndarray, torque: np.ndarray | None) -> None:
        self._stage_force[:, body_ids] = force
        self._stage_torque[:, body_ids] = 0.0 if torque is None else torque
        self._staged[body_ids] = True

    def _clear_body_forces(self) -> None:
        if self._staged.any():
            self._data.xfrc_applied.zero_()
            self._stage_force[:] = 0.0
            self._stage_torque[:] = 0.0
            self._staged[:] = False

    # ------------------------------------------------------------------ kinematics
    def _site_jacobian(self, site_id: int, dof_indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n, nv = self._num_envs, self.nv
        with wp.ScopedDevice(self._device):
            jacp, jacr = wp.zeros((n, 3, nv), dtype=wp.float32), wp.zeros((n, 3, nv), dtype=wp.float32)
            point = wp.array(self._data.site_xpos.numpy()[:, site_id], dtype=wp.vec3)
            body = wp.full(n, int(self._m.site_bodyid[site_id]), dtype=wp.int32)
            mjw.jac(self._model, self._data, jacp, jacr, point, body)
            return (jacp.numpy()[:, :, dof_indices].astype(self.np_dtype),
                    jacr.numpy()[:, :, dof_indices].astype(self.np_dtype))

    def _bind_contact_forces(self, body_ids: np.ndarray, against_ids: np.ndarray | None) -> MjwarpContactFill:
        return MjwarpContactFill(self, body_ids, against_ids)

    # ------------------------------------------------------------------ height fields
    def _height_field(self, geom_id: int) -> HFieldSampler:
        return HFieldSampler.from_mjmodel(self._m, geom_id)  # MuJoCo's compiled model: what MuJoCo Warp collides

    # ------------------------------------------------------------------ mocap
    def _bind_mocap_pose(self, body_id: int) -> MjwarpMocapPoseBinding:
        return MjwarpMocapPoseBinding(self, self.model_info.body_names[body_id], int(self._m.body_mocapid[body_id]))

    # ------------------------------------------------------------------ snapshots
    def _get_physics_state(self) -> np.ndarray:
        d = self._data
        n = self._num_envs
        rows = np.concatenate([d.time.numpy()[:, None], d.qpos.numpy(), d.qvel.numpy(),
                               d.mocap_pos.numpy().reshape(n, -1), d.mocap_quat.numpy().reshape(n, -1)],
                              axis=1).astype(np.float64)
        # Remember each row's solver warm start and activations, so that restoring this
        # snapshot continues bit for bit; the contract's row does not carry them.
        warm, act = d.qacc_warmstart.numpy(), d.act.numpy()
        self._snap_memory.remember(rows, ((w.copy(), a.copy()) for w, a in zip(warm, act)))
        return rows  # float64 holds the float32 state exactly: a restore is exact

    def _set_physics_state(self, state: np.ndarray) -> None:
        self._check_open()
        d, nq, nv, nmocap = self._data, self.nq, self.nv, self._m.nmocap
        ids = np.arange(self._num_envs)
        scatter_rows(d.time, ids, state[:, :1])
        scatter_rows(d.qpos, ids, state[:, 1:1 + nq])
        scatter_rows(d.qvel, ids, state[:, 1 + nq:1 + nq + nv])
        scatter_rows(d.mocap_pos, ids, state[:, 1 + nq + nv:1 + nq + nv + 3 * nmocap])
        scatter_rows(d.mocap_quat, ids, state[:, 1 + nq + nv + 3 * nmocap:])
        warm, act = d.qacc_warmstart.numpy().copy(), d.act.numpy().copy()
        for i in ids:
            extras = self._snap_memory.recall(state[i])
            if extras is None:  # an unknown row: start the solver cold (activations are kept)
                warm[i] = 0.0
            else:
                warm[i], act[i] = extras
        scatter_rows(d.qacc_warmstart, ids, warm)
        scatter_rows(d.act, ids, act)
        self._refresh()

    # ------------------------------------------------------------------ randomization
    def _term_table(self, term: str) -> wp.array:
        field = TERM_FIELDS[term]
        return self._model.opt.gravity if field == "opt.gravity" else getattr(self._model, field)

    def _read_model_field(self, term: str) -> np.ndarray:
        table = self._term_table(term).numpy()
        if term in ("actuator_kp", "actuator_kd"):
            table = actuator_gains(self._m, biasprm=table)[0 if term == "actuator_kp" else 1]
        return np.array(table, dtype=self.np_dtype)

    def _check_model_values(self, term: str, env_ids: np.ndarray, target_ids: np.ndarray | None,
                            values: np.ndarray) -> None:
        check_term_targets(self._m, term, target_ids, self.model_info.actuator_names)

    def _write_model_field(self, term: str, env_ids: np.ndarray, target_ids: np.ndarray | None,
                           values: np.ndarray) -> None:
        self._check_open()
        model = self._model
        if term == "actuator_kp":
            self._write_rows(model.actuator_gainprm, env_ids, (target_ids, 0), values)
            self._write_rows(model.actuator_biasprm, env_ids, (target_ids, 1), -values)
        elif term == "actuator_kd":
            self._write_rows(model.actuator_biasprm, env_ids, (target_ids, 2), -values)
        else:
            self._write_rows(self._term_table(term), env_ids, () if target_ids is None else (target_ids,), values)
        if term in SETCONST_TERMS:  # derived constants (subtree masses, invweights, geom bounds), every world
            with wp.ScopedDevice(self._device):
                mjw.set_const(model, self._data)
        self._refresh()

    def _write_rows(self, table: wp.array, env_ids: np.ndarray, cols: tuple, values: np.ndarray) -> None:
        """``table[env_ids][(slice(None),) + cols] = values`` through the device (one scatter)."""
        rows = table.numpy()[env_ids]
        rows[(slice(None), *cols)] = values
        scatter_rows(table, env_ids, rows)

    # ------------------------------------------------------------------ device arrays
    def _device_arrays(self) -> DeviceArrays:
        d = self._data
        return DeviceArrays(device=self._device, qpos=d.qpos, qvel=d.qvel, ctrl=d.ctrl, body_pos_w=d.xpos,
                            body_quat_w=d.xquat, sensordata=d.sensordata)

    # ------------------------------------------------------------------ lifecycle
    def _close(self) -> None:
        self._graph = None
        self._model = self._data = self._views = None  # type: ignore[assignment]


def _feature(message: str) -> str:
    """The scene feature a MuJoCo Warp refusal names: its first MuJoCo enum (``mjSOL_PGS`` ->
    ``sol_pgs``), else the words before "not"/"is unsupported"/"requires" (``body_plugins``)."""
    for token in re.split(r"[\s'\[\],]+", message):
        if token.startswith("mj") and "_" in token:
            return token[2:].lower()
    head = re.split(r" (?:is |are )?(?:not |unsupported|requires)", message, maxsplit=1)[0]
    return "_".join(re.findall(r"[a-z0-9]+", head.lower())) or "unsupported_model_feature"


class MjwarpMocapPoseBinding(MujocoMocapPoseBinding):
    """Pose of one mocap body in every world (``mocap_pos``/``mocap_quat`` rows of the warp data)."""

    def _write(self, env_ids: np.ndarray, pos: np.ndarray, quat: np.ndarray) -> None:
        be = self._backend
        be._check_open()
        be._write_rows(be._data.mocap_pos, env_ids, (self._id,), pos)
        be._write_rows(be._data.mocap_quat, env_ids, (self._id,), quat)
        be._refresh()  # the mocap body's pose is visible to the getters at once

    def get(self) -> tuple[np.ndarray, np.ndarray]:
        d, dt = self._backend._data, self._backend.np_dtype
        return d.mocap_pos.numpy()[:, self._id].astype(dt), d.mocap_quat.numpy()[:, self._id].astype(dt)
