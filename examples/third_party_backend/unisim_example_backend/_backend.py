"""``ExampleBackend``: the SimBackend primitives over a small numpy rigid-body integrator.

Physics (float64, vectorized over envs; one integrator step ``h = sim_dt / substeps``, semi-implicit
Euler: velocities first, then positions from the new velocities):

- **Free bodies** (a free joint on a world child; the body and its joint-less descendants are one
  rigid body of mass ``M``, COM ``c``, inertia ``I`` about the COM): ``M a_c = M g + ΣF``;
  ``I ω̇ + ω × Iω = τ_c`` in the body frame, ``τ_c`` the external torque about the COM; the COM
  moves with ``v_c``, the orientation with ``q ← q ⊗ exp(h ω_body / 2)``.
- **Hinge / slide bodies** (one joint between the world and a rigid subtree): ``(I_a + armature) q̈ =
  τ_gravity + τ_ext + gear·f_act − damping q̇``, ``I_a`` the subtree inertia about the joint axis
  (its mass for a slide). Damping is implicit (``q̇ ← (I q̇ + h τ) / (I + h·damping)``); dry friction
  (``frictionloss`` f) removes up to ``h f / I`` of speed per step and holds the joint when that
  stops it; a limited joint is clamped to its range and its outward velocity zeroed.
- **Actuators** (``ctrl`` clamped to ``ctrlrange``): motor ``f = u``; position ``f = kp (u − gear q) −
  kv gear q̇``; velocity ``f = kv (u − gear q̇)``; ``f`` clamped to ``forcerange``; joint torque ``gear f``.
- **Sensors** read the state after the step; the accelerometer reads ``R_siteᵀ (a_site − g)`` with
  the accelerations of the last integrator step (recomputed for the current ``ctrl`` and no external
  wrench after ``set_state``).

Refused scenes (``UNSUPPORTED_SCENE_FEATURES``): contacts and joints below other joints; anything
outside ``unisim_core.mjcf_lite``'s subset is refused with the feature the reader names.
"""

from __future__ import annotations

import numpy as np

from unisim_core import (
    Capability,
    InvalidInputError,
    MjcfLiteError,
    SimBackend,
    UnsupportedCapabilityError,
    load_mjcf,
)
from unisim_core import quat as Q

from ._options import ExampleOptions
from ._rig import UNSUPPORTED_SCENE_FEATURES, Group, build_rig

__all__ = ["ExampleBackend"]
__version__ = "0.2.0"


def _exp_body(w: np.ndarray, h: float) -> np.ndarray:
    """``(n, 4)`` quaternion ``exp(h w / 2)`` of body-frame angular velocities ``w (n, 3)``."""
    norm = np.linalg.norm(w, axis=1, keepdims=True)
    scale = np.divide(np.sin(0.5 * h * norm), norm, out=np.full_like(norm, 0.5 * h), where=norm > 0)
    return np.concatenate((np.cos(0.5 * h * norm), scale * w), axis=1)


class ExampleBackend(SimBackend):
    """Free rigid bodies and single-joint hinge/slide bodies, integrated in numpy (module docstring)."""

    name = "example"
    version = __version__
    options_cls = ExampleOptions
    CAPABILITIES = frozenset({
        Capability.PRE_STEP_CONTROL, Capability.SENSORS, Capability.BODY_FORCE, Capability.BODY_TORQUE,
        Capability.PHYSICS_SNAPSHOT, Capability.SITE_JACOBIAN,
    })
    UNSUPPORTED_SCENE_FEATURES = UNSUPPORTED_SCENE_FEATURES

    def __init__(self, scene, num_envs, sim_dt, **options) -> None:
        super().__init__(scene, num_envs, sim_dt, **options)
        path = self.scene.model_file
        try:
            self._lite = load_mjcf(path, accept={"frictionloss"})
        except MjcfLiteError as exc:
            if exc.feature is None:
                raise
            raise UnsupportedCapabilityError(self.name, exc.feature, str(exc)) from None
        self._rig = build_rig(self._lite, path, self.name)
        info = self.model_info
        n, lite = self.num_envs, self._lite
        A = lite.actuators
        self._act_q = np.array([info.joint_qposadr[a["joint"]] for a in A], dtype=np.int64)
        self._act_d = np.array([info.joint_dofadr[a["joint"]] for a in A], dtype=np.int64)
        self._gear = np.array([a["gear"] for a in A], dtype=np.float64)
        self._kind = np.array([a["kind"] for a in A])
        self._kp, self._kv = info.actuator_kp, info.actuator_kd
        self._force_range = np.array([a["forcerange"] for a in A]).reshape(-1, 2)
        self._h = self.sim_dt / self.options.substeps
        self._qpos = np.tile(info.qpos0, (n, 1))
        self._qvel = np.zeros((n, info.nv))
        self._time = np.zeros(n)
        self._ctrl = np.zeros((n, len(A)))
        self._xfrc = np.zeros((n, len(info.body_names), 6))  # staged world force, torque at body origins
        self._forward()

    def _load_model_info(self):
        return self._lite.model_info()

    # ------------------------------------------------------------------ kinematics
    def _group_pose(self, g: Group, qpos: np.ndarray, qvel: np.ndarray):
        """World ``(pos, quat, rot, lin_vel, ang_vel)`` of the group frame, each ``(n, ...)``."""
        n = len(qpos)
        if g.kind == "free":
            pos, quat = qpos[:, g.qadr:g.qadr + 3], qpos[:, g.qadr + 3:g.qadr + 7]
            rot = Q.matrix_from_quat(quat)
            return pos, quat, rot, qvel[:, g.dadr:g.dadr + 3], Q.quat_apply(quat, qvel[:, g.dadr + 3:g.dadr + 6])
        q, qd = qpos[:, g.qadr], qvel[:, g.dadr, None]
        axis_w = Q.quat_apply(g.quat0_w, g.axis)
        if g.kind == "hinge":
            quat = Q.quat_mul(np.broadcast_to(g.quat0_w, (n, 4)), Q.quat_from_axis_angle(g.axis, q))
            rot = Q.matrix_from_quat(quat)
            anchor_w = g.pos0_w + Q.quat_apply(g.quat0_w, g.anchor)
            pos = anchor_w - rot @ g.anchor
            ang = qd * axis_w
            return pos, quat, rot, np.cross(ang, pos - anchor_w), ang
        quat = np.broadcast_to(g.quat0_w, (n, 4)).copy()
        return g.pos0_w + q[:, None] * axis_w, quat, Q.matrix_from_quat(quat), qd * axis_w, np.zeros((n, 3))

    def _kinematics(self) -> None:
        """World pose and velocity of every group frame and body origin from the current state."""
        rig, n = self._rig, self.num_envs
        nb = len(rig.body_group)
        self._pos = np.broadcast_to(rig.body_off_pos, (n, nb, 3)).copy()
        self._quat = np.broadcast_to(rig.body_off_quat, (n, nb, 4)).copy()
        self._vel, self._ang = np.zeros((n, nb, 3)), np.zeros((n, nb, 3))
        self._frames = []
        for gi, g in enumerate(rig.groups):
            pos, quat, rot, vel, ang = frame = self._group_pose(g, self._qpos, self._qvel)
            self._frames.append(frame)
            ids = np.flatnonzero(rig.body_group == gi)
            self._pos[:, ids] = pos[:, None] + np.einsum("nij,bj->nbi", rot, rig.body_off_pos[ids])
            self._quat[:, ids] = Q.quat_mul(quat[:, None], rig.body_off_quat[ids])
            self._vel[:, ids] = vel[:, None] + np.cross(ang[:, None], self._pos[:, ids] - pos[:, None])
            self._ang[:, ids] = ang[:, None]

    # ------------------------------------------------------------------ dynamics
    def _joint_torque(self, ctrl: np.ndarray) -> np.ndarray:
        """``(n, nv)`` actuator torques (gear · force) from ``ctrl`` at the current state."""
        tau = np.zeros_like(self._qvel)
        if not len(self._gear):
            return tau
        lo, hi = self.model_info.actuator_ctrl_range.T
        u = np.clip(ctrl, lo, hi)
        q, qd = self._gear * self._qpos[:, self._act_q], self._gear * self._qvel[:, self._act_d]
        force = np.select([self._kind == "position", self._kind == "velocity"],
                          [self._kp * (u - q) - self._kv * qd, self._kv * (u - qd)], u)
        force = np.clip(force, self._force_range[:, 0], self._force_range[:, 1])
        np.add.at(tau, (slice(None), self._act_d), self._gear * force)
        return tau

    def _accelerations(self, ctrl: np.ndarray, xfrc: np.ndarray) -> list:
        """Per group ``(a_ref, p_ref, alpha, dof_acc)`` for one integrator step from the current state:
        the world acceleration ``a_ref`` of the point ``p_ref`` (the COM of a free body, the anchor of a
        hinge), the world angular acceleration ``alpha`` and the rate of change of the group's qvel
        columns (implicit damping and dry friction included), each ``(n, ...)``."""
        info, h, gravity = self.model_info, self._h, self.model_info.gravity
        tau_act = self._joint_torque(ctrl)
        out = []
        for gi, g in enumerate(self._rig.groups):
            pos, _, rot, vel, ang = self._frames[gi]
            ids = np.flatnonzero(self._rig.body_group == gi)
            force = xfrc[:, ids, :3].sum(1)
            com_w = pos + rot @ g.com
            if g.kind == "free":
                torque_c = (np.cross(self._pos[:, ids] - com_w[:, None], xfrc[:, ids, :3]) + xfrc[:, ids, 3:]).sum(1)
                w = self._qvel[:, g.dadr + 3:g.dadr + 6]
                torque_b = np.einsum("nji,nj->ni", rot, torque_c) - np.cross(w, w @ g.inertia.T)
                alpha_b = np.linalg.solve(g.inertia, torque_b.T).T
                a_com = gravity + force / g.mass
                # origin acceleration: a_c - alpha x (R c) - w x (w x R c), world
                rc, alpha = rot @ g.com, np.einsum("nij,nj->ni", rot, alpha_b)
                a_origin = a_com - np.cross(alpha, rc) - np.cross(ang, np.cross(ang, rc))
                out.append((a_com, com_w, alpha, np.concatenate((a_origin, alpha_b), axis=1)))
                continue
            axis_w = Q.quat_apply(g.quat0_w, g.axis)
            d = g.dadr
            if g.kind == "hinge":
                anchor_w = g.pos0_w + Q.quat_apply(g.quat0_w, g.anchor)
                moment = (np.cross(com_w - anchor_w, g.mass * gravity)
                          + (np.cross(self._pos[:, ids] - anchor_w, xfrc[:, ids, :3]) + xfrc[:, ids, 3:]).sum(1))
            else:
                anchor_w, moment = pos, g.mass * gravity + force
            tau = moment @ axis_w + tau_act[:, d]
            inert = g.inertia_axis + h * info.dof_damping[d]
            qd = self._qvel[:, d]
            qd_new = (g.inertia_axis * qd + h * tau) / inert
            slip = h * info.dof_frictionloss[d] / inert
            qd_new = np.where(np.abs(qd_new) <= slip, 0.0, qd_new - np.sign(qd_new) * slip)
            qdd = ((qd_new - qd) / h)[:, None]
            if g.kind == "hinge":
                out.append((np.zeros_like(pos), anchor_w, qdd * axis_w, qdd))
            else:
                out.append((qdd * axis_w, anchor_w, np.zeros_like(pos), qdd))
        return out

    def _integrate(self, acc: list) -> None:
        """One semi-implicit Euler step of every group with the accelerations ``acc``."""
        h, qpos, qvel = self._h, self._qpos, self._qvel
        for g, frame, (a_com, _, _, dof_acc) in zip(self._rig.groups, self._frames, acc):
            a, d = g.qadr, g.dadr
            if g.kind != "free":
                qd = qvel[:, d] + h * dof_acc[:, 0]
                q = qpos[:, a] + h * qd
                lo, hi = g.range
                qvel[:, d] = np.where(q < lo, np.maximum(qd, 0.0), np.where(q > hi, np.minimum(qd, 0.0), qd))
                qpos[:, a] = np.clip(q, lo, hi)
                continue
            pos, _, rot, vel, ang = frame
            rc = rot @ g.com
            v_com = vel + np.cross(ang, rc) + h * a_com
            w = qvel[:, d + 3:d + 6] + h * dof_acc[:, 3:]
            quat = Q.quat_normalize(Q.quat_mul(qpos[:, a + 3:a + 7], _exp_body(w, h)))
            rc_new = Q.quat_apply(quat, g.com)
            qpos[:, a:a + 3] = pos + rc + h * v_com - rc_new
            qpos[:, a + 3:a + 7] = quat
            qvel[:, d:d + 3] = v_com - np.cross(Q.quat_apply(quat, w), rc_new)
            qvel[:, d + 3:d + 6] = w

    # ------------------------------------------------------------------ primitives
    def _step(self, ctrl: np.ndarray, nsteps: int) -> None:
        for _ in range(nsteps * self.options.substeps):
            acc = self._accelerations(ctrl, self._xfrc)
            self._integrate(acc)
            self._time += self._h
            self._kinematics()
        self._acc = acc  # the accelerometer's: those of the last integrator step
        self._ctrl = np.array(ctrl, dtype=np.float64)

    def _set_state(self, env_ids: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> None:
        self._qpos[env_ids], self._qvel[env_ids] = qpos, qvel
        self._forward()

    def _forward(self) -> None:
        """Refresh bodies and the accelerometer's accelerations (current ctrl, no external wrench)."""
        self._kinematics()
        self._acc = self._accelerations(self._ctrl, np.zeros_like(self._xfrc))

    def get_qpos(self) -> np.ndarray:
        return self._qpos.astype(self.np_dtype)

    def get_qvel(self) -> np.ndarray:
        return self._qvel.astype(self.np_dtype)

    def _out(self, arr: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(arr, dtype=self.np_dtype)

    def _body_pos_w(self, body_ids):
        return self._out(self._pos[:, body_ids])

    def _body_quat_w(self, body_ids):
        return self._out(self._quat[:, body_ids])

    def _body_lin_vel_w(self, body_ids):
        return self._out(self._vel[:, body_ids])

    def _body_ang_vel_w(self, body_ids):
        return self._out(self._ang[:, body_ids])

    # ------------------------------------------------------------------ sensors
    def _frame(self, objtype: str, obj: int) -> tuple[np.ndarray, np.ndarray, int]:
        """World ``(pos, quat)`` of a site, a body's inertial frame (``body``) or its frame (``xbody``),
        and the body it is attached to."""
        lite = self._lite
        if objtype == "site":
            s = lite.sites[obj]
            body, off_pos, off_quat = s["body"], s["pos"], s["quat"]
        elif objtype == "body":
            body, off_pos, off_quat = obj, lite.body_ipos[obj], lite.body_iquat[obj]
        else:
            body, off_pos, off_quat = obj, np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0])
        quat_b = self._quat[:, body]
        return self._pos[:, body] + Q.quat_apply(quat_b, off_pos), Q.quat_mul(quat_b, off_quat), body

    def _read_sensor(self, index: int) -> np.ndarray:
        s = self._lite.sensors[index]
        kind, obj, info = s["type"], s["obj"], self.model_info
        if kind == "jointpos":
            return self._out(self._qpos[:, info.joint_qposadr[obj], None])
        if kind == "jointvel":
            return self._out(self._qvel[:, info.joint_dofadr[obj], None])
        pos, quat, body = self._frame(s["objtype"], obj)
        ang = self._ang[:, body]
        vel = self._vel[:, body] + np.cross(ang, pos - self._pos[:, body])
        if kind in ("framepos", "framequat", "framelinvel", "frameangvel"):
            return self._out({"framepos": pos, "framequat": quat, "framelinvel": vel, "frameangvel": ang}[kind])
        if kind == "gyro":
            return self._out(Q.quat_apply_inverse(quat, ang))
        if kind == "velocimeter":
            return self._out(Q.quat_apply_inverse(quat, vel))
        group = self._rig.body_group[body]  # accelerometer
        if group < 0:
            acc = np.zeros_like(pos)
        else:
            a_ref, p_ref, alpha, _ = self._acc[group]
            r = pos - p_ref
            acc = a_ref + np.cross(alpha, r) + np.cross(ang, np.cross(ang, r))
        return self._out(Q.quat_apply_inverse(quat, acc - info.gravity))

    # ------------------------------------------------------------------ forces, Jacobian, snapshots
    def _apply_body_force(self, body_ids, force, torque) -> None:
        self._xfrc[:, body_ids, :3] = force
        self._xfrc[:, body_ids, 3:] = 0.0 if torque is None else torque

    def _clear_body_forces(self) -> None:
        self._xfrc[:] = 0.0

    def _site_jacobian(self, site_id: int, dof_indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n, nv = self.num_envs, self.nv
        pos, _, body = self._frame("site", site_id)
        jacp, jacr = np.zeros((n, 3, nv)), np.zeros((n, 3, nv))
        gi = self._rig.body_group[body]
        if gi >= 0:
            g, (origin, _, rot, _, _) = self._rig.groups[gi], self._frames[gi]
            d = g.dadr
            if g.kind == "free":  # v_site = v + (R w_body) x (p - x)
                jacp[:, :, d:d + 3] = np.eye(3)
                jacr[:, :, d + 3:d + 6] = rot
                for i in range(3):
                    jacp[:, :, d + 3 + i] = np.cross(rot[:, :, i], pos - origin)
            else:
                axis_w = Q.quat_apply(g.quat0_w, g.axis)
                if g.kind == "hinge":
                    anchor_w = g.pos0_w + Q.quat_apply(g.quat0_w, g.anchor)
                    jacp[:, :, d], jacr[:, :, d] = np.cross(axis_w, pos - anchor_w), axis_w
                else:
                    jacp[:, :, d] = axis_w
        return self._out(jacp[:, :, dof_indices]), self._out(jacr[:, :, dof_indices])

    def _get_physics_state(self) -> np.ndarray:
        return np.concatenate((self._time[:, None], self._qpos, self._qvel), axis=1)

    def _set_physics_state(self, state: np.ndarray) -> None:
        qpos = state[:, 1:1 + self.nq]
        for g in self._rig.groups:
            if g.kind == "free":
                norm = np.linalg.norm(qpos[:, g.qadr + 3:g.qadr + 7], axis=1)
                if np.any(np.abs(norm - 1.0) > 1e-6):
                    raise InvalidInputError(f"state: columns {g.qadr + 4}:{g.qadr + 8} hold a quaternion and must "
                                            f"have unit norm, got norm {norm[np.argmax(np.abs(norm - 1.0))]}")
        self._time = state[:, 0].copy()
        self._qpos, self._qvel = qpos.copy(), state[:, 1 + self.nq:].copy()
        self._forward()
