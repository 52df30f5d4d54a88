"""Deliberately broken backends (subclasses of the fake), each with one classic bug.

Referenced by the kit's own tests as ``broken_backends:Name``; each must fail a named check
(``EXPECTED`` maps the class to the check id and the layer the test runs).
"""

from __future__ import annotations

import numpy as np

from unisim_core import quat as Q
from unisim_core.fake import FakeBackend


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


#: class name -> (layer marker to run, check id that must fail)
EXPECTED = {
    "QuatXyzw": ("conventions", "conventions::yaw_quat_wxyz"),
    "AngVelBodyFrame": ("conventions", "conventions::ang_vel_frames"),
    "LeakySetState": ("state", "state::set_state_subset_isolation"),
    "NstepsIgnored": ("state", "state::nsteps_equals_repeated_steps"),
    "GarbageVideo": ("capabilities", "capabilities::undeclared_raises[video_capture]"),
    "CtrlRangeTransposed": ("conventions", "conventions::ctrl_range_layout"),
    "ForceWrongSign": ("physics", "physics::body_force_acceleration"),
}
