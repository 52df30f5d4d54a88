"""``FakeBackend``: a deterministic, engine-free ``SimBackend`` (numpy + stdlib only).

It loads the MJCF subset of :mod:`unisim_core.plugin.mjcf_lite` and integrates a deliberately simple,
documented model, vectorized over envs in float64 (semi-implicit Euler, step ``sim_dt``):

- **Free root** (a free joint on a child of the world): the root's whole subtree is one rigid
  body of mass ``M`` (the per-env masses of all its bodies). Linear: ``a = g + ΣF / M`` for the
  root origin (``v += a dt; x += v dt``). Angular, in the root body frame with the root body's own
  inertia ``I``: ``I ω̇ = τ - ω × Iω``, where ``τ = Σ (p_b - com) × F_b + τ_b`` over staged wrenches
  (world frame, at body origins; ``com`` = subtree COM); then ``q ← q ⊗ exp(ω dt / 2)``.
  Joint motion does not move the root (no reaction forces, no contacts).
- **Hinge/slide joints**: each is an independent 1-DoF system about its *current* configuration:
  ``I_eff q̈ = τ_act + τ_gravity + τ_ext − damping q̇`` with ``I_eff`` the subtree's inertia about the
  joint axis through its anchor (plus armature; the subtree's mass for slides), ``τ_gravity`` from the
  subtree COM, ``τ_ext`` the staged wrenches projected on the axis. Damping is implicit
  (``q̇ ← (I q̇ + dt τ) / (I + dt·damping)``); limits clamp ``q`` and stop outward velocity.
  A single pendulum therefore obeys ``m L² q̈ = −m g L sin q`` exactly (up to the time step).
- Actuators (ctrl clamped to ``ctrlrange``): ``motor`` ``τ = gear·ctrl``; ``position``
  ``f = kp (ctrl − gear q) − kv gear q̇``; ``velocity`` ``f = kv (ctrl − gear q̇)``; ``τ = gear·f``;
  forces clamped to ``forcerange``.
- Sensors: ``jointpos jointvel framepos framequat framelinvel frameangvel gyro velocimeter
  accelerometer``. The
  accelerometer reads the site acceleration over the last substep minus gravity, in the site
  frame; after ``set_state``/``set_physics_state`` it is re-evaluated with a trial substep
  (last ctrl, no external wrench).
- Snapshots are float64 rows ``[time, qpos, qvel]`` (lossless, so restore + step is bitwise).

Height scans and terrain spawn data come from the core (:mod:`unisim_core.contract.heightfield`) over the
file's height fields, read by ``mjcf_lite`` with ``accept={"hfield"}`` (the bodies do not collide
with them). Not simulated (so not declared): contacts, mocap, rendering. Joints are decoupled (no
Coriolis, centrifugal or reaction coupling between joints or with the root), so multi-link chains
such as the double pendulum are qualitative only. ``sim_dt`` replaces ``<option timestep>``.
"""

from __future__ import annotations

from importlib import metadata

import numpy as np

from unisim_core.contract import quat as Q
from unisim_core.contract.backend import SimBackend
from unisim_core.contract.capabilities import Capability as C
from unisim_core.contract.heightfield import HFieldSampler
from unisim_core.contract.kinematics import site_jacobian
from unisim_core.contract.model import ModelInfo
from unisim_core.plugin.mjcf_lite import MjcfLiteError
from unisim_core.plugin.plugin_support import load_mjcf_or_refuse

__all__ = ["FakeBackend"]


def _dist_version() -> str:
    try:
        return metadata.version("unisim-contract")
    except metadata.PackageNotFoundError:  # pragma: no cover - source checkout without install
        return "0"


def _rot(R: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``R @ v`` over leading dims: ``R (..., 3, 3)``, ``v (..., 3)``."""
    return np.einsum("...ij,...j->...i", R, v)


def _rot_t(R: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``R.T @ v`` over leading dims."""
    return np.einsum("...ji,...j->...i", R, v)


class FakeBackend(SimBackend):
    """Deterministic analytic test backend; see the module docstring for what it simulates."""

    name = "fake"
    version = _dist_version()
    CAPABILITIES = frozenset({
        C.PRE_STEP_CONTROL, C.SENSORS, C.BODY_FORCE, C.BODY_TORQUE, C.PUSH, C.PHYSICS_SNAPSHOT,
        C.SITE_JACOBIAN, C.INIT_RANDOMIZATION, C.RESET_RANDOMIZATION, C.INTERVAL_RANDOMIZATION,
        C.HEIGHT_SCAN, C.TERRAIN,  # the core's sampler and scanner over the file's height fields (_height_field)
    })
    INIT_TERMS = frozenset({"body_mass", "gravity", "dof_damping", "actuator_kp", "actuator_kd"})
    RESET_TERMS = INIT_TERMS | {"root_lin_vel_delta", "root_ang_vel_delta"}
    INTERVAL_TERMS = frozenset({"root_lin_vel_delta", "root_ang_vel_delta", "body_force", "body_torque"})
    UNSUPPORTED_SCENE_FEATURES = {"frictionloss": "joint dry friction is not modelled by the analytic engine"}
    KIT_RULES = 3
    KNOWN_KIT_DEVIATIONS = {
        **{f"reference::trajectory[{s}-{q}]": "no contacts are simulated" for s, qs in
           (("box_on_plane", ("qpos", "qvel", "body_pos", "sensors")), ("hfield_terrain", ("qpos", "qvel", "body_pos")),
            ("quadruped", ("qpos", "qvel", "body_pos", "body_angle", "sensors"))) for q in qs},
        **{f"reference::trajectory[{s}-{q}]": "joints are decoupled (no Coriolis or reaction terms between links)"
           for s in ("double_pendulum", "fixed_arm") for q in ("qpos", "qvel", "body_pos", "body_angle", "sensors")},
        **{f"reference::trajectory[sensor_probe-{q}]": "a free root is integrated as if its origin were its centre "
           "of mass" for q in ("qpos", "body_pos")},
    }

    def __init__(self, scene, num_envs, sim_dt, **options) -> None:
        super().__init__(scene, num_envs, sim_dt, **options)
        m = self._lite = load_mjcf_or_refuse(self.scene.model_file, self.name, accept={"hfield"})
        info = self.model_info
        n, nb = self._num_envs, len(info.body_names)
        self._check_env_memory(8 * (info.nq + 2 * info.nv + 2 * len(info.actuator_names) + 40 * nb
                                    + 6 * len(info.joint_names) + 8), "float64 state, body kinematics, tables")
        self._parent = info.body_parent
        self._bpos, self._bquat = np.array(m.body_pos), np.array(m.body_quat)
        self._ipos, self._bjoint = info.body_ipos, np.array(m.body_joint)
        rot = Q.matrix_from_quat(np.array(m.body_iquat))
        self._ibody = rot * info.body_inertia[:, None, :] @ rot.transpose(0, 2, 1)  # body-frame inertia
        J = m.joints
        self._jpos = np.array([j["pos"] for j in J]).reshape(-1, 3)
        self._jaxis = np.array([j["axis"] for j in J]).reshape(-1, 3)
        self._h = np.array([i for i, j in enumerate(J) if j["type"] != "free"], dtype=np.int64)
        self._hb, self._hq, self._hd = (info.joint_body[self._h], info.joint_qposadr[self._h],
                                        info.joint_dofadr[self._h])
        self._hinge = np.array([J[i]["type"] == "hinge" for i in self._h], dtype=bool)
        self._lo, self._hi = info.joint_range[self._h, 0], info.joint_range[self._h, 1]
        self._armature = info.dof_armature[self._hd]
        self._free = [(j["body"], j["qposadr"], j["dofadr"]) for j in J if j["type"] == "free"]
        A = m.actuators
        self._aq = np.array([info.joint_qposadr[a["joint"]] for a in A], dtype=np.int64)
        self._ad = np.array([info.joint_dofadr[a["joint"]] for a in A], dtype=np.int64)
        self._gear = np.array([a["gear"] for a in A])
        self._is_pos = np.array([a["kind"] == "position" for a in A], dtype=bool)
        self._is_vel = np.array([a["kind"] == "velocity" for a in A], dtype=bool)
        self._frange = np.array([a["forcerange"] for a in A]).reshape(-1, 2)
        self._ctrl_lo, self._ctrl_hi = info.actuator_ctrl_range.T.copy()
        self._sbody = info.site_body
        self._spos = np.array([s["pos"] for s in m.sites]).reshape(-1, 3)
        self._squat = np.array([s["quat"] for s in m.sites]).reshape(-1, 4)
        self._acc_sites = np.array(sorted({s["obj"] for s in m.sensors if s["type"] == "accelerometer"}),
                                   dtype=np.int64)
        self._check_masses(info)
        #: per-env randomizable model tables (float64)
        self._tables = {
            "body_mass": np.tile(info.body_mass, (n, 1)), "gravity": np.tile(info.gravity, (n, 1)),
            "dof_damping": np.tile(info.dof_damping, (n, 1)), "actuator_kp": np.tile(info.actuator_kp, (n, 1)),
            "actuator_kd": np.tile(info.actuator_kd, (n, 1)),
        }
        self._qpos = np.tile(info.qpos0, (n, 1))
        self._qvel = np.zeros((n, info.nv))
        self._time = np.zeros(n)
        self._xfrc = np.zeros((n, nb, 6))
        self._ctrl = np.zeros((n, len(A)))
        self._acc = np.zeros((n, len(self._acc_sites), 3))
        self._kin = self._fk(self._qpos, self._qvel)
        self._probe_acc(np.arange(n))

    def _load_model_info(self) -> ModelInfo:
        return self._lite.model_info()

    def _check_masses(self, info: ModelInfo) -> None:
        sub = np.array([info.body_mass[self.get_body_subtree_ids(b)].sum() for b in range(len(info.body_names))])
        for b, _, _ in self._free:
            if sub[b] <= 0 or np.linalg.det(self._ibody[b]) <= 0:
                raise MjcfLiteError(f"{self.scene.model_file}: free body {info.body_names[b]!r} needs a positive "
                                    "mass and a positive-definite inertia")
        for j, b, d in zip(self._h, self._hb, self._hd):
            if sub[b] <= 0 and info.dof_armature[d] <= 0:
                raise MjcfLiteError(f"{self.scene.model_file}: joint {info.joint_names[j]!r} moves no mass "
                                    "(and has no armature)")

    # ------------------------------------------------------------------ kinematics
    def _fk(self, qpos: np.ndarray, qvel: np.ndarray) -> dict[str, np.ndarray]:
        """World pose and velocity of every body origin, and world joint anchors/axes."""
        n, nb, nj = len(qpos), len(self._parent), len(self._jpos)
        pos, vel, ang = np.zeros((n, nb, 3)), np.zeros((n, nb, 3)), np.zeros((n, nb, 3))
        quat, rot = np.zeros((n, nb, 4)), np.zeros((n, nb, 3, 3))
        quat[:, 0, 0], rot[:, 0] = 1.0, np.eye(3)
        anchor, axis = np.zeros((n, nj, 3)), np.zeros((n, nj, 3))
        info = self.model_info
        for b in range(1, nb):
            p = self._parent[b]
            j = self._bjoint[b]
            jt = info.joint_types[j] if j >= 0 else ""
            if jt == "free":
                qa, va = info.joint_qposadr[j], info.joint_dofadr[j]
                x, q = qpos[:, qa:qa + 3], qpos[:, qa + 3:qa + 7]
                R = Q.matrix_from_quat(q)
                v, w = qvel[:, va:va + 3], _rot(R, qvel[:, va + 3:va + 6])
            else:
                x = pos[:, p] + _rot(rot[:, p], self._bpos[b])
                q = Q.quat_mul(quat[:, p], self._bquat[b])
                R = Q.matrix_from_quat(q)
                if jt:
                    qj, vj = qpos[:, info.joint_qposadr[j], None], qvel[:, info.joint_dofadr[j], None]
                    anchor[:, j] = x + _rot(R, self._jpos[j])
                    axis[:, j] = _rot(R, self._jaxis[j])
                    if jt == "hinge":
                        q = Q.quat_mul(q, Q.quat_from_axis_angle(self._jaxis[j], qj[:, 0]))
                        R = Q.matrix_from_quat(q)
                        x = anchor[:, j] - _rot(R, self._jpos[j])
                    else:
                        x = x + axis[:, j] * qj
                v = vel[:, p] + np.cross(ang[:, p], x - pos[:, p])
                w = ang[:, p]
                if jt == "hinge":
                    v, w = v + vj * np.cross(axis[:, j], x - anchor[:, j]), w + vj * axis[:, j]
                elif jt == "slide":
                    v = v + vj * axis[:, j]
            pos[:, b], quat[:, b], rot[:, b], vel[:, b], ang[:, b] = x, q, R, v, w
        return {"pos": pos, "quat": quat, "rot": rot, "vel": vel, "ang": ang, "anchor": anchor, "axis": axis}

    def _sites(self, kin: dict, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(pos, quat, rot, lin_vel)`` of sites, world frame, ``(n, len(ids), ...)``."""
        b = self._sbody[ids]
        R = kin["rot"][:, b]
        pos = kin["pos"][:, b] + _rot(R, self._spos[ids])
        quat = Q.quat_mul(kin["quat"][:, b], self._squat[ids])
        vel = kin["vel"][:, b] + np.cross(kin["ang"][:, b], pos - kin["pos"][:, b])
        return pos, quat, Q.matrix_from_quat(quat), vel

    # ------------------------------------------------------------------ dynamics
    def _advance(self, kin: dict, qpos: np.ndarray, qvel: np.ndarray, ctrl: np.ndarray,
                 xfrc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One semi-implicit Euler substep from the state ``kin`` describes; returns new arrays."""
        dt, T = self.sim_dt, self._tables
        mass, g = T["body_mass"], T["gravity"]
        R = kin["rot"]
        com = kin["pos"] + _rot(R, self._ipos)
        # subtree aggregates: mass, first moment, Σ m c cᵀ, Σ world inertia, wrench (moment about origin)
        aggM, aggS = mass.copy(), mass[..., None] * com
        aggC = aggS[..., :, None] * com[..., None, :]
        aggI = R @ self._ibody @ R.transpose(0, 1, 3, 2)
        aggF = xfrc[..., :3].copy()
        aggT = np.cross(kin["pos"], aggF) + xfrc[..., 3:]
        aggs = (aggM, aggS, aggC, aggI, aggF, aggT)
        for b in range(len(self._parent) - 1, 0, -1):
            p = self._parent[b]
            for arr in aggs:
                arr[:, p] += arr[:, b]
        qpos, qvel = qpos.copy(), qvel.copy()
        if len(self._h):
            hb, d = self._hb, self._hd
            M, s, p, a = aggM[:, hb], aggS[:, hb], kin["anchor"][:, self._h], kin["axis"][:, self._h]
            P = (aggC[:, hb] - s[..., :, None] * p[..., None, :] - p[..., :, None] * s[..., None, :]
                 + M[..., None, None] * p[..., :, None] * p[..., None, :])  # Σ m (c-p)(c-p)ᵀ
            i_rot = ((a * _rot(aggI[:, hb], a)).sum(-1) + np.trace(P, axis1=-2, axis2=-1)
                     - (a * _rot(P, a)).sum(-1))
            i_eff = np.where(self._hinge, i_rot, M) + self._armature
            gw = g[:, None, :]
            F, Tq = aggF[:, hb], aggT[:, hb]
            tau = np.where(self._hinge,
                           (a * (np.cross(s - M[..., None] * p, gw) + Tq - np.cross(p, F))).sum(-1),
                           (a * (M[..., None] * gw + F)).sum(-1))
            if len(self._ad):
                u = np.clip(ctrl, self._ctrl_lo, self._ctrl_hi)
                servo = (np.where(self._is_pos, T["actuator_kp"] * (u - self._gear * qpos[:, self._aq]), 0.0)
                         + T["actuator_kd"] * (np.where(self._is_vel, u, 0.0) - self._gear * qvel[:, self._ad]))
                force = np.where(self._is_pos | self._is_vel, servo, u)
                force = np.clip(force, self._frange[:, 0], self._frange[:, 1])
                tau_dof = np.zeros_like(qvel)
                np.add.at(tau_dof, (slice(None), self._ad), self._gear * force)
                tau = tau + tau_dof[:, d]
            qd = (i_eff * qvel[:, d] + dt * tau) / (i_eff + dt * T["dof_damping"][:, d])
            q = qpos[:, self._hq] + dt * qd
            qd = np.where(q < self._lo, np.maximum(qd, 0.0), np.where(q > self._hi, np.minimum(qd, 0.0), qd))
            qpos[:, self._hq], qvel[:, d] = np.clip(q, self._lo, self._hi), qd
        for b, qa, va in self._free:
            M, F = aggM[:, b, None], aggF[:, b]
            tau_w = aggT[:, b] - np.cross(aggS[:, b] / M, F)
            w = qvel[:, va + 3:va + 6]
            ib = self._ibody[b]
            alpha = _rot(np.linalg.inv(ib), _rot_t(R[:, b], tau_w) - np.cross(w, _rot(ib, w)))
            qvel[:, va:va + 3] += dt * (g + F / M)
            qvel[:, va + 3:va + 6] += dt * alpha
            qpos[:, qa:qa + 3] += dt * qvel[:, va:va + 3]
            w = qvel[:, va + 3:va + 6]
            norm = np.linalg.norm(w, axis=1, keepdims=True)
            half = 0.5 * dt * norm
            scale = np.divide(np.sin(half), norm, out=np.full_like(norm, 0.5 * dt), where=norm > 0)
            dq = np.concatenate((np.cos(half), scale * w), axis=1)  # exp(ω dt / 2), body frame
            qpos[:, qa + 3:qa + 7] = Q.quat_normalize(Q.quat_mul(qpos[:, qa + 3:qa + 7], dq))
        return qpos, qvel

    def _probe_acc(self, rows: np.ndarray) -> None:
        """Re-evaluate accelerometer sites for ``rows`` with a trial substep (nothing committed)."""
        if not len(self._acc_sites):
            return
        v0 = self._sites(self._kin, self._acc_sites)[3]
        qp, qv = self._advance(self._kin, self._qpos, self._qvel, self._ctrl, np.zeros_like(self._xfrc))
        v1 = self._sites(self._fk(qp, qv), self._acc_sites)[3]
        self._acc[rows] = ((v1 - v0) / self.sim_dt)[rows]

    # ------------------------------------------------------------------ primitives
    def _step(self, ctrl: np.ndarray, nsteps: int) -> None:
        ctrl = np.array(ctrl, dtype=np.float64)
        for i in range(nsteps):
            if i == nsteps - 1 and len(self._acc_sites):
                v0 = self._sites(self._kin, self._acc_sites)[3]
            self._qpos, self._qvel = self._advance(self._kin, self._qpos, self._qvel, ctrl, self._xfrc)
            self._time += self.sim_dt
            self._kin = self._fk(self._qpos, self._qvel)
        if len(self._acc_sites):
            self._acc = (self._sites(self._kin, self._acc_sites)[3] - v0) / self.sim_dt
        self._ctrl = ctrl

    def _set_state(self, env_ids: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> None:
        self._qpos[env_ids], self._qvel[env_ids] = qpos, qvel
        self._kin = self._fk(self._qpos, self._qvel)
        self._probe_acc(env_ids)

    def get_qpos(self) -> np.ndarray:
        return self._qpos.astype(self.np_dtype)

    def get_qvel(self) -> np.ndarray:
        return self._qvel.astype(self.np_dtype)

    def _body(self, key: str, ids: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(self._kin[key][:, ids], dtype=self.np_dtype)

    def _body_pos_w(self, body_ids):
        return self._body("pos", body_ids)

    def _body_quat_w(self, body_ids):
        return self._body("quat", body_ids)

    def _body_lin_vel_w(self, body_ids):
        return self._body("vel", body_ids)

    def _body_ang_vel_w(self, body_ids):
        return self._body("ang", body_ids)

    def _read_sensor(self, index: int) -> np.ndarray:
        s, kin, info = self._lite.sensors[index], self._kin, self.model_info
        kind, obj = s["type"], s["obj"]
        if kind in ("jointpos", "jointvel"):
            src, col = (self._qpos, info.joint_qposadr) if kind == "jointpos" else (self._qvel, info.joint_dofadr)
            out = src[:, col[obj], None]
        elif s["objtype"] != "site":  # framepos/framequat of a body: xbody = body frame, body = inertial frame
            pos, quat = kin["pos"][:, obj], kin["quat"][:, obj]
            if s["objtype"] == "body":
                pos = pos + _rot(kin["rot"][:, obj], self._ipos[obj])
                quat = Q.quat_mul(quat, self._lite.body_iquat[obj])
            out = pos if kind == "framepos" else quat
        else:
            pos, quat, R, vel = (x[:, 0] for x in self._sites(kin, np.array([obj])))
            out = {"framepos": lambda: pos, "framequat": lambda: quat,
                   "gyro": lambda: _rot_t(R, kin["ang"][:, self._sbody[obj]]),
                   "velocimeter": lambda: _rot_t(R, vel),
                   "framelinvel": lambda: vel, "frameangvel": lambda: kin["ang"][:, self._sbody[obj]],
                   "accelerometer": lambda: _rot_t(R, self._acc[:, int(np.searchsorted(self._acc_sites, obj))]
                                                   - self._tables["gravity"])}[kind]()
        return np.ascontiguousarray(out, dtype=self.np_dtype)

    def _apply_body_force(self, body_ids, force, torque) -> None:
        self._xfrc[:, body_ids, :3] = force
        self._xfrc[:, body_ids, 3:] = 0.0 if torque is None else torque

    def _clear_body_forces(self) -> None:
        self._xfrc[:] = 0.0

    _site_jacobian = site_jacobian  # the core's, from the model tables and the body poses

    def _height_field(self, geom_id: int) -> HFieldSampler:
        return HFieldSampler.from_lite(self._lite, geom_id)

    def _get_physics_state(self) -> np.ndarray:
        return np.concatenate((self._time[:, None], self._qpos, self._qvel), axis=1)

    def _set_physics_state(self, state: np.ndarray) -> None:
        qpos = state[:, 1:1 + self.nq]
        self._time = state[:, 0].copy()
        self._qpos, self._qvel = qpos.copy(), state[:, 1 + self.nq:].copy()
        self._kin = self._fk(self._qpos, self._qvel)
        self._probe_acc(np.arange(self._num_envs))

    def _write_model_field(self, term, env_ids, target_ids, values) -> None:
        table = self._tables[term]
        if target_ids is None:
            table[env_ids] = values
        else:
            table[np.ix_(env_ids, target_ids)] = values

    def _read_model_field(self, term: str) -> np.ndarray:
        if term not in self._tables:
            raise self._unsupported(C.INIT_RANDOMIZATION, f"term {term!r} is not randomizable; "
                                                          f"per-env terms: {sorted(self._tables)}")
        return self._tables[term].astype(self.np_dtype)
