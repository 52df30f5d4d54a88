"""Replay a reference trajectory on any backend and measure its deviations, quantity by quantity."""

from __future__ import annotations

import attrs
import numpy as np

from unisim_core import Capability

from . import Trajectory

__all__ = ["QUANTITIES", "Deviation", "replay", "deviations"]

#: What a replay is compared on, one kit check id per quantity (``reference::trajectory[scene-quantity]``).
QUANTITIES = ("qpos", "qvel", "body_pos", "body_angle", "sensors")


@attrs.frozen
class Deviation:
    """The worst deviation of one quantity: where (sample time, env, column) and by how much."""

    quantity: str
    max_error: float
    tolerance: float
    time: float
    env: int
    column: str
    expected: float
    measured: float

    @property
    def ok(self) -> bool:
        return self.max_error <= self.tolerance

    def describe(self) -> str:
        return (f"{self.quantity}[{self.column}] at t = {self.time:.3f} s, env {self.env}: expected "
                f"{self.expected:.6g}, measured {self.measured:.6g} (|error| {self.max_error:.3g} > "
                f"tolerance {self.tolerance:.3g})")


def replay(backend, traj: Trajectory) -> dict[str, np.ndarray]:
    """Run ``traj``'s initial state, ctrl and kicks on ``backend`` (2 envs) and read what it recorded."""
    env = np.arange(2)
    backend.set_state(env, traj["qpos0"], traj["qvel0"])
    body_ids = backend.get_body_ids([str(n) for n in traj["body_names"]])
    sensors = [str(n) for n in traj["sensor_names"]]
    with_sensors = bool(sensors) and Capability.SENSORS in backend.capabilities
    out = {k: [] for k in ("qpos", "qvel", "body_pos", "body_quat", "sensors")}

    def sample():
        out["qpos"].append(backend.get_qpos())
        out["qvel"].append(backend.get_qvel())
        out["body_pos"].append(backend.get_body_pos_w(body_ids))
        out["body_quat"].append(backend.get_body_quat_w(body_ids))
        if with_sensors:
            out["sensors"].append(backend.get_sensor_data_batch(sensors))

    sample()
    for i in range(len(traj["ctrl"])):
        kick = traj["kick"][i].astype(np.float64)
        if np.any(kick):
            backend.set_state(env, backend.get_qpos(), backend.get_qvel() + kick)
        backend.step(traj["ctrl"][i].astype(np.float64), traj.substeps)
        sample()
    return {k: np.asarray(v, dtype=np.float64) for k, v in out.items() if v}


def _angle(q1: np.ndarray, q2: np.ndarray) -> np.ndarray:
    """Rotation angle (rad) between unit quaternions (wxyz, sign-agnostic), from the relative
    rotation's vector part (accurate for small angles, unlike arccos of the dot product)."""
    w1, v1, w2, v2 = q1[..., :1], q1[..., 1:], q2[..., :1], q2[..., 1:]
    vec = w1 * v2 - w2 * v1 - np.cross(v1, v2)
    return 2 * np.arctan2(np.linalg.norm(vec, axis=-1), np.abs(np.sum(q1 * q2, axis=-1)))


def _worst(name, err, tol, traj, expected, measured, columns) -> Deviation:
    s, e, c = np.unravel_index(int(np.argmax(err)), err.shape)
    t = s * traj.sim_dt * traj.substeps
    return Deviation(name, float(err[s, e, c]), float(np.broadcast_to(tol, err.shape)[s, e, c]), t, int(e),
                     columns[c], float(expected[s, e, c]), float(measured[s, e, c]))


def deviations(traj: Trajectory, got: dict[str, np.ndarray], quat_cols: np.ndarray) -> list[Deviation]:
    """Worst deviation of qpos (free-joint quaternions as rotation angles), qvel, body positions and
    orientations and (when read) sensors, against ``traj.tier``. ``quat_cols``: first qpos column
    of each free-joint quaternion."""
    tier, ref = traj.tier, traj.arrays
    qpos_ref, qpos = ref["qpos"].astype(np.float64), got["qpos"]
    err = np.abs(qpos - qpos_ref)
    for c in quat_cols:
        err[..., c:c + 4] = 0.0
        err[..., c] = _angle(qpos[..., c:c + 4], qpos_ref[..., c:c + 4])
    bodies = [str(n) for n in ref["body_names"]]
    out = [
        _worst("qpos", err, tier.qpos, traj, qpos_ref, qpos, [f"{i}" for i in range(qpos.shape[-1])]),
        _worst("qvel", np.abs(got["qvel"] - ref["qvel"]), tier.qvel, traj, ref["qvel"], got["qvel"],
               [f"{i}" for i in range(got["qvel"].shape[-1])]),
    ]
    pos_err = np.linalg.norm(got["body_pos"] - ref["body_pos"], axis=-1)
    out.append(_worst("body_pos", pos_err, tier.body_pos, traj, np.linalg.norm(ref["body_pos"], axis=-1),
                      np.linalg.norm(got["body_pos"], axis=-1), bodies))
    ang = _angle(got["body_quat"], ref["body_quat"].astype(np.float64))
    out.append(_worst("body_angle", ang, tier.body_angle, traj, np.zeros_like(ang), ang, bodies))
    if "sensors" in got:
        s_ref, s_got = ref["sensors"].astype(np.float64), got["sensors"].copy()
        types = [str(t) for t, d in zip(ref["sensor_types"], ref["sensor_dims"]) for _ in range(int(d))]
        labels = [f"{n}[{k}]" for n, d in zip(ref["sensor_names"], ref["sensor_dims"]) for k in range(int(d))]
        start = 0
        for t, d in zip(ref["sensor_types"], ref["sensor_dims"]):
            if t == "framequat":  # q and -q are one rotation
                sl = slice(start, start + 4)
                s_got[..., sl] *= np.sign(np.sum(s_got[..., sl] * s_ref[..., sl], axis=-1, keepdims=True) + 1e-300)
            start += int(d)
        scale = np.maximum(1.0, s_ref.max(axis=(0, 1)) - s_ref.min(axis=(0, 1)))
        err = np.abs(s_got - s_ref)
        if tier.name == "contact":  # impacts make accelerometers spike differently in every engine
            err[..., [i for i, t in enumerate(types) if t == "accelerometer"]] = 0.0
        out.append(_worst("sensors", err, tier.sensor_rel * scale, traj, s_ref, s_got, labels))
    return out
