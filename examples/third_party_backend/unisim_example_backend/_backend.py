"""``ExampleBackend``: the SimBackend primitives over a small numpy rigid-body integrator.

Physics (float64, vectorized over envs; one integrator step ``h = sim_dt / substeps``, semi-implicit
Euler: velocities first, then positions from the new velocities; MuJoCo's ``implicitfast`` does the
same, so smooth scenes agree with it to round-off):

- **Free bodies** (a free joint on a world child; the body and its joint-less descendants are one
  rigid body of mass ``M``, COM ``c``, inertia ``I`` about the COM): ``M a_c = M g + ΣF``;
  ``I ω̇ + ω × Iω = τ_c`` in the body frame, ``τ_c`` the external torque about the COM; the COM
  moves with ``v_c``, the orientation with ``q ← q ⊗ exp(h ω_body / 2)``.
- **Hinge / slide trees** with a fixed base (each joint moves its body and the joint-less bodies
  below it): ``(M + h D) q̈ = τ_act + τ_ext − bias(q, q̇) − D_joint q̇`` with the joint-space mass
  matrix ``M`` (armature on its diagonal) and the gravity and velocity-product terms ``bias``, both
  summed over the bodies' centres of mass through their Jacobians; ``D`` is joint damping plus the
  servos' ``gear² kv`` (implicit). Dry friction (``frictionloss`` f) removes up to ``h f / (M+hD)_kk``
  of a dof's speed per step and holds it when that stops it (exact for one dof); a limited joint is
  clamped to its range and its outward velocity zeroed (a hard stop, where MuJoCo's is soft).
- **Actuators** (``ctrl`` clamped to ``ctrlrange``): motor ``f = u``; position ``f = kp (u − gear q) −
  kv gear q̇``; velocity ``f = kv (u − gear q̇)``; ``f`` clamped to ``forcerange``; joint torque ``gear f``.
- **Sensors** read the state after the step; the accelerometer reads ``R_siteᵀ (a_site − g)`` with
  the accelerations of the last integrator step (recomputed for the current ``ctrl`` and no external
  wrench after ``set_state``).

Refused scenes (``UNSUPPORTED_SCENE_FEATURES``): joints below a free joint and contacts; anything
outside ``unisim_core.plugin.mjcf_lite``'s subset is refused with the feature the reader names.
"""

from __future__ import annotations

import numpy as np

from unisim_core import (
    Capability,
    InvalidInputError,
    SimBackend,
)
from unisim_core.contract import quat as Q
from unisim_core.plugin.plugin_support import load_mjcf_or_refuse

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
    """Free rigid bodies and fixed-base hinge/slide trees, integrated in numpy (module docstring)."""

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
        self._lite = load_mjcf_or_refuse(path, self.name, accept={"frictionloss", "hfield"})
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
        groups = self._rig.groups
        self._members = [np.flatnonzero(self._rig.body_group == gi) for gi in range(len(groups))]
        self._free = [gi for gi, g in enumerate(groups) if g.kind == "free"]
        self._tree = [gi for gi, g in enumerate(groups) if g.kind != "free"]  # tree dof k <-> group _tree[k]
        local = {gi: k for k, gi in enumerate(self._tree)}
        self._chain = {}  # tree group -> local indices of its joint and its ancestors' joints
        for gi in self._tree:
            self._chain[gi] = [local[gi]] + (self._chain[groups[gi].parent] if groups[gi].parent >= 0 else [])
        self._tree_dofs = np.array([groups[gi].dadr for gi in self._tree], dtype=np.int64)
        self._tree_qpos = np.array([groups[gi].qadr for gi in self._tree], dtype=np.int64)
        self._tree_range = np.array([groups[gi].range for gi in self._tree]).reshape(-1, 2).T
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
    def _group_frame(self, g: Group, parent: tuple | None) -> tuple:
        """World ``(pos, quat, rot, lin_vel, ang_vel, anchor, axis)`` of the group frame, each
        ``(n, ...)``, from the parent group's frame (``None``: the world); anchor and axis of the
        joint (``None`` for a free joint)."""
        qpos, qvel, n = self._qpos, self._qvel, self.num_envs
        if g.kind == "free":
            pos, quat = qpos[:, g.qadr:g.qadr + 3].copy(), qpos[:, g.qadr + 3:g.qadr + 7].copy()
            ang = Q.quat_apply(quat, qvel[:, g.dadr + 3:g.dadr + 6])
            return pos, quat, Q.matrix_from_quat(quat), qvel[:, g.dadr:g.dadr + 3].copy(), ang, None, None
        if parent is None:
            p_pos, p_quat, p_vel, p_ang = np.zeros((n, 3)), np.tile([1.0, 0, 0, 0], (n, 1)), 0.0, np.zeros((n, 3))
        else:
            p_pos, p_quat, _, p_vel, p_ang = parent[:5]
        pos0 = p_pos + Q.quat_apply(p_quat, g.rel_pos)
        quat0 = Q.quat_mul(p_quat, np.broadcast_to(g.rel_quat, (n, 4)))
        axis, anchor = Q.quat_apply(quat0, g.axis), pos0 + Q.quat_apply(quat0, g.anchor)
        q, qd = qpos[:, g.qadr], qvel[:, g.dadr, None]
        if g.kind == "hinge":
            quat = Q.quat_mul(quat0, Q.quat_from_axis_angle(g.axis, q))
            pos, ang = anchor - Q.quat_apply(quat, g.anchor), p_ang + qd * axis
            vel = p_vel + np.cross(p_ang, anchor - p_pos) + np.cross(ang, pos - anchor)
        else:
            quat, pos, ang = quat0, pos0 + q[:, None] * axis, p_ang
            vel = p_vel + np.cross(p_ang, pos - p_pos) + qd * axis
        return pos, quat, Q.matrix_from_quat(quat), vel, ang, anchor, axis

    def _kinematics(self) -> None:
        """World pose and velocity of every group frame and body origin from the current state."""
        rig, n = self._rig, self.num_envs
        nb = len(rig.body_group)
        self._pos = np.broadcast_to(rig.body_off_pos, (n, nb, 3)).copy()
        self._quat = np.broadcast_to(rig.body_off_quat, (n, nb, 4)).copy()
        self._vel, self._ang = np.zeros((n, nb, 3)), np.zeros((n, nb, 3))
        self._frames = []
        for gi, g in enumerate(rig.groups):  # parents first
            frame = self._group_frame(g, self._frames[g.parent] if g.parent >= 0 else None)
            self._frames.append(frame)
            pos, quat, rot, vel, ang = frame[:5]
            ids = self._members[gi]
            self._pos[:, ids] = pos[:, None] + np.einsum("nij,bj->nbi", rot, rig.body_off_pos[ids])
            self._quat[:, ids] = Q.quat_mul(quat[:, None], rig.body_off_quat[ids])
            self._vel[:, ids] = vel[:, None] + np.cross(ang[:, None], self._pos[:, ids] - pos[:, None])
            self._ang[:, ids] = ang[:, None]

    def _jacobian(self, gi: int, point: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(jacp, jacr)``, each ``(n, 3, ntree)``, of a point ``(n, 3)`` moving with group ``gi`` (a
        hinge/slide group) over the tree dofs ``self._tree``: column k is the velocity per unit speed
        of tree dof k (zero unless that joint is ``gi`` or one of its ancestors)."""
        n, k = self.num_envs, len(self._tree)
        jacp, jacr = np.zeros((n, 3, k)), np.zeros((n, 3, k))
        for j in self._chain[gi]:
            _, _, _, _, _, anchor, axis = self._frames[self._tree[j]]
            if self._rig.groups[self._tree[j]].kind == "hinge":
                jacp[:, :, j], jacr[:, :, j] = np.cross(axis, point - anchor), axis
            else:
                jacp[:, :, j] = axis
        return jacp, jacr

    # ------------------------------------------------------------------ dynamics
    def _joint_torque(self, ctrl: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(tau, damping)``, each ``(n, nv)``: actuator torques (gear · force) from ``ctrl`` at the
        current state, and the servos' velocity gains ``gear² kv`` per dof (0 where the force is
        clamped), which the integrator treats implicitly like joint damping (as MuJoCo's implicitfast)."""
        tau, damping = np.zeros_like(self._qvel), np.zeros_like(self._qvel)
        if not len(self._gear):
            return tau, damping
        lo, hi = self.model_info.actuator_ctrl_range.T
        u = np.clip(ctrl, lo, hi)
        q, qd = self._gear * self._qpos[:, self._act_q], self._gear * self._qvel[:, self._act_d]
        servo = self._kind != "motor"
        force = np.select([self._kind == "position", self._kind == "velocity"],
                          [self._kp * (u - q) - self._kv * qd, self._kv * (u - qd)], u)
        low, high = self._force_range[:, 0], self._force_range[:, 1]
        free = servo & (force > low) & (force < high)
        np.add.at(tau, (slice(None), self._act_d), self._gear * np.clip(force, low, high))
        np.add.at(damping, (slice(None), self._act_d), np.where(free, self._gear ** 2 * self._kv, 0.0))
        return tau, damping

    def _accelerations(self, ctrl: np.ndarray, xfrc: np.ndarray) -> tuple[list, np.ndarray]:
        """Accelerations for one integrator step from the current state: per group ``(a_com, com,
        alpha)`` (world acceleration of its centre of mass, that point, world angular acceleration;
        for the accelerometer) and ``qacc (n, nv)`` (implicit damping and dry friction included)."""
        gravity, qacc = self.model_info.gravity, np.zeros_like(self._qvel)
        out: list = [None] * len(self._rig.groups)
        for gi in self._free:
            g, (pos, _, rot, _, ang, _, _) = self._rig.groups[gi], self._frames[gi]
            ids, com = self._members[gi], pos + rot @ g.com
            force = xfrc[:, ids, :3].sum(1)
            torque = (np.cross(self._pos[:, ids] - com[:, None], xfrc[:, ids, :3]) + xfrc[:, ids, 3:]).sum(1)
            w = self._qvel[:, g.dadr + 3:g.dadr + 6]
            torque_b = Q.quat_apply_inverse(self._frames[gi][1], torque) - np.cross(w, w @ g.inertia.T)
            alpha_b = np.linalg.solve(g.inertia, torque_b.T).T
            a_com, alpha, rc = gravity + force / g.mass, Q.quat_apply(self._frames[gi][1], alpha_b), com - pos
            # origin acceleration: a_com - alpha x rc - w x (w x rc), world
            qacc[:, g.dadr:g.dadr + 3] = a_com - np.cross(alpha, rc) - np.cross(ang, np.cross(ang, rc))
            qacc[:, g.dadr + 3:g.dadr + 6] = alpha_b
            out[gi] = (a_com, com, alpha)
        if self._tree:
            self._tree_accelerations(ctrl, xfrc, qacc, out)
        return out, qacc

    def _tree_accelerations(self, ctrl: np.ndarray, xfrc: np.ndarray, qacc: np.ndarray, out: list) -> None:
        """Hinge/slide trees: ``(M + h D) q̈ = τ_act + τ_ext − bias − D q̇`` with the mass matrix
        ``M = Σ m Jvᵀ Jv + Jwᵀ I Jw + armature`` and ``bias = Σ Jvᵀ m (J̇v q̇ − g) + Jwᵀ (I J̇w q̇ + ω × Iω)``
        summed over the groups at their centres of mass; then dry friction per dof."""
        info, h, dofs = self.model_info, self._h, self._tree_dofs
        n, k = self.num_envs, len(dofs)
        qd = self._qvel[:, dofs]
        mass, bias = np.zeros((n, k, k)), np.zeros((n, k))
        tau, servo_damping = (x[:, dofs] for x in self._joint_torque(ctrl))
        terms = []
        for gi in self._tree:
            g, (pos, _, rot, vel, ang, _, _) = self._rig.groups[gi], self._frames[gi]
            com = pos + rot @ g.com
            v_com = vel + np.cross(ang, com - pos)
            jacp, jacr = self._jacobian(gi, com)
            # velocity-product accelerations J̇ q̇: d/dt of each ancestor joint's column
            a0, alpha0 = np.zeros((n, 3)), np.zeros((n, 3))
            for j in self._chain[gi]:
                j_pos, _, _, j_vel, j_ang, anchor, axis = self._frames[self._tree[j]]
                axis_dot, speed = np.cross(j_ang, axis), qd[:, j, None]
                if self._rig.groups[self._tree[j]].kind == "hinge":
                    anchor_vel = j_vel + np.cross(j_ang, anchor - j_pos)
                    a0 += speed * (np.cross(axis_dot, com - anchor) + np.cross(axis, v_com - anchor_vel))
                    alpha0 += speed * axis_dot
                else:
                    a0 += speed * axis_dot
            inertia = rot @ g.inertia @ rot.transpose(0, 2, 1)
            mass += g.mass * np.einsum("nik,nil->nkl", jacp, jacp) + np.einsum("nik,nij,njl->nkl", jacr, inertia, jacr)
            spin = np.cross(ang, np.einsum("nij,nj->ni", inertia, ang))
            bias += np.einsum("nik,ni->nk", jacp, g.mass * (a0 - info.gravity))
            bias += np.einsum("nik,ni->nk", jacr, np.einsum("nij,nj->ni", inertia, alpha0) + spin)
            for b in self._members[gi]:  # staged wrenches at body origins
                bp, br = self._jacobian(gi, self._pos[:, b])
                tau += np.einsum("nik,ni->nk", bp, xfrc[:, b, :3]) + np.einsum("nik,ni->nk", br, xfrc[:, b, 3:])
            terms.append((com, jacp, jacr, a0, alpha0))
        damping = info.dof_damping[dofs]
        lhs = mass + np.diag(info.dof_armature[dofs] + h * damping)
        lhs[:, np.arange(k), np.arange(k)] += h * servo_damping  # its -kv q' is already in tau
        acc = np.linalg.solve(lhs, (tau - bias - damping * qd)[..., None])[..., 0]
        # dry friction, dof by dof with the diagonal inertia (exact for one dof): it removes up to
        # h f / M_kk of speed in a step and holds the dof when that stops it
        free_speed = qd + h * acc
        slip = h * info.dof_frictionloss[dofs] / np.diagonal(lhs, axis1=1, axis2=2)
        acc = (np.where(np.abs(free_speed) <= slip, 0.0, free_speed - np.sign(free_speed) * slip) - qd) / h
        qacc[:, dofs] = acc
        for gi, (com, jacp, jacr, a0, alpha0) in zip(self._tree, terms):
            out[gi] = (np.einsum("nik,nk->ni", jacp, acc) + a0, com, np.einsum("nik,nk->ni", jacr, acc) + alpha0)

    def _integrate(self, acc: tuple[list, np.ndarray]) -> None:
        """One semi-implicit Euler step with the accelerations ``acc`` of :meth:`_accelerations`."""
        h, qpos, qvel = self._h, self._qpos, self._qvel
        out, qacc = acc
        qvel += h * qacc
        for gi in self._free:  # the COM moves with its own velocity, the origin follows the rotation
            g, (pos, _, rot, vel, ang, _, _) = self._rig.groups[gi], self._frames[gi]
            a, d = g.qadr, g.dadr
            rc = rot @ g.com
            v_com = vel + np.cross(ang, rc) + h * out[gi][0]
            w = qvel[:, d + 3:d + 6]
            quat = Q.quat_normalize(Q.quat_mul(qpos[:, a + 3:a + 7], _exp_body(w, h)))
            rc_new = Q.quat_apply(quat, g.com)
            qpos[:, a:a + 3] = pos + rc + h * v_com - rc_new
            qpos[:, a + 3:a + 7] = quat
            qvel[:, d:d + 3] = v_com - np.cross(Q.quat_apply(quat, w), rc_new)
        if self._tree:
            cols, dofs = self._tree_qpos, self._tree_dofs
            qd, q = qvel[:, dofs], qpos[:, cols] + h * qvel[:, dofs]
            lo, hi = self._tree_range
            qvel[:, dofs] = np.where(q < lo, np.maximum(qd, 0.0), np.where(q > hi, np.minimum(qd, 0.0), qd))
            qpos[:, cols] = np.clip(q, lo, hi)

    # ------------------------------------------------------------------ primitives
    def _step(self, ctrl: np.ndarray, nsteps: int) -> None:
        for _ in range(nsteps * self.options.substeps):
            with np.errstate(all="ignore"):  # a diverging env turns non-finite; the core reports it
                acc = self._accelerations(ctrl, self._xfrc)
                self._integrate(acc)
                self._kinematics()
            self._time += self._h
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
        body, off_pos, off_quat = self._lite.frame_offset(objtype, obj)
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
            a_ref, p_ref, alpha = self._acc[0][group]
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
        if gi >= 0 and self._rig.groups[gi].kind == "free":  # v_site = v + (R w_body) x (p - x)
            d, (origin, _, rot, _, _, _, _) = self._rig.groups[gi].dadr, self._frames[gi]
            jacp[:, :, d:d + 3] = np.eye(3)
            jacr[:, :, d + 3:d + 6] = rot
            for i in range(3):
                jacp[:, :, d + 3 + i] = np.cross(rot[:, :, i], pos - origin)
        elif gi >= 0:
            jacp[:, :, self._tree_dofs], jacr[:, :, self._tree_dofs] = self._jacobian(gi, pos)
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
