"""``NewtonBackend``: the SimBackend contract on Newton (``newton``, warp-based).

One Newton ``Model`` holds the ``num_envs`` worlds (``ModelBuilder.replicate`` of the scene that
Newton's MJCF importer built), on one warp device (CUDA, or warp's CPU device); one solver steps
them all. The scene is also read by ``unisim_core.plugin.mjcf_lite`` for the contract's tables; values
Newton's importer would drop are refused by name (``_scene``).

Conventions converted here: Newton's free-joint coordinates are ``[p, q_xyzw]`` and its free-joint
velocities ``[v_com, w]`` (centre-of-mass velocity and angular velocity, both world frame), its body
twists ``[v_com, w]`` in the world frame; the contract's are MuJoCo's ``[p, q_wxyz]`` and ``[v_origin
(world), w (body frame)]``, body linear velocities at the body origin. Engine state is float32.

Sensors (Newton's importer reads none) are evaluated from the body kinematics by the definitions
of ``mjcf_lite``'s sensor subset; the accelerometer uses the velocity change over the last substep
(zero acceleration right after ``set_state``: it reads ``-g`` in the sensor frame until the next step).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import warnings

import mujoco_warp as mjw
import newton
import numpy as np
import warp as wp

from unisim_core.contract import quat as Q
from unisim_core.contract.backend import SimBackend, diverged_rows
from unisim_core.contract.errors import UnsupportedCapabilityError
from unisim_core.contract.heightfield import HFieldSampler
from unisim_core.contract.kinematics import site_jacobian
from unisim_core.contract.model import ModelInfo
from unisim_core.contract.subtree import SUBTREE_SENSORS, subtree_sensor
from unisim_core.plugin.mjcf_lite import FRAME_AXES, in_reference_frame
from unisim_core.plugin.plugin_support import SnapshotMemory, WarpKernelNotice, load_mjcf_or_refuse, warp_device
from unisim_mjwarp import FATAL_OVERFLOWS, overflow_error

from . import _hooks
from ._contacts import NewtonContactFill
from ._kernels import QvelKernel, gather_overflow
from ._mocap import NewtonMocapPoseBinding
from ._options import NewtonOptions
from ._randomization import NewtonModelTerms
from ._scene import ACCEPTED, ENGINE_LIMITS, build_model, build_solver, check_engine_limits, scene_buffer_sizes


@contextlib.contextmanager
def _quiet_fds():
    """Silence file descriptors 1 and 2 (warp's native code prints past ``sys.stdout``/``sys.stderr``)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


# warp's banner and its no-CUDA-driver notice at initialization (its per-module compile lines stay);
# a device the user asks for and warp lacks is reported by warp_device
with _quiet_fds():
    wp.init()

__all__ = ["NewtonBackend"]

class NewtonBackend(SimBackend):
    """Newton behind the UniSim contract (``num_envs`` worlds on a CUDA or CPU warp device)."""

    name = "newton"
    version = _hooks.__version__
    contract_range = ">=1.0,<2"
    options_cls = NewtonOptions
    CAPABILITIES = _hooks.CAPABILITIES
    INIT_TERMS = _hooks.INIT_TERMS
    INTERVAL_TERMS = _hooks.INTERVAL_TERMS
    RESET_TERMS = _hooks.RESET_TERMS
    SNAPSHOT_TIER = "state"  # the solver's warm start is not part of a snapshot
    KIT_RULES = 4  # conformance kit rules this backend passes (unisim_conformance CHANGELOG)
    MAX_ABS_VALUE = float(np.finfo(np.float32).max)  # the engine's state and inputs are float32

    options: NewtonOptions

    def __init__(self, scene, num_envs, sim_dt, **options) -> None:
        super().__init__(scene, num_envs, sim_dt, **options)
        path = str(self.scene.model_file)
        check_engine_limits(path)
        self._lite = lite = load_mjcf_or_refuse(path, self.name, accept=ACCEPTED, reasons=ENGINE_LIMITS)
        spatial = [s["name"] for s in lite.sensors if s["type"] == "actuatorpos"
                   and lite.actuators[s["obj"]]["tendon"] >= 0
                   and lite.tendons[lite.actuators[s["obj"]]["tendon"]]["type"] != "fixed"]
        if spatial:
            raise UnsupportedCapabilityError(self.name, "actuatorpos_sensor", f"{path}: actuatorpos sensors {spatial} "
                                             "read actuators on spatial tendons; this backend reads an actuator's "
                                             "length from the joints (a fixed tendon's), not along a spatial path")
        _ = self.model_info  # names given by the options (base_name, ...) are checked before the engine loads
        self._device = warp_device(wp, self.options.device)
        n, opts = self._num_envs, self.options
        self._cache: tuple[np.ndarray, ...] | None = None
        self._ten: np.ndarray | None = None  # MuJoCo Warp's tendon lengths of the current state (_tendon_lengths)
        sized = (None, None) if opts.nconmax and opts.njmax else scene_buffer_sizes(path, self.scene.default_keyframe)
        buffers = (opts.nconmax or sized[0], opts.njmax or sized[1])
        with WarpKernelNotice(wp, "unisim-newton", self._device, "Newton and MuJoCo Warp kernels") as notice:
            self._model, self._layout = build_model(path, self._lite, n, self._device)
            self._solver = build_solver(self._model, path, self._lite, buffers, self._layout)
            #: per world, MuJoCo Warp's buffers that overflowed during the last step (gathered per substep)
            self._overflow = wp.zeros(n, dtype=wp.int32, device=self._device)
            self._overflow_view = self._overflow.numpy() if self._device == "cpu" else None
            self._state, self._prev, self._probe = self._model.state(), self._model.state(), self._model.state()
            self._control = self._model.control()
            self._graphs: dict[int, object] = {}  # id(state stepped from) -> its captured substep
            self._views: dict[int, tuple[np.ndarray, ...]] = {}  # id(state) -> its host views (CPU device)
            lay = self._layout
            self._com = self._body_com()
            self._has_ref = bool(self._layout.q_ref.any())
            self._terms = NewtonModelTerms(self)
            self._qvel = QvelKernel(self._model, n, lay.qd_src, [(da, lay.body_src[body]) for _, da, body in lay.free],
                                    self.options.graph_capture, [(lay.q_src[qa + 1], da) for qa, da in lay.ball])
            self._time = np.zeros(n)
            self._fresh = np.ones(n, dtype=bool)  # envs whose last substep is unknown (accelerometer)
            self._wrench = np.zeros((n, len(lay.body_src), 6))  # staged [force, torque] at body origins
            self._staged = False
            self._snapshots = SnapshotMemory(n)  # each snapshot row's float32 engine rows (exact restores)
            self._reset_to_default(np.arange(n))
            if notice.first:  # one substep loads (or compiles) every kernel under the notice
                self._solver.step(self._state, self._prev, self._control, None, self.sim_dt)
                self._qvel(self._state)
                wp.synchronize_device(self._device)
                self._reset_to_default(np.arange(n))

    # ------------------------------------------------------------------ engine access
    @property
    def device(self) -> str:
        """The warp device the worlds live on (``"cpu"``, ``"cuda:0"``, ...)."""
        return self._device

    @property
    def buffers(self) -> tuple[int, int]:
        """``(nconmax, njmax)``: MuJoCo Warp's contacts and constraint rows per world (options, or sized
        from the model); all worlds share a pool of ``nconmax * num_envs`` contacts (``naconmax``)."""
        d = self._solver.mjw_data
        return d.naconmax // self._num_envs, int(d.njmax)

    @property
    def newton_model(self) -> newton.Model:
        """The Newton ``Model`` of all worlds (advanced use; writes bypass validation)."""
        return self._model

    @property
    def newton_state(self) -> newton.State:
        """The current Newton ``State`` (advanced use; writes bypass validation)."""
        return self._state

    def _body_com(self) -> np.ndarray:
        """Each contract body's COM in its frame ``(n, nbody - 1, 3)`` float64 (world body left out)."""
        lay = self._layout
        return self._model.body_com.numpy().reshape(self._num_envs, lay.bodies, 3)[:, lay.body_src[1:]].astype(
            np.float64)

    def _load_model_info(self) -> ModelInfo:
        return self._lite.model_info()

    def _world_rows(self, array: wp.array, width: int) -> np.ndarray:
        return array.numpy().reshape(self._num_envs, width)

    def _host(self, state: newton.State) -> tuple[np.ndarray, ...]:
        """``state``'s ``(joint_q (n, coords), joint_qd (n, dofs), body_q (n, bodies, 7), body_qd (n,
        bodies, 6))`` float32 on the host, read-only use: on warp's CPU device views of the engine's
        memory, made once per state (``.numpy()`` costs ~13 µs a call); on CUDA copies, made per read."""
        views = self._views.get(id(state))
        if views is None:
            n, lay = self._num_envs, self._layout
            views = (state.joint_q.numpy().reshape(n, lay.coords), state.joint_qd.numpy().reshape(n, lay.dofs),
                     state.body_q.numpy().reshape(n, lay.bodies, 7), state.body_qd.numpy().reshape(n, lay.bodies, 6))
            if self._device == "cpu":
                self._views[id(state)] = views
        return views

    def _kinematics(self, state: newton.State) -> tuple[np.ndarray, ...]:
        """``(pos, quat_wxyz, lin_vel, ang_vel)`` of every contract body in ``state``, each
        ``(n, nbody, 3|4)`` float64, world frame, linear velocity at the body origin; row 0 the world."""
        n, lay = self._num_envs, self._layout
        _, _, body_q, body_qd = self._host(state)
        rows = lay.body_src[1:]
        body_q, body_qd = body_q[:, rows].astype(np.float64), body_qd[:, rows].astype(np.float64)
        quat = Q.quat_xyzw_to_wxyz(body_q[..., 3:])
        ang = body_qd[..., 3:]
        lin = Q.com_to_origin_velocity(quat, body_qd[..., :3], ang, self._com)
        world = lambda row: np.broadcast_to(np.asarray(row, dtype=np.float64), (n, 1, len(row)))
        return (np.concatenate((world([0, 0, 0]), body_q[..., :3]), axis=1),
                np.concatenate((world([1, 0, 0, 0]), quat), axis=1),
                np.concatenate((world([0, 0, 0]), lin), axis=1), np.concatenate((world([0, 0, 0]), ang), axis=1))

    def _tendon_lengths(self) -> np.ndarray:
        """``(n, ntendon)`` MuJoCo Warp's tendon lengths at the current state (m or rad): Newton's state pushed into
        its data (``SolverMuJoCo._update_mjc_data``, Newton 1.8), then its kinematics and tendon passes."""
        if self._ten is None:
            solver = self._solver
            solver._update_mjc_data(solver.mjw_data, self._model, self._state)
            for stage in (mjw.kinematics, mjw.com_pos, mjw.tendon):
                stage(solver.mjw_model, solver.mjw_data)
            self._ten = solver.mjw_data.ten_length.numpy().reshape(self._num_envs, -1).astype(np.float64)
        return self._ten

    def _now(self) -> tuple[np.ndarray, ...]:
        if self._cache is None:
            self._cache = self._kinematics(self._state)
        return self._cache

    # ------------------------------------------------------------------ primitives
    def _step(self, ctrl: np.ndarray, nsteps: int) -> None:
        if self._layout.actuators:
            self._control.mujoco.ctrl.assign(ctrl.astype(np.float32).reshape(-1))
        for _ in range(nsteps):
            if self._staged:
                self._write_wrench()
            self._substep()
            self._state, self._prev = self._prev, self._state
            self._cache = self._ten = None
        self._time += nsteps * self.sim_dt
        self._fresh[:] = False  # a non-finite state is caught by the core's divergence policy
        self._check_overflow()

    def _check_overflow(self) -> None:
        """A MuJoCo Warp buffer overflow during the step (contacts or constraint rows dropped) in a
        world whose state is finite is an ``EngineError`` naming the buffer and the option to raise;
        a non-finite world is left to the core's divergence policy."""
        flags = self._overflow.numpy() if self._overflow_view is None else self._overflow_view
        if not flags.any():
            return
        flags = flags.copy()
        self._overflow.zero_()  # reported once; the next overflow raises again
        diverged = self._diverged_mask()
        if diverged is not None:
            flags[diverged] = 0
        if flags.any():
            raise overflow_error(flags, *self.buffers)

    def _substep(self) -> None:
        """One ``SolverMuJoCo.step`` from ``_state`` into ``_prev``: replayed from the graph captured
        for this direction (captured on first use; a capture records, it does not run)."""
        graph = self._graphs.get(id(self._state))
        if graph is None and self.options.graph_capture:
            with wp.ScopedDevice(self._device), wp.ScopedCapture(device=self._device) as capture:
                self._solve()
            graph = self._graphs[id(self._state)] = capture.graph
        if graph is None:
            self._solve()
        else:
            wp.capture_launch(graph)

    def _solve(self) -> None:
        self._solver.step(self._state, self._prev, self._control, None, self.sim_dt)
        gather_overflow(self._solver.mjw_data.overflow, FATAL_OVERFLOWS, self._overflow)

    def _diverged_mask(self) -> np.ndarray | None:
        """Non-finite or out-of-range rows of Newton's own joint coordinates and velocities (what the
        contract's qpos/qvel are converted from; no conversion on the hot path)."""
        joint_q, joint_qd, _, _ = self._host(self._state)
        return diverged_rows(self.MAX_ABS_VALUE, joint_q, joint_qd)

    def _set_state(self, env_ids: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> None:
        self._check_open()
        self._write_state(env_ids, qpos, qvel)
        warm = getattr(self._solver.mjw_data, "qacc_warmstart", None)
        if warm is not None:  # a new state starts the constraint solver cold, independent of history
            rows = warm.numpy()
            rows[env_ids] = 0.0
            warm.assign(rows)
        self._fresh[env_ids] = True

    def _write_state(self, env_ids: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> None:
        """The contract's ``qpos``/``qvel`` rows of ``env_ids`` into Newton's state (converted with the
        current COMs), bodies by forward kinematics; other envs keep their state bit for bit."""
        lay, st = self._layout, self._state
        jq, jqd = self._world_rows(st.joint_q, lay.coords).copy(), self._world_rows(st.joint_qd, lay.dofs).copy()
        jq[np.ix_(env_ids, lay.q_src)] = qpos - lay.q_ref
        vel = qvel.copy()
        for qa, da, body in lay.free:  # MuJoCo [v_origin, w_body] -> Newton [v_com, w_world]
            q = Q.quat_normalize(qpos[:, qa + 3:qa + 7])
            w = Q.quat_apply(q, qvel[:, da + 3:da + 6])
            vel[:, da:da + 3] = qvel[:, da:da + 3] + np.cross(w, Q.quat_apply(q, self._com[env_ids, body - 1]))
            vel[:, da + 3:da + 6] = w
        for qa, da in lay.ball:  # MuJoCo's body-frame angular velocity -> Newton's, in the parent's frame
            vel[:, da:da + 3] = Q.quat_apply(Q.quat_normalize(qpos[:, qa:qa + 4]), qvel[:, da:da + 3])
        jqd[np.ix_(env_ids, lay.qd_src)] = vel
        st.joint_q.assign(jq.reshape(-1).astype(np.float32))
        st.joint_qd.assign(jqd.reshape(-1).astype(np.float32))
        self._forward_kinematics(env_ids)

    def _forward_kinematics(self, env_ids: np.ndarray) -> None:
        """Newton's body poses and twists of ``env_ids`` from their joint state and the joints' frames
        (``eval_fk``); other envs keep theirs bit for bit."""
        n, lay, st = self._num_envs, self._layout, self._state
        keep_q = st.body_q.numpy().reshape(n, lay.bodies, 7).copy()
        keep_qd = st.body_qd.numpy().reshape(n, lay.bodies, 6).copy()
        newton.eval_fk(self._model, st.joint_q, st.joint_qd, st)
        others = np.setdiff1d(np.arange(n), env_ids)
        if others.size:  # other envs keep their body state bit for bit
            body_q, body_qd = st.body_q.numpy().reshape(n, lay.bodies, 7), st.body_qd.numpy().reshape(n, lay.bodies, 6)
            body_q[others], body_qd[others] = keep_q[others], keep_qd[others]
            st.body_q.assign(body_q.reshape(-1, 7))
            st.body_qd.assign(body_qd.reshape(-1, 6))
        self._cache = self._ten = None

    def get_qpos(self) -> np.ndarray:
        qpos = self._host(self._state)[0][:, self._layout.q_src]
        if self._has_ref:  # MuJoCo's qpos of a joint with a ref is Newton's coordinate + ref
            return (qpos + self._layout.q_ref).astype(self.np_dtype)
        return np.ascontiguousarray(qpos, dtype=self.np_dtype)

    def get_qvel(self) -> np.ndarray:
        return self._qvel(self._state).astype(self.np_dtype)  # converted on the device (QvelKernel)

    def _body_pos_w(self, body_ids):
        return np.ascontiguousarray(self._now()[0][:, body_ids], dtype=self.np_dtype)

    def _body_quat_w(self, body_ids):
        return np.ascontiguousarray(self._now()[1][:, body_ids], dtype=self.np_dtype)

    def _body_lin_vel_w(self, body_ids):
        return np.ascontiguousarray(self._now()[2][:, body_ids], dtype=self.np_dtype)

    def _body_ang_vel_w(self, body_ids):
        return np.ascontiguousarray(self._now()[3][:, body_ids], dtype=self.np_dtype)

    # ------------------------------------------------------------------ sensors
    def _frame(self, kin: tuple[np.ndarray, ...], objtype: str, obj: int) -> tuple[np.ndarray, ...]:
        """World ``(pos, quat, lin_vel, ang_vel)`` of a site, a body's inertial frame (``body``) or
        its frame (``xbody``), from the body kinematics ``kin``."""
        body, off_pos, off_quat = self._lite.frame_offset(objtype, obj)
        pos_b, quat_b, lin_b, ang_b = (k[:, body] for k in kin)
        arm = Q.quat_apply(quat_b, np.broadcast_to(off_pos, pos_b.shape))
        quat = Q.quat_mul(quat_b, np.broadcast_to(off_quat, quat_b.shape))
        return pos_b + arm, quat, lin_b + np.cross(ang_b, arm), ang_b

    def _read_sensor(self, index: int) -> np.ndarray:
        s = self._lite.sensors[index]
        value = self._sensor_value(s)
        if s["cutoff"] > 0 and s["type"] != "framequat":  # MuJoCo clamps a real-valued sensor to +-cutoff
            value = np.clip(value, -s["cutoff"], s["cutoff"])
        return np.ascontiguousarray(value, dtype=self.np_dtype)

    def _sensor_value(self, s: dict) -> np.ndarray:
        kind, obj, info = s["type"], s["obj"], self.model_info
        if kind == "jointpos":
            return self.get_qpos()[:, info.joint_qposadr[obj], None]
        if kind == "jointvel":
            return self.get_qvel()[:, info.joint_dofadr[obj], None]
        if kind == "tendonpos":
            return self._tendon_lengths()[:, obj, None]
        if kind in SUBTREE_SENSORS:
            return subtree_sensor(self, kind, obj, self._lite.body_iquat)
        if kind == "actuatorpos":  # the actuator's length: gear * qpos of its joint or gear * sum coef q of its
            a = self._lite.actuators[obj]  # fixed tendon (a site motor's is 0)
            if a["tendon"] >= 0:
                t = self._lite.tendons[a["tendon"]]
                cols = [info.joint_qposadr[j] for j in t["joints"]]
                return a["gear"] * (self.get_qpos()[:, cols] @ np.asarray(t["coef"], dtype=np.float64))[:, None]
            if a["joint"] < 0:
                return np.zeros((self._num_envs, 1))
            return a["gear"] * self.get_qpos()[:, info.joint_qposadr[a["joint"]], None]
        pos, quat, vel, ang = self._frame(self._now(), s["objtype"], obj)
        if kind == "accelerometer":
            before = self._frame(self._kinematics(self._prev), s["objtype"], obj)[2]
            acc = (vel - before) / self.sim_dt
            if self._fresh.any():  # no substep since set_state: the velocity change over a probe substep
                after = self._frame(self._probe_step(), s["objtype"], obj)[2]
                acc[self._fresh] = ((after - vel) / self.sim_dt)[self._fresh]
            value = Q.quat_apply_inverse(quat, acc - info.gravity)
        elif kind == "gyro":
            value = Q.quat_apply_inverse(quat, ang)
        elif kind == "velocimeter":
            value = Q.quat_apply_inverse(quat, vel)
        elif kind == "magnetometer":
            value = Q.quat_apply_inverse(quat, np.broadcast_to(self._lite.magnetic, vel.shape))
        else:
            if "reftype" in s:  # measured in another frame (site, body, xbody or geom)
                ref_pos, ref_quat = self._frame(self._now(), s["reftype"], s["ref"])[:2]
                value = in_reference_frame(kind, pos, quat, ref_pos, ref_quat)
            else:
                value = Q.quat_apply(quat, np.eye(3)[FRAME_AXES[kind]]) if kind in FRAME_AXES else {
                    "framepos": pos, "framequat": quat, "framelinvel": vel, "frameangvel": ang}[kind]
        return np.ascontiguousarray(value, dtype=self.np_dtype)

    def _probe_step(self) -> tuple[np.ndarray, ...]:
        """Body kinematics one substep ahead (held ctrl, no staged wrench) into a scratch state; the
        solver's warm start is restored, so the trajectory does not depend on the probe."""
        warm = getattr(self._solver.mjw_data, "qacc_warmstart", None)
        saved = None if warm is None else wp.clone(warm)
        self._solver.step(self._state, self._probe, self._control, None, self.sim_dt)
        if saved is not None:
            wp.copy(warm, saved)
        return self._kinematics(self._probe)

    # ------------------------------------------------------------------ forces
    def _bind_contact_forces(self, body_ids, against_ids) -> NewtonContactFill:
        return NewtonContactFill(self, body_ids, against_ids)

    def _apply_body_force(self, body_ids, force, torque) -> None:
        self._wrench[:, body_ids, :3] = force
        self._wrench[:, body_ids, 3:] = 0.0 if torque is None else torque
        self._staged = True

    def _clear_body_forces(self) -> None:
        if self._staged:
            self._wrench[:] = 0.0
            self._state.body_f.zero_()
            self._prev.body_f.zero_()
            self._staged = False

    def _write_wrench(self) -> None:
        """Staged wrenches at body origins -> Newton's ``body_f`` (world wrench about the COM), this substep."""
        n, lay = self._num_envs, self._layout
        pos, quat, _, _ = self._now()
        force, torque = self._wrench[:, 1:, :3], self._wrench[:, 1:, 3:]
        arm = Q.quat_apply(quat[:, 1:], self._com)  # body origin -> COM
        body_f = np.zeros((n, lay.bodies, 6))
        body_f[:, lay.body_src[1:], :3] = force
        body_f[:, lay.body_src[1:], 3:] = torque - np.cross(arm, force)
        self._state.body_f.assign(body_f.reshape(-1, 6).astype(np.float32))

    # ------------------------------------------------------------------ kinematics
    #: MuJoCo's mj_jacSite from the model tables and the contract's body poses, shared by every engine
    _site_jacobian = site_jacobian

    # ------------------------------------------------------------------ height fields
    def _height_field(self, geom_id: int) -> HFieldSampler:
        # the file's field as MuJoCo compiles it: SolverMuJoCo hands MuJoCo Warp the same samples (checked
        # in the tests), so the scan is the surface the robots collide with
        return HFieldSampler.from_lite(self._lite, geom_id)

    # ------------------------------------------------------------------ randomization
    def _read_model_field(self, term: str) -> np.ndarray:
        return self._terms.read(term).astype(self.np_dtype)

    def _check_model_values(self, term: str, env_ids: np.ndarray, target_ids: np.ndarray | None,
                            values: np.ndarray) -> None:
        self._terms.check(term, target_ids)

    def _write_model_field(self, term: str, env_ids: np.ndarray, target_ids: np.ndarray | None,
                           values: np.ndarray) -> None:
        """Newton's model arrays (``NewtonModelTerms``), then ``SolverMuJoCo.notify_model_changed``
        (MuJoCo Warp's per-world model and its derived constants). A new COM keeps the contract's
        state (MuJoCo's qvel is the origin's velocity; Newton's free joints hold the COM's)."""
        self._check_open()
        kept = (self.get_qpos()[env_ids], self.get_qvel()[env_ids]) if term == "body_com_offset" else None
        flag = self._terms.write(term, env_ids, target_ids, values)
        with wp.ScopedDevice(self._device), warnings.catch_warnings():
            # MuJoCo Warp 4 deprecates the set_const_* calls Newton 1.8 makes (it passes the same groups)
            warnings.filterwarnings("ignore", message="set_const", category=DeprecationWarning)
            self._solver.notify_model_changed(flag)
        if kept is not None:
            self._com = self._body_com()
            self._write_state(env_ids, *kept)
        self._cache = self._ten = None

    # ------------------------------------------------------------------ mocap
    def _bind_mocap_pose(self, body_id: int) -> NewtonMocapPoseBinding:
        mocap = self.model_info.mocap_body_names.index(self.model_info.body_names[body_id])
        return NewtonMocapPoseBinding(self, self._layout.mocap[mocap])

    # ------------------------------------------------------------------ snapshots
    def _engine_rows(self) -> list[np.ndarray]:
        """Per-env copies of the engine state arrays (joint_q, joint_qd, body_q, body_qd) of the
        current state and of the state before the last substep (the accelerometer's)."""
        lay = self._layout
        return [self._world_rows(array, width).copy() for st in (self._state, self._prev)
                for array, width in ((st.joint_q, lay.coords), (st.joint_qd, lay.dofs),
                                     (st.body_q, lay.bodies * 7), (st.body_qd, lay.bodies * 6))]

    def _engine_arrays(self) -> list[wp.array]:
        return [array for st in (self._state, self._prev) for array in (st.joint_q, st.joint_qd, st.body_q, st.body_qd)]

    def _get_physics_state(self) -> np.ndarray:
        mocap = [NewtonMocapPoseBinding(self, j).get() for j in self._layout.mocap]
        rows = np.concatenate((self._time[:, None], self.get_qpos().astype(np.float64),
                               self.get_qvel().astype(np.float64), *[p for p, _ in mocap], *[q for _, q in mocap]),
                              axis=1)
        # Remember each row's float32 engine state: a restore writes it back bit for bit (the
        # contract's row converts the free-root velocities, which float32 cannot round-trip exactly).
        engine = self._engine_rows()
        self._snapshots.remember(rows, (([a[i] for a in engine], bool(self._fresh[i])) for i in range(self._num_envs)))
        return rows

    def _set_physics_state(self, state: np.ndarray) -> None:
        nq, nv, ids, mocap = self.nq, self.nv, np.arange(self._num_envs), self._layout.mocap
        for i, joint in enumerate(mocap):  # poses first: _set_state's forward kinematics places them
            pos = state[:, 1 + nq + nv + 3 * i:1 + nq + nv + 3 * i + 3]
            quat = state[:, 1 + nq + nv + 3 * len(mocap) + 4 * i:1 + nq + nv + 3 * len(mocap) + 4 * i + 4]
            NewtonMocapPoseBinding(self, joint).write_frames(ids, pos, quat)
        self._set_state(ids, state[:, 1:1 + nq], state[:, 1 + nq:1 + nq + nv])
        engine = self._engine_rows()
        for i in range(self._num_envs):
            known = self._snapshots.recall(state[i])
            if known is not None:
                for table, row in zip(engine, known[0]):
                    table[i] = row
                self._fresh[i] = known[1]
        for array, table in zip(self._engine_arrays(), engine):
            array.assign(table.reshape(array.numpy().shape))
        self._time = state[:, 0].copy()
        self._cache = self._ten = None

    # ------------------------------------------------------------------ lifecycle
    def _close(self) -> None:
        self._graphs, self._views = {}, {}
        self._solver = self._model = self._state = self._prev = self._probe = self._control = None  # type: ignore[assignment]
        self._qvel = None  # type: ignore[assignment]
