"""``MujocoBackend``: the SimBackend contract on ``mujoco.batch.Batch``.

One ``Batch`` holds the ``num_envs`` simulations as state rows, stepped on MuJoCo's
C++ thread pool (env i is bit-identical to the same env stepped alone). It is not
persistent (one MjData per thread, not per env) unless the model needs it (sleep,
IPC, engine plugins): measured on gymnasium's ant at N=512, that saves ~5 % of the
CPU time of a step. State fields (qpos, qvel, ctrl, xfrc_applied, mocap) are live
views of the rows; derived fields (xpos, xquat, xipos, cvel, subtree_com,
site_xpos, sensordata) are bound outputs, copied out by every call.

Getters never see a state a substep behind: ``_fresh`` is the forward stage the
outputs hold at the current state, and every reader of a derived field first
brings it up to ``mjSTAGE_VEL`` (``mjSTAGE_ACC`` for acceleration-stage sensors)
with one ``Batch.forward`` when it lags. A step computes ``mjSTAGE_VEL`` inside the
call (cheaper than a later forward) only when derived fields were read since the
previous step, so a loop that reads qpos and qvel alone never pays for the
kinematics at the new state, and a loop that reads poses pays for it once.
"""

from __future__ import annotations

import mujoco
import numpy as np
from mujoco.batch import Batch, SimulationError

from unisim_core.contract.backend import SimBackend
from unisim_core.contract.config import SceneCfg
from unisim_core.contract.errors import EngineError
from unisim_core.contract.heightfield import HFieldSampler
from unisim_core.contract.model import ModelInfo
from unisim_core.plugin.plugin_support import SnapshotMemory

from . import _hooks as spec
from ._contacts import MujocoContactFill
from ._mocap import MujocoMocapPoseBinding
from ._model_info import actuator_gains, build_model_info, load_model
from ._options import MujocoOptions
from ._randomization import SETCONST_TERMS, TERM_FIELDS, check_term_targets, primitive_aabb

__all__ = ["MujocoBackend"]


_S = mujoco.mjtState
_INTEGRATION = int(_S.mjSTATE_INTEGRATION)  # what a batch's state row holds
_STAGE_NONE = int(mujoco.mjtStage.mjSTAGE_NONE)
_STAGE_VEL = int(mujoco.mjtStage.mjSTAGE_VEL)
_STAGE_ACC = int(mujoco.mjtStage.mjSTAGE_ACC)
#: Warnings after which MuJoCo resets a simulation (instability).
_UNSTABLE = (int(mujoco.mjtWarning.mjWARN_BADQPOS), int(mujoco.mjtWarning.mjWARN_BADQVEL),
             int(mujoco.mjtWarning.mjWARN_BADQACC))
assert _UNSTABLE == tuple(range(_UNSTABLE[0], _UNSTABLE[0] + 3))  # one slice of the warning table
#: State components a snapshot row does not hold but the next step depends on.
_EXTRA_STATE = (_S.mjSTATE_WARMSTART, _S.mjSTATE_ACT, _S.mjSTATE_HISTORY, _S.mjSTATE_PLUGIN)
#: Model features a batch serves only with one MjData per env (see ``mujoco.batch``).
_PERSISTENT_FLAGS = int(mujoco.mjtEnableBit.mjENBL_SLEEP) | int(mujoco.mjtEnableBit.mjENBL_IPC)


def needs_persistent(m: mujoco.MjModel) -> bool:
    """Whether ``m`` must run in a persistent batch: sleep or IPC enabled, or engine plugins
    (which may keep state outside ``plugin_state``)."""
    return bool(m.opt.enableflags & _PERSISTENT_FLAGS) or m.nplugin > 0


#: State components restore rows leave out: applied forces, zero between calls (the contract
#: stages wrenches and clears them after each step).
_NOT_RESTORED = (_S.mjSTATE_QFRC_APPLIED, _S.mjSTATE_XFRC_APPLIED)


class MujocoBackend(SimBackend):
    """MuJoCo 4.x behind the UniSim contract (``num_envs`` simulations on ``mujoco.batch.Batch``)."""

    name = "mujoco"
    version = spec.__version__
    contract_range = ">=1.0,<2"
    options_cls = MujocoOptions
    CAPABILITIES = spec.CAPABILITIES
    INIT_TERMS = spec.INIT_TERMS
    INTERVAL_TERMS = spec.INTERVAL_TERMS
    RESET_TERMS = spec.RESET_TERMS
    EXACT_RESTORE = True  # restore rows are the batch's integration state
    MAX_ABS_VALUE = float(mujoco.mjMAXVAL)  # MuJoCo resets an env whose qpos/qvel/qacc exceed it
    KIT_RULES = 4  # conformance kit rules this backend passes (unisim_conformance CHANGELOG)

    options: MujocoOptions

    def __init__(self, scene: SceneCfg, num_envs: int, sim_dt: float, **options) -> None:
        super().__init__(scene, num_envs, sim_dt, **options)
        m = load_model(scene.model_file, self.sim_dt, self.options)
        self._m = m
        n = self._num_envs
        threads = self.options.threads
        persistent = needs_persistent(m)
        self._check_env_memory(8 * (mujoco.mj_stateSize(m, _INTEGRATION) + 25 * m.nbody + 3 * m.nsite + m.nsensordata)
                               + (m.narena + m.nbuffer if persistent else 0),
                               "batch state rows and bound outputs" + (", one MjData each" if persistent else ""))
        self._batch = b = Batch(m, n, 0 if threads is None else threads, persistent=persistent)
        # state views (writable, live)
        self._state = b.state
        self._time = b.bind("time")
        self._qpos, self._qvel, self._ctrl = b.bind("qpos"), b.bind("qvel"), b.bind("ctrl")
        self._xfrc = b.bind("xfrc_applied")
        self._mocap_pos, self._mocap_quat = b.bind("mocap_pos"), b.bind("mocap_quat")
        # derived outputs: bound before the first call so they are filled by it
        self._xpos, self._xquat, self._xipos = b.bind("xpos"), b.bind("xquat"), b.bind("xipos")
        self._cvel, self._subtree_com = b.bind("cvel"), b.bind("subtree_com")
        self._site_xpos = b.bind("site_xpos") if m.nsite else np.zeros((n, 0, 3))
        self._sensordata = b.bind("sensordata") if m.nsensordata else np.zeros((n, 0))
        self._warnings = b.warning  # live (n, mjNWARNING, 2) [lastinfo, count] per env
        self._unstable = b.warning[:, _UNSTABLE[0]:_UNSTABLE[-1] + 1, 1]  # live view: counters per env
        self._fresh = _STAGE_VEL  # forward stage the outputs hold at the current state (after the reset)
        self._derived_read = True  # a derived field was read since the last step
        self._acc_sensor = m.sensor_needstage == _STAGE_ACC  # (nsensor,)
        self._body_root = m.body_rootid.astype(np.int64)
        self._sensor_cols: dict[bytes, np.ndarray] = {}
        # staged wrenches (world frame, at the body origin)
        self._stage_force = np.zeros((n, m.nbody, 3))
        self._stage_torque = np.zeros((n, m.nbody, 3))
        self._staged = np.zeros(m.nbody, dtype=bool)
        self._staged_ids = np.zeros(0, dtype=np.int64)
        self._last_wrench: tuple[np.ndarray, np.ndarray] | None = None  # (body ids, xfrc rows) of the last step
        width = mujoco.mj_stateSize(m, _INTEGRATION)
        if b.nstate != width:  # the layout _component_cols assumes
            raise EngineError(f"mujoco.batch.Batch rows hold {b.nstate} values, not mjSTATE_INTEGRATION's "
                              f"{width}: unsupported MuJoCo version {mujoco.__version__}")
        # snapshots: [time, qpos, qvel, mocap_pos, mocap_quat] columns of the state rows
        self._snap_cols = np.concatenate([self._component_cols(c) for c in (
            _S.mjSTATE_TIME, _S.mjSTATE_QPOS, _S.mjSTATE_QVEL, _S.mjSTATE_MOCAP_POS, _S.mjSTATE_MOCAP_QUAT)])
        self._extra_cols = np.concatenate([self._component_cols(c) for c in _EXTRA_STATE])
        self._warm_cols = self._component_cols(_S.mjSTATE_WARMSTART)
        self._restore_cols = np.setdiff1d(np.arange(b.nstate),
                                          np.concatenate([self._component_cols(c) for c in _NOT_RESTORED]))
        self._snap_memory = SnapshotMemory(self._num_envs)  # each snapshot row's extra state (bit-exact restores)
        key = -1  # an unknown default_keyframe is refused by the base class once this returns
        if scene.default_keyframe is not None:
            key = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_KEY, scene.default_keyframe)
        self._call(lambda: b.reset(keyframe=key, stage=_STAGE_VEL))

    def _component_cols(self, component) -> np.ndarray:
        """Columns of one state component in the batch's rows: ``mjSTATE_INTEGRATION`` in
        ``mj_getState``'s layout (its components in bit order)."""
        bit, m = int(component), self._m
        start = mujoco.mj_stateSize(m, _INTEGRATION & (bit - 1))
        return np.arange(start, start + mujoco.mj_stateSize(m, bit), dtype=np.int64)

    # ------------------------------------------------------------------ engine calls
    def _call(self, fn) -> None:
        """Run a batch call; engine failures become ``EngineError`` (instabilities are reported
        by ``_diverged_mask`` after the next ``_step``)."""
        try:
            fn()
        except SimulationError as exc:
            raise self._engine_error(exc) from exc
        except mujoco.FatalError as exc:
            raise EngineError(f"MuJoCo error: {exc}") from exc

    def _engine_error(self, exc: SimulationError) -> EngineError:
        return EngineError(f"MuJoCo failed in env(s) {exc.ids.tolist()} (their state is unchanged): "
                           f"{self._batch.error(int(exc.ids[0]))}")

    def _diverged_mask(self) -> np.ndarray | None:
        # MuJoCo checks qpos/qvel/qacc against mjMAXVAL on every substep and resets an unstable env
        # itself (its state is finite again), counting a warning: read and clear the counters.
        # First test: no warning of any kind in any env, one pass over the contiguous counters (after a
        # step, with the caches cold, ~2 µs where w.any() on the strided columns takes ~5 µs at N=1).
        if not np.count_nonzero(self._warnings):
            return None
        w = self._unstable
        mask = w.any(axis=1)
        if not mask.any():
            return None
        w[mask] = 0
        return mask

    def _forward(self, env_ids: np.ndarray | None = None) -> None:
        """After a write to the state or the model of ``env_ids``: keep the outputs current where
        they were (a lagging batch stays lagging, the next read brings every env up)."""
        if self._fresh != _STAGE_NONE:
            self._fresh = _STAGE_NONE  # until the call succeeds
            self._call(lambda: self._batch.forward(env_ids, _STAGE_VEL))
            self._fresh = _STAGE_VEL

    def _derive(self, stage: int = _STAGE_VEL) -> None:
        """Before reading derived fields: bring the outputs up to ``stage`` at the current state."""
        self._derived_read = True
        if self._fresh < stage:
            self._call(lambda: self._batch.forward(None, stage))
            self._fresh = stage

    # ------------------------------------------------------------------ primitives
    @property
    def model(self) -> mujoco.MjModel:
        """The shared ``mjModel`` (per-env randomized fields live in the batch)."""
        return self._m

    @property
    def batch(self) -> Batch:
        """The underlying ``mujoco.batch.Batch`` (advanced use; writes bypass validation)."""
        return self._batch

    def _load_model_info(self) -> ModelInfo:
        return build_model_info(self._m)

    def _step(self, ctrl: np.ndarray, nsteps: int) -> None:
        self._ctrl[...] = ctrl
        b = self._batch
        if not self._staged_ids.size:  # hot path, inlined _call
            # derived fields were read since the last step: have the step's last engine call leave them
            # current (a step of pre-step substeps or chunks makes several calls; the earlier ones skip it)
            stage = _STAGE_VEL if self._derived_read and self._final_call else _STAGE_NONE
            if self._final_call:
                self._derived_read = False
            self._fresh = _STAGE_NONE
            try:
                b.step(None, nsteps, stage)
            except SimulationError as exc:
                raise self._engine_error(exc) from exc
            except mujoco.FatalError as exc:
                raise EngineError(f"MuJoCo error: {exc}") from exc
            self._fresh = stage
            return
        self._derive()
        ids = self._staged_ids
        f = self._stage_force[:, ids]
        t = self._stage_torque[:, ids]
        self._xfrc[:, ids, :3] = f
        # xfrc_applied acts at the COM: a force F at the origin p is F at the COM c plus (p - c) x F.
        # The lever arm follows the body, so it is recomputed before every substep.
        for _ in range(nsteps):
            self._xfrc[:, ids, 3:] = t + np.cross(self._xpos[:, ids] - self._xipos[:, ids], f)
            self._fresh = _STAGE_NONE
            self._call(lambda: b.step(None, 1, _STAGE_VEL))
            self._fresh = _STAGE_VEL

    def _set_state(self, env_ids: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> None:
        self._qpos[env_ids] = qpos
        self._qvel[env_ids] = qvel
        # a new state starts the constraint solver cold, independent of the env's history
        self._state[np.ix_(env_ids, self._warm_cols)] = 0.0
        self._forward(np.sort(env_ids))

    def get_qpos(self) -> np.ndarray:
        return self._qpos.astype(self.np_dtype)

    def get_qvel(self) -> np.ndarray:
        return self._qvel.astype(self.np_dtype)

    def _body_pos_w(self, body_ids: np.ndarray) -> np.ndarray:
        self._derive()
        return np.ascontiguousarray(self._xpos[:, body_ids], dtype=self.np_dtype)

    def _body_quat_w(self, body_ids: np.ndarray) -> np.ndarray:
        self._derive()
        return np.ascontiguousarray(self._xquat[:, body_ids], dtype=self.np_dtype)

    def _body_lin_vel_w(self, body_ids: np.ndarray) -> np.ndarray:
        # cvel = [w, v] at the subtree COM of the body's root; shift v to the body frame origin
        self._derive()
        cvel = self._cvel[:, body_ids]
        arm = self._xpos[:, body_ids] - self._subtree_com[:, self._body_root[body_ids]]
        return np.ascontiguousarray(cvel[..., 3:] + np.cross(cvel[..., :3], arm), dtype=self.np_dtype)

    def _body_ang_vel_w(self, body_ids: np.ndarray) -> np.ndarray:
        self._derive()
        return np.ascontiguousarray(self._cvel[:, body_ids, :3], dtype=self.np_dtype)

    # ------------------------------------------------------------------ sensors
    def _read_sensor(self, index: int) -> np.ndarray:
        self._derive(_STAGE_ACC if self._acc_sensor[index] else _STAGE_VEL)
        adr, dim = int(self._m.sensor_adr[index]), int(self._m.sensor_dim[index])
        return self._sensordata[:, adr:adr + dim].astype(self.np_dtype)

    def _read_sensors(self, indices: np.ndarray) -> np.ndarray:
        self._derive(_STAGE_ACC if self._acc_sensor[indices].any() else _STAGE_VEL)
        key = indices.tobytes()
        cols = self._sensor_cols.get(key)
        if cols is None:
            adr, dim = self._m.sensor_adr, self._m.sensor_dim
            cols = np.concatenate([np.arange(adr[i], adr[i] + dim[i]) for i in indices]).astype(np.int64)
            if cols.size and np.array_equal(cols, np.arange(cols[0], cols[0] + cols.size)):
                cols = slice(int(cols[0]), int(cols[0]) + cols.size)  # one contiguous read
            self._sensor_cols[key] = cols
        return self._sensordata[:, cols].astype(self.np_dtype)

    # ------------------------------------------------------------------ forces
    def _apply_body_force(self, body_ids: np.ndarray, force: np.ndarray, torque: np.ndarray | None) -> None:
        self._stage_force[:, body_ids] = force
        self._stage_torque[:, body_ids] = 0.0 if torque is None else torque
        self._staged[body_ids] = True
        self._staged_ids = np.flatnonzero(self._staged)

    def _clear_body_forces(self) -> None:
        if not self._staged_ids.size:
            self._last_wrench = None
        else:  # contact reads recompute the state the step reached under the wrench that acted in it
            self._last_wrench = (self._staged_ids, self._xfrc[:, self._staged_ids].copy())
            self._xfrc[:, self._staged_ids] = 0.0
            self._stage_force[:, self._staged_ids] = 0.0
            self._stage_torque[:, self._staged_ids] = 0.0
            self._staged[:] = False
            self._staged_ids = self._staged_ids[:0]

    def _bind_contact_forces(self, body_ids: np.ndarray, against_ids: np.ndarray | None) -> MujocoContactFill:
        return MujocoContactFill(self, body_ids, against_ids)

    # ------------------------------------------------------------------ kinematics
    def _site_jacobian(self, site_id: int, dof_indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        body = int(self._m.site_bodyid[site_id])
        self._derive()
        point = np.ascontiguousarray(self._site_xpos[:, site_id])
        jacp, jacr = self._batch.jac(body, point)
        return (jacp[:, :, dof_indices].astype(self.np_dtype, copy=False),
                jacr[:, :, dof_indices].astype(self.np_dtype, copy=False))

    # ------------------------------------------------------------------ terrain and mocap
    def _height_field(self, geom_id: int) -> HFieldSampler:
        return HFieldSampler.from_mjmodel(self._m, geom_id)

    def _bind_mocap_pose(self, body_id: int) -> MujocoMocapPoseBinding:
        return MujocoMocapPoseBinding(self, self.model_info.body_names[body_id], int(self._m.body_mocapid[body_id]))

    # ------------------------------------------------------------------ snapshots
    def _get_physics_state(self) -> np.ndarray:
        rows = self._state[:, self._snap_cols]
        # Remember the solver warm start (and activations) of each row so that restoring
        # this snapshot continues bit for bit; the contract's row does not carry them.
        self._snap_memory.remember(rows, self._state[:, self._extra_cols])
        return rows  # float64 whatever np_dtype is: a restore must be exact

    def _set_physics_state(self, state: np.ndarray) -> None:
        self._check_open()
        self._state[:, self._snap_cols] = state
        for i in range(self._num_envs):
            extras = self._snap_memory.recall(state[i])
            if extras is not None:
                self._state[i, self._extra_cols] = extras
            else:  # an unknown row: start the solver cold (activations are kept)
                self._state[i, self._warm_cols] = 0.0
        self._forward()

    def _restore_rows(self, env_ids: np.ndarray | None = None) -> np.ndarray:
        # time, qpos, qvel, act, history, warm start, ctrl (acceleration-stage sensors read it),
        # eq_active, mocap, userdata, plugin state: the snapshot row lacks the warm start, and a
        # fresh instance then differs by ~1e-14 after a contact
        state = self._state
        return state[:, self._restore_cols] if env_ids is None else state[np.ix_(env_ids, self._restore_cols)]

    def _load_restore_rows(self, rows: np.ndarray) -> None:
        self._check_open()
        self._state[:, self._restore_cols] = rows
        self._forward()

    # ------------------------------------------------------------------ randomization
    def _model_table(self, field: str) -> np.ndarray:
        """Per-env values of a model field: expanded, or the shared value broadcast (read-only)."""
        got = self._batch.expanded(field)
        if got is not None:
            return got
        value = np.asarray(getattr(self._m.opt, field[4:]) if field.startswith("opt.") else getattr(self._m, field))
        return np.broadcast_to(value, (self._num_envs, *value.shape))

    def _read_model_field(self, term: str) -> np.ndarray:
        field = TERM_FIELDS[term]
        table = self._model_table(field)
        if term == "actuator_kp":
            table = np.where(self._m.actuator_biastype == int(mujoco.mjtBias.mjBIAS_AFFINE),
                             -table[..., 1], 0.0)
        elif term == "actuator_kd":
            table = actuator_gains(self._m, biasprm=table)[1]
        return np.array(table, dtype=self.np_dtype)

    def _write_model_field(self, term: str, env_ids: np.ndarray, target_ids: np.ndarray | None,
                           values: np.ndarray) -> None:
        self._check_open()
        m, b = self._m, self._batch
        check_term_targets(m, term, target_ids, self.model_info.actuator_names)
        rows = env_ids[:, None]
        if target_ids is None:  # gravity
            b.expand(TERM_FIELDS[term])[env_ids] = values
        elif term == "actuator_kp":
            b.expand("actuator_gainprm")[rows, target_ids, 0] = values
            b.expand("actuator_biasprm")[rows, target_ids, 1] = -values
        elif term == "actuator_kd":
            b.expand("actuator_biasprm")[rows, target_ids, 2] = -values
        else:
            b.expand(TERM_FIELDS[term])[rows, target_ids] = values
        if term == "geom_size":  # broad phase bounds of the resized primitives
            b.expand("geom_aabb")[rows, target_ids, 3:] = primitive_aabb(m.geom_type[target_ids], values)
        ids = np.sort(env_ids)
        if term in SETCONST_TERMS:
            self._call(lambda: b.set_const(ids))
        self._forward(ids)

    # ------------------------------------------------------------------ rendering
    def get_playback_model(self, env_index: int | None = None) -> mujoco.MjModel:
        """The shared model, or env ``env_index``'s model with its randomized fields."""
        if env_index is None:
            return self._m
        from unisim_core.contract.validation import check_int

        return self._batch.get_model(check_int("env_index", env_index, 0, self._num_envs - 1))

    # ------------------------------------------------------------------ lifecycle
    def _close(self) -> None:
        self._batch = None  # type: ignore[assignment]
