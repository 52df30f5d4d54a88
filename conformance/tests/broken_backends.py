"""Deliberately broken backends (subclasses of the fake), each with one classic bug.

Referenced by the kit's own tests as ``broken_backends:Name``; each must fail a named check
(``EXPECTED`` maps the class to the check id and the layer the test runs).
"""

from __future__ import annotations

import numpy as np

from unisim_core import UnsupportedCapabilityError
from unisim_core.contract import quat as Q
from unisim_core.plugin.fake import FakeBackend


class QuatXyzw(FakeBackend):
    """Returns quaternions xyzw (the MotrixSim-native order) instead of wxyz."""

    name = "broken_quat_xyzw"

    def get_base_quat(self):
        return np.ascontiguousarray(super().get_base_quat()[:, [1, 2, 3, 0]])

    def _body_quat_w(self, body_ids):
        return np.ascontiguousarray(super()._body_quat_w(body_ids)[..., [1, 2, 3, 0]])


class AngVelBodyFrame(FakeBackend):
    """Returns the body-frame qvel angular velocity from the world-frame getters."""

    name = "broken_ang_vel_frame"

    def get_base_ang_vel(self):
        return np.ascontiguousarray(self.get_qvel()[:, 3:6])

    def _body_ang_vel_w(self, body_ids):
        w = super()._body_ang_vel_w(body_ids)
        return Q.quat_apply_inverse(super()._body_quat_w(body_ids), w).astype(w.dtype)


class LeakySetState(FakeBackend):
    """set_state writes the first row into every env, not only the listed ones."""

    name = "broken_leaky_set_state"

    def _set_state(self, env_ids, qpos, qvel):
        n = self.num_envs
        super()._set_state(np.arange(n), np.repeat(qpos[:1], n, 0), np.repeat(qvel[:1], n, 0))


class NstepsIgnored(FakeBackend):
    """step(ctrl, nsteps) always advances a single substep."""

    name = "broken_nsteps_ignored"

    def _step(self, ctrl, nsteps):
        super()._step(ctrl, 1)


class GarbageVideo(FakeBackend):
    """Does not declare VIDEO_CAPTURE, yet returns a black frame instead of raising."""

    name = "broken_garbage_video"

    def capture_video_frame(self):
        return np.zeros((48, 64, 3), dtype=np.uint8)


class CtrlRangeTransposed(FakeBackend):
    """Returns the control range as (2, nu) rows [lows, highs] instead of (nu, 2)."""

    name = "broken_ctrl_range_transposed"

    def get_actuator_ctrl_range(self):
        return np.ascontiguousarray(super().get_actuator_ctrl_range().T)


class ForceWrongSign(FakeBackend):
    """Applies external body forces with the opposite sign."""

    name = "broken_force_sign"

    def _apply_body_force(self, body_ids, force, torque):
        super()._apply_body_force(body_ids, -force, torque)


# ------------------------------------------------------------------ physics-binding bugs (dynamics layer)
class IgnoresActuators(FakeBackend):
    """Steps with zero ctrl whatever the caller asks (no pre-step hook involved)."""

    name = "broken_ignores_actuators"

    def _step(self, ctrl, nsteps):
        super()._step(np.zeros_like(ctrl), nsteps)


class HalfPositionGain(FakeBackend):
    """Applies half the position actuators' kp (reports the right one)."""

    name = "broken_half_kp"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._tables["actuator_kp"] *= 0.5


class NoCtrlClamp(FakeBackend):
    """Never clamps ctrl to ctrlrange."""

    name = "broken_no_ctrl_clamp"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._ctrl_lo[:], self._ctrl_hi[:] = -np.inf, np.inf


class NoForceClamp(FakeBackend):
    """Never clamps actuator force to forcerange."""

    name = "broken_no_force_clamp"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._frange[:] = [-np.inf, np.inf]


class ZeroSensors(FakeBackend):
    """Reads zeros from gyro, velocimeter, accelerometer, jointpos and jointvel sensors."""

    name = "broken_zero_sensors"

    def _read_sensor(self, index):
        out = super()._read_sensor(index)
        if self._lite.sensors[index]["type"] in ("gyro", "velocimeter", "accelerometer", "jointpos", "jointvel"):
            out[:] = 0.0
        return out


class ComVelocity(FakeBackend):
    """Reports body linear velocity at the centre of mass instead of the body frame origin."""

    name = "broken_com_velocity"

    def _body_lin_vel_w(self, body_ids):
        v = super()._body_lin_vel_w(body_ids)
        com = Q.quat_apply(super()._body_quat_w(body_ids), np.broadcast_to(self._ipos[body_ids], v.shape))
        return (v + np.cross(super()._body_ang_vel_w(body_ids), com)).astype(v.dtype)


class IgnoresDamping(FakeBackend):
    """Simulates no joint damping (reports the model's)."""

    name = "broken_ignores_damping"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._tables["dof_damping"][:] = 0.0


class IgnoresArmature(FakeBackend):
    """Simulates no joint armature."""

    name = "broken_ignores_armature"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._armature = np.zeros_like(self._armature)


class IgnoresJointLimits(FakeBackend):
    """Simulates no joint limits."""

    name = "broken_ignores_limits"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._lo[:], self._hi[:] = -np.inf, np.inf


class RefusesArticulatedScenes(FakeBackend):
    """Refuses every scene with a joint other than a free joint, and declares it: coverage must fail."""

    name = "broken_refuses_articulated"
    UNSUPPORTED_SCENE_FEATURES = {"hinge_joint": "only free bodies", **FakeBackend.UNSUPPORTED_SCENE_FEATURES}

    def __init__(self, scene, num_envs, sim_dt, **options):
        super().__init__(scene, num_envs, sim_dt, **options)
        if any(j["type"] != "free" for j in self._lite.joints):
            raise UnsupportedCapabilityError(self.name, "hinge_joint", "only free bodies are simulated")


class RefusesUndeclared(FakeBackend):
    """Refuses the sensor probe scene for a feature it does not declare."""

    name = "broken_refuses_undeclared"

    def __init__(self, scene, num_envs, sim_dt, **options):
        if "sensor_probe" in str(scene.model_file):
            raise UnsupportedCapabilityError(self.name, "accelerometer", "not simulated")
        super().__init__(scene, num_envs, sim_dt, **options)


class StaleKinematics(FakeBackend):
    """Body positions lag one step behind the state (kinematics not refreshed after integration)."""

    name = "broken_stale_kinematics"

    def _step(self, ctrl, nsteps):
        self._stale = self._kin
        super()._step(ctrl, nsteps)

    def _body_pos_w(self, body_ids):
        kin = getattr(self, "_stale", self._kin)
        return np.ascontiguousarray(kin["pos"][:, body_ids], dtype=self.np_dtype)


class SnapshotDropsVelocity(FakeBackend):
    """Restores snapshots with zero velocities."""

    name = "broken_snapshot_drops_velocity"

    def _set_physics_state(self, state):
        state = state.copy()
        state[:, 1 + self.nq:1 + self.nq + self.nv] = 0.0
        super()._set_physics_state(state)


class DampingStoredNotApplied(FakeBackend):
    """Randomized joint damping is stored (and read back) but the engine keeps the nominal value."""

    name = "broken_damping_not_applied"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._reported = {"dof_damping": self._tables["dof_damping"].copy()}

    def _write_model_field(self, term, env_ids, target_ids, values):
        if term != "dof_damping":
            return super()._write_model_field(term, env_ids, target_ids, values)
        table = self._reported[term]
        table[np.ix_(env_ids, target_ids)] = values

    def _read_model_field(self, term):
        if term in self._reported:
            return self._reported[term].astype(self.np_dtype)
        return super()._read_model_field(term)


#: class name -> (layer marker to run, check id that must fail)
class StaleAfterClose(FakeBackend):
    """close() only sets a flag: getters keep returning the last state, writes are accepted."""

    name = "broken_stale_after_close"

    def close(self):
        self._closed = True


class SilentDivergence(FakeBackend):
    """Never reports divergence: a state beyond the bound is returned as inf, with no error."""

    name = "broken_silent_divergence"

    def _diverged_mask(self):
        return None


class QuatNormOverflow(FakeBackend):
    """Normalizes root quaternions as q / |q| without scaling: [1e300, 0, 0, 0] becomes zeros."""

    name = "broken_quat_norm_overflow"

    def set_state(self, env_indices, qpos, qvel, randomization=None):
        qpos = np.array(qpos, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            qpos[:, 3:7] /= np.linalg.norm(qpos[:, 3:7], axis=1, keepdims=True)
        self._set_state(np.asarray(env_indices, dtype=np.int64), np.nan_to_num(qpos), np.array(qvel, np.float64))


class UnboundedFloat32(FakeBackend):
    """Returns float32 but accepts values beyond float32's range (they read back as inf)."""

    name = "broken_unbounded_float32"

    def __init__(self, scene, num_envs, sim_dt, **options):
        super().__init__(scene, num_envs, sim_dt, **options)
        self.MAX_ABS_VALUE = float(np.finfo(np.float64).max)


class LateNameChecks(FakeBackend):
    """Skips the construction-time name checks: an unknown default keyframe is accepted."""

    name = "broken_late_name_checks"

    def _check_construction(self):
        pass


EXPECTED = {
    "QuatXyzw": ("conventions", "conventions::yaw_quat_wxyz[get_base_quat]"),
    "AngVelBodyFrame": ("conventions", "conventions::ang_vel_frames[get_base_ang_vel]"),
    "LeakySetState": ("state", "state::set_state_subset_isolation[untouched_envs_unchanged]"),
    "StartsAtQpos0": ("state", "state::a_new_backend_starts_in_the_default_state[qpos]"),
    "NstepsIgnored": ("state", "state::nsteps_equals_repeated_steps[get_qpos]"),
    "GarbageVideo": ("capabilities", "capabilities::undeclared_raises[video_capture]"),
    "CtrlRangeTransposed": ("conventions", "conventions::ctrl_range_layout[quadruped]"),
    "ForceWrongSign": ("physics", "physics::body_force_acceleration[staged_step]"),
    "IgnoresActuators": ("dynamics", "dynamics::motor_torque_acceleration"),
    "HalfPositionGain": ("dynamics", "dynamics::position_actuator_gain_and_steady_state[gain]"),
    "NoCtrlClamp": ("dynamics", "dynamics::ctrl_clamped_to_ctrlrange"),
    "NoForceClamp": ("dynamics", "dynamics::force_clamped_to_forcerange"),
    "ZeroSensors": ("dynamics", "dynamics::joint_sensors_equal_state[damped_pos]"),
    "ComVelocity": ("dynamics", "dynamics::body_velocity_at_frame_origin[root_lin_w]"),
    "IgnoresDamping": ("dynamics", "dynamics::joint_damping_decay"),
    "IgnoresArmature": ("dynamics", "dynamics::armature_effective_inertia"),
    "IgnoresJointLimits": ("dynamics", "dynamics::joint_limit_stops[position]"),
    "RefusesArticulatedScenes": ("coverage", "coverage::scene_coverage[articulated_scene_loads]"),
    "RefusesUndeclared": ("dynamics", "dynamics::frame_and_imu_sensors_definition[imu_pos]"),
    "StaleKinematics": ("reference", "reference::trajectory[free_body-body_pos]"),
    "SnapshotDropsVelocity": ("capabilities", "capabilities::declared_works[physics_snapshot-restore_reads]"),
    "DampingStoredNotApplied": ("dynamics", "dynamics::randomized_term_takes_effect[dof_damping-randomized_env]"),
    "StaleAfterClose": ("reliability", "reliability::closed_backend_refuses_every_call"),
    "SilentDivergence": ("reliability", "reliability::divergence_raises_every_time_and_resets"),
    "QuatNormOverflow": ("reliability", "reliability::extreme_quaternion_is_normalized_or_rejected[huge]"),
    "UnboundedFloat32": ("reliability", "reliability::extreme_accepted_values_read_back_finite"),
    "LateNameChecks": ("reliability", "reliability::unknown_default_keyframe_is_refused_at_construction"),
}


class StartsAtQpos0(FakeBackend):
    """Ignores the scene's default keyframe at construction: its envs start at qpos0 (MotrixSim's and
    the fake's behaviour before kit rules 4, when the base class did not write the default state)."""

    name = "broken_starts_at_qpos0"

    def _reset_to_default(self, env_ids):
        if not getattr(self, "_constructed", False):
            self._constructed = True
            return
        super()._reset_to_default(env_ids)
