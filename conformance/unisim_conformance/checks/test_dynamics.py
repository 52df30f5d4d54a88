"""Layer - dynamics: the physics binding against closed forms (actuators, joint properties,
sensors, body velocities, gravity). Each check states its reference equation and why its
tolerance is what it is.

Scenes (facts in each file's header): ``actuated_hinges`` - independent hinges about +z through
their centres of mass (no gravity torque, no coupling), I = 0.02 kg m^2 each;
``frictionloss_hinge``; ``sensor_probe`` - a free body with its COM offset from its origin and a
rotated IMU site, plus a hinge hanging at rest.

Integrator families covered by every bound: explicit, semi-implicit and implicit(-fast) Euler, RK4.
Under a constant torque the velocity update is exact for all of them, so those checks only carry
float32 read-back error (1e-4 relative).
"""

from __future__ import annotations

import numpy as np
import pytest

from unisim_conformance._props import EFFECT_ENVS, EFFECT_TERMS, EFFECT_TERMS_4
from unisim_core import Capability
from unisim_core.contract import quat as Q

pytestmark = [pytest.mark.dynamics, pytest.mark.contract("1.0")]

G = 9.81
I_HINGE = 0.02  # kg m^2, izz of every actuated_hinges link
Q_SITE = np.array([np.cos(np.pi / 8), 0.0, np.sin(np.pi / 8), 0.0])  # sensor_probe site: 45 deg about +y


def _hinges(kit, n=2):
    b = kit.make("actuated_hinges", n)
    names = list(b.get_actuator_names())
    return b, names


def _ctrl(b, names, **values):
    """ctrl (num_envs, nu): zero except the named actuators (value per env or scalar)."""
    u = np.zeros((b.num_envs, b.num_actuators))
    for name, v in values.items():
        u[:, names.index(name)] = v
    return u


def _qd(b, joint):
    col = int(b.get_joint_state_qvel_indices([joint])[0])
    return b.get_qvel()[:, col].astype(np.float64)


def _q(b, joint):
    col = int(b.get_joint_state_qpos_indices([joint])[0])
    return b.get_qpos()[:, col].astype(np.float64)


def _rel_close(measured, expected, rtol, what, unit, atol=0.0):
    measured, expected = np.asarray(measured, np.float64), np.asarray(expected, np.float64)
    err = np.abs(measured - expected)
    tol = rtol * np.abs(expected) + atol
    assert np.all(err <= tol), (f"{what}: measured {np.round(measured, 6).tolist()} {unit}, expected "
                                f"{np.round(expected, 6).tolist()} {unit} (tolerance {np.round(tol, 6).tolist()})")


# ------------------------------------------------------------------------------------------ actuators
def test_motor_torque_acceleration(kit, record_property):
    """<motor gear=2> on I = 0.02: q'' = gear u / I, so q'(t) = 100 u t under constant u.
    Constant torque: the velocity is exact for every Euler-family integrator; 1e-4 relative
    covers float32 reads. u = (0.3, -0.7) per env, t = 0.05 s."""
    b, names = _hinges(kit)
    u = np.array([0.3, -0.7])
    b.step(_ctrl(b, names, motor=u), 50)
    t = 50 * b.sim_dt
    qd = _qd(b, "motor_joint")
    record_property("motor_qvel", qd.tolist())
    _rel_close(qd, 2 * u / I_HINGE * t, 1e-4, "motor_joint velocity after 0.05 s of u = (0.3, -0.7), gear 2", "rad/s")


def test_ctrl_clamped_to_ctrlrange(kit):
    """ctrllimited motor (ctrlrange +-1): u = 3 acts as u = 1 and u = -5 as -1, so
    q'(t) = gear clip(u) / I t = (100, -100) t. Unclamped it would be 3x and 5x larger."""
    b, names = _hinges(kit)
    b.step(_ctrl(b, names, motor=np.array([3.0, -5.0])), 20)
    t = 20 * b.sim_dt
    _rel_close(_qd(b, "motor_joint"), np.array([1.0, -1.0]) * 2 / I_HINGE * t, 1e-4,
               "motor_joint velocity with ctrl (3, -5) outside ctrlrange +-1 (must clamp to +-1)", "rad/s")


def test_armature_effective_inertia(kit):
    """armature 0.03 adds to the link's 0.02: q'' = u / (I + a) = 20 u (50 u if ignored)."""
    b, names = _hinges(kit)
    u = np.array([0.5, -0.25])
    b.step(_ctrl(b, names, armature_motor=u), 50)
    _rel_close(_qd(b, "armature_joint"), u / (I_HINGE + 0.03) * 50 * b.sim_dt, 1e-4,
               "armature_joint velocity (I + armature = 0.05 kg m^2)", "rad/s")


def _position_run(kit):
    b, names = _hinges(kit)
    u = np.array([0.1, -0.4])
    ctrl = _ctrl(b, names, position=u)
    b.step(ctrl, 1)
    first = _qd(b, "position_joint")
    q = [_q(b, "position_joint")]
    for _ in range(int(round(0.4 / b.sim_dt))):
        b.step(ctrl, 1)
        q.append(_q(b, "position_joint"))
    b.step(ctrl, int(round(1.1 / b.sim_dt)))
    return {"u": u, "dt": b.sim_dt, "first": first, "peak_t": (np.argmax(np.asarray(q)[:, 0]) + 1) * b.sim_dt,
            "final": _q(b, "position_joint")}


@pytest.mark.parametrize("prop", ["gain", "peak_time", "steady_state"])
def test_position_actuator_gain_and_steady_state(kit, prop, record_property):
    """<position kp=8 kv=0.4> from rest at q = 0 towards u = (0.1, -0.4), one simulation:
    gain: the first substep's acceleration is kp u / I (no velocity yet), so q'(dt) = kp u dt / I for
    explicit Euler; an implicit treatment of the kv term scales it by 1 / (1 + kv dt / I) = 0.98, RK4 by
    (w dt)^2 / 6 ~ 7e-5: tolerance 3e-2 relative (half the gain is 50 % off).
    peak_time: a damped oscillation, w_d = w sqrt(1 - z^2) with w = sqrt(kp / I) = 20 rad/s,
    z = kv / (2 sqrt(kp I)) = 0.5 -> the first overshoot peak is at t = pi / w_d = 0.1814 s (tolerance
    3 ms: peak located on the 1 ms sample grid plus the integrator's phase error).
    steady_state: after 1.5 s (e^-15) q = u within 1e-4 rad."""
    r = kit.shared("dynamics.position", _position_run)
    if prop == "gain":
        _rel_close(r["first"], 8 * r["u"] / I_HINGE * r["dt"], 3e-2,
                   "position_joint velocity after one substep from rest (kp u dt / I, kp = 8)", "rad/s")
    elif prop == "peak_time":
        wd = 20 * np.sqrt(1 - 0.25)
        record_property("position_peak_time_s", float(r["peak_t"]))
        assert abs(r["peak_t"] - np.pi / wd) <= 3e-3, (
            f"position actuator overshoot peak at {r['peak_t']:.4f} s, expected pi / w_d = {np.pi / wd:.4f} s "
            f"(kp = 8, kv = 0.4, I = 0.02)")
    else:
        _rel_close(r["final"], r["u"], 0.0, "position_joint steady state (= ctrl target)", "rad", atol=1e-4)


def test_position_ctrl_clamped(kit):
    """ctrllimited position actuator (ctrlrange +-1): target 5 acts as 1, so the first substep
    gives q' = kp * 1 * dt / I (tolerance as for the gain check: 3e-2 relative)."""
    b, names = _hinges(kit)
    b.step(_ctrl(b, names, position=np.array([5.0, -5.0])), 1)
    _rel_close(_qd(b, "position_joint"), 8 * np.array([1.0, -1.0]) / I_HINGE * b.sim_dt, 3e-2,
               "position_joint velocity for targets (5, -5) clamped to ctrlrange +-1", "rad/s")


def test_force_clamped_to_forcerange(kit):
    """<position kp=100 forcerange=+-0.5>: target 0.5 from q = 0 asks 50 N m, clamped to 0.5, so
    q'' = 0.5 / I = 25 rad/s^2 while kp (u - q) > 0.5 (q < 0.495; at t = 0.1 s q = 0.125):
    q'(0.1) = 2.5 rad/s exactly (constant torque). Unclamped it would be 100x faster."""
    b, names = _hinges(kit)
    u = np.array([0.5, -0.5])
    b.step(_ctrl(b, names, forcelim=u), 100)
    _rel_close(_qd(b, "forcelim_joint"), np.sign(u) * 0.5 / I_HINGE * 100 * b.sim_dt, 1e-4,
               "forcelim_joint velocity with its force clamped to forcerange +-0.5 N m", "rad/s")


def test_velocity_actuator_gain(kit, record_property):
    """<velocity kv=0.1>: I q'' = kv (u - q'), so q'(t) = u (1 - exp(-kv t / I)), rate 5 /s.
    At t = 0.2 s: 0.632 u. Euler-family discretisation of the decay differs from the exponential by
    at most u x e^-x (k dt) / 2 = 1.8e-3 u (x = k t = 1); tolerance 4e-3 relative.
    Halving kv gives 0.39 u."""
    b, names = _hinges(kit)
    u = np.array([2.0, -1.0])
    b.step(_ctrl(b, names, velocity=u), int(round(0.2 / b.sim_dt)))
    qd = _qd(b, "velocity_joint")
    record_property("velocity_actuator_qvel", qd.tolist())
    _rel_close(qd, u * (1 - np.exp(-0.1 / I_HINGE * 0.2)), 4e-3,
               "velocity_joint speed after 0.2 s tracking u = (2, -1) with kv = 0.1", "rad/s")


# ------------------------------------------------------------------------------------ joint properties
def test_joint_damping_decay(kit, record_property):
    """damping b = 0.01 with armature a = 0.02 on I = 0.02: q'(t) = q'0 exp(-b t / (I + a)), rate
    0.25 /s; q'0 = (2, -1) -> at t = 1 s: 0.7788 q'0. Euler-family error <= q'0 x e^-x k dt / 2 ~ 1e-4 q'0
    (x = 0.25); tolerance 5e-4 relative. Ignoring damping keeps q'0; ignoring armature gives 0.61 q'0."""
    b = kit.make("actuated_hinges", 2)
    col = int(b.get_joint_state_qvel_indices(["damped_joint"])[0])
    qvel = np.zeros((2, b.nv))
    qvel[:, col] = [2.0, -1.0]
    b.set_state(np.arange(2), b.get_qpos(), qvel)
    b.step(np.zeros((2, b.num_actuators)), int(round(1.0 / b.sim_dt)))
    qd = _qd(b, "damped_joint")
    record_property("damped_qvel_1s", qd.tolist())
    _rel_close(qd, np.array([2.0, -1.0]) * np.exp(-0.25), 5e-4,
               "damped_joint velocity after 1 s (decay rate damping / (I + armature) = 0.25 /s)", "rad/s")


def _limit_run(kit):
    b, names = _hinges(kit)
    b.step(_ctrl(b, names, limited_motor=np.array([0.2, -0.2])), int(round(1.0 / b.sim_dt)))
    return {"position": _q(b, "limited_joint"), "velocity": _qd(b, "limited_joint")}


@pytest.mark.parametrize("prop", ["position", "velocity"])
def test_joint_limit_stops(kit, prop, record_property):
    """limited_joint (range +-0.3) driven by a motor torque (0.2, -0.2) N m for 1 s: unconstrained it
    would turn 0.2 / I t^2 / 2 = 5 rad; it must rest at the limit (position, tolerance 0.01 rad: a soft
    limit such as MuJoCo's default solref penetrates by torque / stiffness ~ 4e-4 rad here) with
    q' ~ 0 (velocity, within 0.01 rad/s)."""
    r = kit.shared("dynamics.limit", _limit_run)
    if prop == "position":
        record_property("limit_penetration_rad", float(np.max(np.abs(r["position"]) - 0.3)))
        _rel_close(r["position"], [0.3, -0.3], 0.0, "limited_joint position after 1 s pushed into its range +-0.3",
                   "rad", atol=1e-2)
    else:
        _rel_close(r["velocity"], [0.0, 0.0], 0.0, "limited_joint velocity resting at its limit", "rad/s", atol=1e-2)


def _friction_run(kit):
    b = kit.make("frictionloss_hinge", 2)
    b.set_state(np.arange(2), np.zeros((2, 1)), np.array([[1.0], [-1.0]]))
    zero = np.zeros((2, b.num_actuators))
    b.step(zero, int(round(0.2 / b.sim_dt)))
    mid = _qd(b, "friction_joint")
    b.step(zero, int(round(0.4 / b.sim_dt)))
    return {"decelerating": mid, "stopped": _qd(b, "friction_joint"), "travel": _q(b, "friction_joint")}


@pytest.mark.parametrize("prop", ["decelerating", "stopped", "travel"])
def test_frictionloss_stops(kit, prop, record_property):
    """frictionloss 0.05 N m on I = 0.02: from q' = 1 rad/s the hinge decelerates at 2.5 rad/s^2,
    stops at t = 0.4 s after 0.2 rad and stays. decelerating: at t = 0.2 s q' = 0.5 (tolerance
    0.02 rad/s: a soft friction constraint such as MuJoCo's slips slightly); stopped: at t = 0.6 s
    q' = 0 (0.01); travel: q = 0.2 rad (0.01). Without friction q' stays 1."""
    r = kit.shared("dynamics.frictionloss", _friction_run)
    want, what, unit, atol = {
        "decelerating": ([0.5, -0.5], "friction_joint velocity at t = 0.2 s", "rad/s", 2e-2),
        "stopped": ([0.0, 0.0], "friction_joint velocity at t = 0.6 s", "rad/s", 1e-2),
        "travel": ([0.2, -0.2], "friction_joint travel until it stops", "rad", 1e-2)}[prop]
    record_property(f"frictionloss_{prop}", r[prop].tolist())
    _rel_close(r[prop], want, 0.0, what, unit, atol=atol)


JOINT_SENSORS = {"damped_pos": ("damped_joint", _q), "damped_vel": ("damped_joint", _qd),
                 "motor_pos": ("motor_joint", _q), "motor_vel": ("motor_joint", _qd)}


def _joint_sensor_run(kit):
    b, names = _hinges(kit)
    qvel = np.zeros((2, b.nv))
    qvel[:, int(b.get_joint_state_qvel_indices(["damped_joint"])[0])] = [0.7, -1.3]
    qpos = np.zeros((2, b.nq))
    qpos[:, int(b.get_joint_state_qpos_indices(["damped_joint"])[0])] = [0.4, -0.2]
    b.set_state(np.arange(2), qpos, qvel)
    out = {}
    for stage in ("after set_state", "after 30 steps"):
        for sensor, (joint, read) in JOINT_SENSORS.items():
            out[sensor, stage] = (b.get_sensor_data(sensor)[:, 0], read(b, joint))
        b.step(_ctrl(b, names, motor=np.array([0.2, -0.1])), 30)
    return out


@pytest.mark.requires(Capability.SENSORS)
@pytest.mark.parametrize("sensor", list(JOINT_SENSORS))
def test_joint_sensors_equal_state(kit, sensor):
    """jointpos / jointvel sensors read the joint's qpos / qvel column (definition), after a set
    and after steps. Tolerance 1e-6 absolute (float32 reads of values ~1)."""
    r = kit.shared("dynamics.joint_sensors", _joint_sensor_run)
    joint = JOINT_SENSORS[sensor][0]
    for stage in ("after set_state", "after 30 steps"):
        got, want = r[sensor, stage]
        np.testing.assert_allclose(got, want, atol=1e-6, err_msg=f"sensor {sensor!r} vs the state of {joint!r} "
                                                                 f"({stage})")


def _probe_state(b):
    """Two distinct flyer states (hanger at rest): p, q (wxyz), v (world, origin), w_b (body)."""
    p = np.array([[0.3, -0.2, 1.5], [-1.0, 0.5, 2.0]])
    ax = np.array([[1.0, 2.0, 0.5], [-0.3, 0.4, 1.0]])
    ax /= np.linalg.norm(ax, axis=1, keepdims=True)
    ang = np.array([0.7, -1.9])
    q = np.concatenate([np.cos(ang / 2)[:, None], np.sin(ang / 2)[:, None] * ax], axis=1)
    v = np.array([[0.4, -0.3, 0.2], [1.0, 0.5, -0.7]])
    w_b = np.array([[1.5, -0.8, 2.0], [-0.6, 1.1, 0.3]])
    qpos = np.zeros((2, b.nq))
    qvel = np.zeros((2, b.nv))
    qpos[:, 0:3], qpos[:, 3:7], qvel[:, 0:3], qvel[:, 3:6] = p, q, v, w_b
    return qpos, qvel


IMU_SENSORS = ("imu_pos", "imu_quat", "imu_linvel", "imu_angvel", "imu_vel", "imu_gyro")


def _imu_run(kit):
    b = kit.make("sensor_probe", 2)
    qpos, qvel = _probe_state(b)
    b.set_state(np.arange(2), qpos, qvel)
    return {"qpos": qpos, "qvel": qvel, **{n: b.get_sensor_data(n).astype(np.float64) for n in IMU_SENSORS}}


@pytest.mark.requires(Capability.SENSORS)
@pytest.mark.parametrize("sensor", IMU_SENSORS)
def test_frame_and_imu_sensors_definition(kit, sensor):
    """sensor_probe flyer (site r = (0.2, 0, 0.1), site rotation q_s = 45 deg about +y), right after
    set_state: framepos imu_pos = p + R r; framequat imu_quat = q q_s; framelinvel imu_linvel = v + w x R r;
    frameangvel imu_angvel = w; velocimeter imu_vel = R_s^T (v + w x R r); gyro imu_gyro = R_s^T w, with
    w = R w_b. Pure kinematics of the set state: tolerance 2e-5 (float32 reads of values up to ~3)."""
    r = kit.shared("dynamics.imu", _imu_run)
    qpos, qvel = r["qpos"], r["qvel"]
    q = qpos[:, 3:7]
    rr = Q.quat_apply(q, np.tile([0.2, 0.0, 0.1], (2, 1)))
    w = Q.quat_apply(q, qvel[:, 3:6])
    v_site = qvel[:, 0:3] + np.cross(w, rr)
    q_s = Q.quat_mul(q, np.tile(Q_SITE, (2, 1)))
    want = {"imu_pos": qpos[:, 0:3] + rr, "imu_quat": q_s, "imu_linvel": v_site, "imu_angvel": w,
            "imu_vel": Q.quat_apply_inverse(q_s, v_site), "imu_gyro": Q.quat_apply_inverse(q_s, w)}[sensor]
    got = r[sensor]
    if sensor == "imu_quat":
        got = got * np.sign(np.sum(got * want, axis=1, keepdims=True))  # q and -q are one rotation
    np.testing.assert_allclose(got, want, atol=2e-5, err_msg=f"sensor {sensor!r} vs its definition")


def _accelerometer_run(kit):
    b = kit.make("sensor_probe", 2)
    qpos, qvel = _probe_state(b)
    qvel[:, 3:6] = 0.0
    b.set_state(np.arange(2), qpos, qvel)
    b.step(np.zeros((2, b.num_actuators)), 10)
    return {"at_rest": b.get_sensor_data("hang_acc").astype(np.float64),
            "free_fall": b.get_sensor_data("imu_acc").astype(np.float64)}


@pytest.mark.requires(Capability.SENSORS)
@pytest.mark.parametrize("prop", ["at_rest", "free_fall"])
def test_accelerometer_at_rest_and_in_free_fall(kit, prop, record_property):
    """Accelerometer = proper acceleration in the sensor frame, R_s^T (a - g), after 10 steps.
    at_rest: the hanger at rest (q = 0, q' = 0 is an equilibrium) reads R_s^T (0, 0, +9.81) =
    (-6.937, 0, 6.937) m/s^2; free_fall: the flyer falling without spin reads 0. Tolerance
    1e-3 m/s^2 (float32, and a soft engine's equilibrium drift over 10 steps)."""
    got = kit.shared("dynamics.accelerometer", _accelerometer_run)[prop]
    record_property(f"accelerometer_{prop}", got.tolist())
    if prop == "at_rest":
        want = Q.quat_apply_inverse(np.tile(Q_SITE, (2, 1)), np.tile([0.0, 0.0, G], (2, 1)))
        np.testing.assert_allclose(got, want, atol=1e-3, err_msg="accelerometer at rest: R_s^T (0, 0, +g)")
    else:
        np.testing.assert_allclose(got, 0.0, atol=1e-3, err_msg="accelerometer of a non-spinning body in free fall")


def _swing_run(kit):
    b = kit.make("sensor_probe", 2)
    qpos, qvel = _probe_state(b)
    qvel[:, 6] = [1.5, -0.5]
    b.set_state(np.arange(2), qpos, qvel)
    return {"gyro": b.get_sensor_data("hang_gyro"), "jointvel": b.get_sensor_data("swing_vel")[:, 0]}


@pytest.mark.requires(Capability.SENSORS)
@pytest.mark.parametrize("sensor", ["gyro", "jointvel"])
def test_gyro_of_a_swinging_hinge(kit, sensor):
    """hanger swinging through q = 0 with q' = (1.5, -0.5): gyro = R_s^T (0, q', 0) (hinge axis +y),
    jointvel = q'. Right after set_state; tolerance 1e-5 (gyro), 1e-6 (jointvel)."""
    got = kit.shared("dynamics.swing", _swing_run)[sensor]
    if sensor == "gyro":
        w = np.zeros((2, 3))
        w[:, 1] = [1.5, -0.5]
        np.testing.assert_allclose(got, Q.quat_apply_inverse(np.tile(Q_SITE, (2, 1)), w), atol=1e-5,
                                   err_msg="gyro of the swinging hanger: R_s^T (0, q', 0)")
    else:
        np.testing.assert_allclose(got, [1.5, -0.5], atol=1e-6, err_msg="jointvel of the swinging hanger")


def _root_velocity_run(kit):
    b = kit.make("sensor_probe", 2)
    qpos, qvel = _probe_state(b)
    b.set_state(np.arange(2), qpos, qvel)
    fid = b.get_body_ids(["flyer"])
    out = {"root_lin_w": (b.get_body_lin_vel_w(fid)[:, 0], qvel[:, 0:3]),
           "root_ang_w": (b.get_body_ang_vel_w(fid)[:, 0], Q.quat_apply(qpos[:, 3:7], qvel[:, 3:6]))}
    b.step(np.zeros((2, b.num_actuators)), 1)
    out["root_lin_w_after_step"] = (b.get_body_lin_vel_w(fid)[:, 0], b.get_qvel()[:, 0:3])
    return out


@pytest.mark.parametrize("prop", ["root_lin_w", "root_ang_w", "root_lin_w_after_step"])
def test_body_velocity_at_frame_origin(kit, prop):
    """sensor_probe flyer (a free root), COM at c = (0.1, 0.05, 0) off its origin: get_body_lin_vel_w
    is the velocity of the body frame origin, v (= qvel[0:3]; root_lin_w right after set_state,
    root_lin_w_after_step after a step), not the COM velocity v + w x R c (which differs by up to
    0.2 m/s here); get_body_ang_vel_w = R w_b (root_ang_w). Tolerance 1e-5 (float32)."""
    got, want = kit.shared("dynamics.root_velocity", _root_velocity_run)[prop]
    what = {"root_lin_w": "the body frame origin's (qvel[0:3])", "root_ang_w": "R w_b (world frame)",
            "root_lin_w_after_step": "after a step, the free joint's qvel[0:3] (origin)"}[prop]
    np.testing.assert_allclose(got, want, atol=1e-5, err_msg=f"flyer (free root) velocity must be {what}")


# fixed_arm (scenes/fixed_arm.xml): each link's origin sits on its hinge; COMs are offset along the link
ARM_JOINTS = ("shoulder_yaw", "shoulder_pitch", "elbow", "wrist")
ARM_LINKS = ("base_link", "upper_arm", "forearm", "hand")
ARM_OFFSET = ((0, 0, 0), (0, 0, 0.1), (0, 0, 0.4), (0, 0, 0.3))  # link origin in its parent's frame, m
ARM_AXIS = ((0, 0, 1), (0, 1, 0), (0, 1, 0), (0, 1, 0))
ARM_Q = np.array([[0.4, 0.6, -0.9, 0.5], [-1.1, -0.3, 1.2, -0.7]])
ARM_QD = np.array([[0.8, -1.1, 1.5, 0.7], [-0.5, 0.9, -1.3, 2.0]])


def _arm_kinematics(q, qd):
    """World origin position, orientation, origin velocity and angular velocity of each link
    (closed form: v_k = sum_j<=k qd_j a_j x (p_k - p_j), w_k = sum_j<=k qd_j a_j; joints sit at
    the link origins, the shoulder yaw axis passes through the world origin)."""
    n = len(q)
    p, R = np.zeros((n, 3)), np.tile(np.eye(3), (n, 1, 1))
    pos, rot, lin, ang = [], [], [], []
    axes, anchors = [], []
    for k in range(4):
        p = p + np.einsum("nij,j->ni", R, ARM_OFFSET[k])
        a = np.einsum("nij,j->ni", R, ARM_AXIS[k])  # the joint's axis in the world (parent frame = link at q=0)
        R = R @ Q.matrix_from_quat(Q.quat_from_axis_angle(np.tile(ARM_AXIS[k], (n, 1)), q[:, k]))
        axes.append(a)
        anchors.append(p.copy())
        w = sum(qd[:, j, None] * axes[j] for j in range(k + 1))
        v = sum(qd[:, j, None] * np.cross(axes[j], p - anchors[j]) for j in range(k + 1))
        pos.append(p.copy())
        rot.append(R.copy())
        lin.append(v)
        ang.append(w)
    return np.stack(pos, 1), np.stack(rot, 1), np.stack(lin, 1), np.stack(ang, 1)


def _link_velocity_run(kit):
    b = kit.make("fixed_arm", 2)
    qpos = np.zeros((2, b.nq))
    qvel = np.zeros((2, b.nv))
    qpos[:, b.get_joint_state_qpos_indices(list(ARM_JOINTS))] = ARM_Q
    qvel[:, b.get_joint_state_qvel_indices(list(ARM_JOINTS))] = ARM_QD
    b.set_state(np.arange(2), qpos, qvel)
    ids = b.get_body_ids(["upper_arm", "forearm", "hand"])
    return {"lin_w": b.get_body_lin_vel_w(ids), "lin_b": b.get_body_lin_vel_b(ids),
            "ang_w": b.get_body_ang_vel_w(ids), "ang_b": b.get_body_ang_vel_b(ids)}


@pytest.mark.rules(3)
@pytest.mark.parametrize("prop", ["lin_w", "lin_b", "ang_w", "ang_b"])
def test_link_velocity_at_frame_origin(kit, prop):
    """fixed_arm links upper_arm, forearm, hand (not roots; COMs 0.2 / 0.15 / 0.05 m along each link
    from its origin) at q = (0.4, 0.6, -0.9, 0.5), q' = (0.8, -1.1, 1.5, 0.7) (env 1 another state),
    right after set_state: lin_w = the frame origin's velocity sum_j q'_j a_j x (p_k - p_j), not the
    COM's (which adds w x R c, up to 0.5 m/s here); lin_b = R_k^T lin_w (the link's own frame);
    ang_w = sum_j q'_j a_j; ang_b = R_k^T ang_w. Pure kinematics: tolerance 1e-5 (float32)."""
    got = kit.shared("dynamics.link_velocity", _link_velocity_run)[prop]
    _, rot, lin, ang = _arm_kinematics(ARM_Q, ARM_QD)
    rot, lin, ang = rot[:, 1:], lin[:, 1:], ang[:, 1:]
    want = {"lin_w": lin, "ang_w": ang, "lin_b": np.einsum("nkji,nkj->nki", rot, lin),
            "ang_b": np.einsum("nkji,nkj->nki", rot, ang)}[prop]
    getter = {"lin_w": "get_body_lin_vel_w", "lin_b": "get_body_lin_vel_b", "ang_w": "get_body_ang_vel_w",
              "ang_b": "get_body_ang_vel_b"}[prop]
    np.testing.assert_allclose(got, want, atol=1e-5, err_msg=(
        f"{getter} of fixed_arm's upper_arm, forearm, hand (rows): the velocity of each link's frame origin "
        f"(omega x r from the joint axes), in the {'world' if prop.endswith('_w') else 'link'} frame"))


def test_gravity_matches_free_fall(kit):
    """free_body (no contacts): the measured acceleration (v(t) - v(0)) / t of the root equals
    get_gravity() in every env (a 3-vector: direction and magnitude). Constant acceleration: exact
    for Euler-family integrators; 1e-4 m/s^2 covers float32."""
    b = kit.make("free_body", 2)
    k = 50
    b.step(np.zeros((2, b.num_actuators)), k)
    acc = b.get_base_lin_vel().astype(np.float64) / (k * b.sim_dt)
    g = np.broadcast_to(np.asarray(b.get_gravity(), np.float64), (2, 3))
    np.testing.assert_allclose(acc, g, atol=1e-4, err_msg="free-fall acceleration vs get_gravity()")


# ------------------------------------------------------------------------ MJCF force sensors
#: sensor type: (scene, sensor name, MuJoCo's value at rest, relative tolerance). touch_sensor: a
#: 2 kg box resting on a plane, site volume on its bottom face: m g (1 %: a soft contact settles to
#: 3e-5 of it in 0.3 s). force_sensor / torque_sensor: a 1.5 kg body hanging at rest from a hinge,
#: COM (0.2, 0, -0.3) from the site: parent on child (0, 0, m g) and c x (0, 0, m g) = (0, -0.2 m g, 0)
#: (1e-3 of |value|: static, float32 reads).
FORCE_SENSORS = {
    "touch": ("touch_sensor", "sole_touch", [2.0 * G], 1e-2),
    "force": ("force_sensor", "mount_force", [0.0, 0.0, 1.5 * G], 1e-3),
    "torque": ("torque_sensor", "mount_torque", [0.0, -0.2 * 1.5 * G, 0.0], 1e-3),
}


@pytest.mark.rules(3)
@pytest.mark.requires(Capability.SENSORS)
@pytest.mark.parametrize("sensor", list(FORCE_SENSORS))
def test_mjcf_force_sensors(kit, sensor, record_property):
    """MJCF ``<touch>``, ``<force>``, ``<torque>`` read through get_sensor_data after 0.3 s at rest
    equal MuJoCo's definitions (see ``FORCE_SENSORS`` and each scene's header). A backend that
    cannot honour the sensor refuses the scene by its feature name (``touch_sensor``, ...): skipped."""
    from unisim_conformance import SCENES_DIR
    from unisim_core import SceneCfg

    scene, name, want, rtol = FORCE_SENSORS[sensor]
    b = kit.make(SceneCfg(str(SCENES_DIR / f"{scene}.xml")), 2, sim_dt=0.002, refusable=(f"{sensor}_sensor",))
    b.step(np.zeros((2, b.num_actuators)), int(round(0.3 / b.sim_dt)))
    got = np.asarray(b.get_sensor_data(name), dtype=np.float64)
    want = np.tile(want, (2, 1))
    tol = rtol * float(np.max(np.abs(want)))
    record_property("measured", got[0].tolist())
    record_property("expected", want[0].tolist())
    record_property("tolerance", tol)
    assert got.shape == want.shape, f"get_sensor_data({name!r}) shape {got.shape}, expected {want.shape}"
    assert np.all(np.abs(got - want) <= tol), (
        f"<{sensor}> sensor {name!r}: measured {np.round(got, 5).tolist()}, expected {np.round(want, 5).tolist()} "
        f"(tolerance {tol:.4g}; {'N' if sensor != 'torque' else 'N m'})")


# ------------------------------------------------------------------------ MJCF gravity compensation
#: property: (joint, expected acceleration (a 3-vector for a free body's linear acceleration, m/s^2; a
#: scalar for a hinge, rad/s^2), relative tolerance). Scene gravcomp (facts in its header): each body's
#: gravity scaled by (1 - gravcomp); arm_half's q'' at q = 0 is 0.5 m g l / (I_yy + m l^2).
GRAVCOMP = {
    "float": ("float_root", [0.0, 0.0, 0.0], 0.0),
    "sink": ("sink_root", [0.0, 0.0, -0.5 * G], 1e-4),
    "rise": ("rise_root", [0.0, 0.0, G], 1e-4),
    "arm_full": ("full_hinge", 0.0, 0.0),
    "arm_half": ("half_hinge", 0.5 * G * 0.25 / (0.02 + 0.25 ** 2), 1e-3),
}
GRAVCOMP_STEPS = 10


def _gravcomp_run(kit):
    from unisim_conformance import SCENES_DIR
    from unisim_core import SceneCfg

    b = kit.make(SceneCfg(str(SCENES_DIR / "gravcomp.xml")), 2, sim_dt=0.002, refusable=("body_gravcomp",))
    b.step(np.zeros((2, b.num_actuators)), GRAVCOMP_STEPS)
    t = GRAVCOMP_STEPS * b.sim_dt
    info, qvel = b.model_info, b.get_qvel().astype(np.float64)
    out = {}
    for prop, (joint, _, _) in GRAVCOMP.items():
        j = list(info.joint_names).index(joint)
        d = int(info.joint_dofadr[j])
        out[prop] = qvel[:, d:d + 3] / t if info.joint_types[j] == "free" else qvel[:, d] / t
    return out


@pytest.mark.rules(3)
@pytest.mark.parametrize("prop", list(GRAVCOMP))
def test_mjcf_gravcomp(kit, prop, record_property):
    """``<body gravcomp>`` (scene ``gravcomp``): from rest, over 0.02 s, each body accelerates at
    (1 - gravcomp) g: free bodies of gravcomp 1, 0.5 and 2 at 0, g/2 down and g up (constant: exact for
    every Euler-family integrator; 1e-4 relative + 1e-4 m/s^2 covers float32), a horizontal hinge arm
    of gravcomp 1 stays put and one of 0.5 turns at 0.5 m g l / (I + m l^2) (1e-3 relative: cos q stays
    above 1 - 1e-5 in 0.02 s). A backend ignoring gravcomp fails every property; one that
    cannot honour gravcomp refuses the scene naming ``body_gravcomp``: skipped."""
    r = kit.shared("dynamics.gravcomp", _gravcomp_run)
    joint, want, rtol = GRAVCOMP[prop]
    want = np.broadcast_to(np.asarray(want, np.float64), r[prop].shape)
    record_property("measured", r[prop][0].tolist() if r[prop].ndim > 1 else float(r[prop][0]))
    free = r[prop].ndim > 1
    _rel_close(r[prop], want, rtol, f"{'linear' if free else 'angular'} acceleration of {joint!r} from rest "
               f"(gravcomp {dict(float=1, sink=0.5, rise=2, arm_full=1, arm_half=0.5)[prop]})",
               "m/s^2" if free else "rad/s^2", atol=1e-4)


# ------------------------------------------------------------------------ randomization takes effect
def _randomize(b, term, targets, values):
    """Set ``term`` of env 1 only (init randomization), returning nothing."""
    from unisim_core import InitRandomizationPlan, RandomizationOp

    tid = None if targets is None else np.asarray(targets)
    b.apply_init_randomization(InitRandomizationPlan([RandomizationOp(
        term=term, env_ids=np.array([1]), target_ids=tid, values=np.asarray(values, dtype=np.float64)[None],
        operation="set")]))


# Each effect returns (measured, expected, rtol, what, unit, atol), rows (env 0, env 1): env 1
# randomized, env 0 nominal; the check of each env asserts its row.
def _effect_gravity(kit):
    """free_body, env 1 gravity (1, -2, -5): its free-fall acceleration is that vector (exact for
    constant acceleration, 1e-4 m/s^2); env 0 keeps (0, 0, -9.81)."""
    b = kit.make("free_body", 2)
    _randomize(b, "gravity", None, [1.0, -2.0, -5.0])
    b.step(np.zeros((2, b.num_actuators)), 50)
    acc = b.get_base_lin_vel().astype(np.float64) / (50 * b.sim_dt)
    return acc, np.array([[0, 0, -G], [1, -2, -5]]), 0.0, "free-fall acceleration after randomizing env 1's " \
        "gravity", "m/s^2", 1e-4


def _effect_body_mass(kit):
    """free_body, env 1 mass 4 kg (nominal 2): a force of 8 N along +x accelerates env 0 at 4 m/s^2
    and env 1 at 2 m/s^2 (needs BODY_FORCE)."""
    if Capability.BODY_FORCE not in kit.caps:
        pytest.skip("the body_mass effect is measured with apply_body_force (BODY_FORCE not declared)")
    b = kit.make("free_body", 2)
    box = b.get_body_ids(["box"])
    _randomize(b, "body_mass", box, [4.0])
    b.apply_body_force(box, np.tile([[[8.0, 0.0, 0.0]]], (2, 1, 1)))
    b.step(np.zeros((2, b.num_actuators)), 1)
    return (b.get_base_lin_vel()[:, 0] / b.sim_dt, np.array([4.0, 2.0]), 1e-4,
            "x acceleration under 8 N with masses (2, 4) kg", "m/s^2", 0.0)


def _effect_dof_damping(kit):
    """actuated_hinges damped_joint, env 1 damping 0.04 (nominal 0.01): decay rate b / (I + a) of
    1.0 /s instead of 0.25 /s; q'(1 s) = q'0 e^-rate (tolerance as joint_damping_decay)."""
    b = kit.make("actuated_hinges", 2)
    dof = b.get_joint_state_qvel_indices(["damped_joint"])
    _randomize(b, "dof_damping", dof, [0.04])
    qvel = np.zeros((2, b.nv))
    qvel[:, int(dof[0])] = 2.0
    b.set_state(np.arange(2), b.get_qpos(), qvel)
    b.step(np.zeros((2, b.num_actuators)), int(round(1.0 / b.sim_dt)))
    return (_qd(b, "damped_joint"), 2.0 * np.exp([-0.25, -1.0]), 5e-4,
            "damped_joint velocity after 1 s with damping (0.01, 0.04)", "rad/s", 0.0)


def _effect_dof_armature(kit):
    """actuated_hinges armature_joint, env 1 armature 0.08 (nominal 0.03): q'' = u / (0.02 + a)."""
    b, names = _hinges(kit)
    dof = b.get_joint_state_qvel_indices(["armature_joint"])
    _randomize(b, "dof_armature", dof, [0.08])
    b.step(_ctrl(b, names, armature_motor=0.5), 50)
    return (_qd(b, "armature_joint"), 0.5 / (I_HINGE + np.array([0.03, 0.08])) * 50 * b.sim_dt, 1e-4,
            "armature_joint velocity with armature (0.03, 0.08)", "rad/s", 0.0)


def _effect_actuator_kp(kit):
    """actuated_hinges position actuator, env 1 kp 16 (nominal 8): first-substep acceleration from
    rest kp u / I (3e-2 relative, as position_actuator_gain_and_steady_state)."""
    b, names = _hinges(kit)
    _randomize(b, "actuator_kp", [names.index("position")], [16.0])
    b.step(_ctrl(b, names, position=0.1), 1)
    return (_qd(b, "position_joint"), np.array([8.0, 16.0]) * 0.1 / I_HINGE * b.sim_dt, 3e-2,
            "position_joint velocity after one substep with kp (8, 16)", "rad/s", 0.0)


def _effect_actuator_kd(kit):
    """actuated_hinges position actuator, env 1 kd 1.6 (nominal 0.4): at its target with q' = 1 the
    first substep removes kd dt / I of the velocity (0.02 vs 0.08; an implicit treatment gives
    0.0196 / 0.074: tolerance 10 % relative)."""
    b, names = _hinges(kit)
    _randomize(b, "actuator_kd", [names.index("position")], [1.6])
    qvel = np.zeros((2, b.nv))
    qvel[:, int(b.get_joint_state_qvel_indices(["position_joint"])[0])] = 1.0
    b.set_state(np.arange(2), b.get_qpos(), qvel)
    b.step(_ctrl(b, names, position=0.0), 1)
    return (1.0 - _qd(b, "position_joint"), np.array([0.4, 1.6]) * b.sim_dt / I_HINGE, 0.1,
            "velocity lost in one substep at the target with kd (0.4, 1.6)", "rad/s", 0.0)


def _effect_geom_friction(kit):
    """box_on_plane launched at v0 = 1.5 m/s along x slides d = v0^2 / (2 mu g) before it stops: env 1
    has mu 0.8 on both geoms (MuJoCo's max rule and an average then agree), env 0 the nominal 0.5:
    0.1433 m vs 0.2294 m. Tolerance 3 % (soft contacts stop short: MuJoCo 0.6 % and 0.4 %, MotrixSim
    0.7 % and 1.2 %; a friction stored but not applied is 60 % off). Needs CONTACTS."""
    if Capability.CONTACTS not in kit.caps:
        pytest.skip("the geom_friction effect is a sliding box (CONTACTS not declared)")
    b = kit.make("box_on_plane", 2)
    geoms = [b.get_geom_id("floor"), b.get_geom_id("box_geom")]
    _randomize(b, "geom_friction", geoms, [[0.8, 0.005, 0.0001]] * 2)
    zero = np.zeros((2, b.num_actuators))
    b.step(zero, 25)  # settle on the plane
    qvel = np.zeros((2, b.nv))
    qvel[:, 0] = 1.5
    b.set_state(np.arange(2), b.get_qpos(), qvel)
    x0 = b.get_base_pos()[:, 0].astype(np.float64)
    b.step(zero, int(round(0.5 / b.sim_dt)))  # stopped after v0 / (mu g) = 0.31 s at most
    return (b.get_base_pos()[:, 0] - x0, 1.5 ** 2 / (2 * np.array([0.5, 0.8]) * G), 0.03,
            "sliding distance from 1.5 m/s with friction (0.5, 0.8)", "m", 0.0)


def _effect_body_inertia(kit):
    """free_body, env 1 principal inertia (0.2, 0.3, 0.4) kg m^2 (nominal (0.1, 0.2, 0.25), body axes =
    world axes): a torque (0.02, 0.03, 0.04) N m from rest for one substep gives dw = tau / I dt
    (exact from rest; 1e-4 relative). Needs BODY_TORQUE."""
    if Capability.BODY_TORQUE not in kit.caps:
        pytest.skip("the body_inertia effect is measured with a torque (BODY_TORQUE not declared)")
    b = kit.make("free_body", 2)
    box = b.get_body_ids(["box"])
    _randomize(b, "body_inertia", box, [[0.2, 0.3, 0.4]])
    b.apply_body_force(box, np.zeros((2, 1, 3)), np.tile([[[0.02, 0.03, 0.04]]], (2, 1, 1)))
    b.step(np.zeros((2, b.num_actuators)), 1)
    tau = np.array([0.02, 0.03, 0.04])
    return (b.get_base_ang_vel().astype(np.float64) / b.sim_dt,
            np.stack([tau / [0.1, 0.2, 0.25], tau / [0.2, 0.3, 0.4]]), 1e-4,
            "angular acceleration under (0.02, 0.03, 0.04) N m with inertia (0.1, 0.2, 0.25) and (0.2, 0.3, 0.4)",
            "rad/s^2", 0.0)


def _effect_body_com_offset(kit):
    """sensor_probe's flyer (mass 1, I = diag(0.01, 0.02, 0.03) about its COM, nominal COM (0.1, 0.05, 0)),
    env 1 COM at (0.1, -0.1, 0): a force (2, 0, 0) N at the body origin for one substep turns it about z
    at ((0 - c) x F)_z / I_zz: 0.1 / 0.03 = 3.333 (env 0) and -0.2 / 0.03 = -6.667 rad/s^2 (env 1): the
    wrench acts at the origin, so about the randomized COM (exact from rest: 1e-3 relative). A body
    whose COM sits at its origin is avoided: MuJoCo compiles it "simple", with a diagonal mass
    matrix that has no room for an offset. Needs BODY_FORCE."""
    if Capability.BODY_FORCE not in kit.caps:
        pytest.skip("the body_com_offset effect is measured with apply_body_force (BODY_FORCE not declared)")
    b = kit.make("sensor_probe", 2)
    flyer = b.get_body_ids(["flyer"])
    _randomize(b, "body_com_offset", flyer, [[0.1, -0.1, 0.0]])
    b.apply_body_force(flyer, np.tile([[[2.0, 0.0, 0.0]]], (2, 1, 1)))
    b.step(np.zeros((2, b.num_actuators)), 1)
    w = b.get_body_ang_vel_w(flyer)[:, 0, 2].astype(np.float64)
    return (w / b.sim_dt, np.array([0.1, -0.2]) / 0.03, 1e-3,
            "flyer z angular acceleration under 2 N at its origin with the COM at (0.1, 0.05, 0) and (0.1, -0.1, 0)",
            "rad/s^2", 0.0)


def _effect_dof_frictionloss(kit):
    """frictionloss_hinge (I = 0.02), env 1 frictionloss 0.1 N m (nominal 0.05): from q' = 1 rad/s the
    hinge decelerates at f / I, 5 instead of 2.5 rad/s^2: q'(0.1 s) = 0.5 vs 0.75 rad/s (tolerance
    2e-2 rad/s, as frictionloss_stops: a soft friction constraint slips slightly)."""
    b = kit.make("frictionloss_hinge", 2)
    _randomize(b, "dof_frictionloss", b.get_joint_state_qvel_indices(["friction_joint"]), [0.1])
    b.set_state(np.arange(2), np.zeros((2, 1)), np.ones((2, 1)))
    b.step(np.zeros((2, b.num_actuators)), int(round(0.1 / b.sim_dt)))
    return (_qd(b, "friction_joint"), np.array([0.75, 0.5]), 0.0,
            "friction_joint velocity 0.1 s after 1 rad/s with frictionloss (0.05, 0.1)", "rad/s", 2e-2)


def _effect_geom_size(kit):
    """box_on_plane, env 1 box half-sizes (0.15, 0.15, 0.15) m (nominal 0.1): after 0.5 s it rests with
    its COM at its half height, 0.15 vs 0.1 m (tolerance 5 mm, the contact tier of box_on_plane).
    Needs CONTACTS."""
    if Capability.CONTACTS not in kit.caps:
        pytest.skip("the geom_size effect is a box resting on a plane (CONTACTS not declared)")
    b = kit.make("box_on_plane", 2)
    _randomize(b, "geom_size", [b.get_geom_id("box_geom")], [[0.15, 0.15, 0.15]])
    qpos = b.get_qpos()
    qpos[1, 2] = 0.16  # above the plane, not inside it
    b.set_state(np.arange(2), qpos, np.zeros((2, b.nv)))
    b.step(np.zeros((2, b.num_actuators)), int(round(0.5 / b.sim_dt)))
    return (b.get_base_pos()[:, 2], np.array([0.1, 0.15]), 0.0, "resting height with box half-sizes (0.1, 0.15)",
            "m", 5e-3)


EFFECTS = {"gravity": _effect_gravity, "body_mass": _effect_body_mass, "dof_damping": _effect_dof_damping,
           "dof_armature": _effect_dof_armature, "actuator_kp": _effect_actuator_kp,
           "actuator_kd": _effect_actuator_kd, "geom_friction": _effect_geom_friction,
           "body_inertia": _effect_body_inertia, "body_com_offset": _effect_body_com_offset,
           "dof_frictionloss": _effect_dof_frictionloss, "geom_size": _effect_geom_size}


RULES4_TERMS = [pytest.param(t, marks=pytest.mark.rules(4)) for t in EFFECT_TERMS_4]


@pytest.mark.requires(Capability.INIT_RANDOMIZATION)
@pytest.mark.parametrize("env", EFFECT_ENVS)
@pytest.mark.parametrize("term", [*EFFECT_TERMS, *RULES4_TERMS])
def test_randomized_term_takes_effect(kit, term, env):
    """A declared init-randomization term changes the physics of the targeted env as its new value
    dictates (randomized_env: a value stored but never applied to the engine fails), and leaves the
    other env at the nominal closed form (nominal_env); one simulation per term (rules 4 added
    geom_friction, body_inertia, body_com_offset, dof_frictionloss and geom_size)."""
    terms = kit.shared("dynamics.init_terms", lambda k: frozenset(k.make("free_body", 1).get_dr_capabilities()
                                                                  .init_terms))
    if term not in terms:
        pytest.skip(f"backend {kit.label!r} does not declare init randomization term {term!r}")
    measured, expected, rtol, what, unit, atol = kit.shared(f"dynamics.effect.{term}", EFFECTS[term])
    row = 1 if env == "randomized_env" else 0
    _rel_close(measured[row], expected[row], rtol, f"{what}, env {row} ({env})", unit, atol=atol)


@pytest.mark.rules(4)
@pytest.mark.requires(Capability.CONTACTS)
def test_many_contacts_hold(kit):
    """box_grid: 36 boxes resting on a plane (144 contacts per env in MuJoCo) stay at rest for 0.3 s:
    every centre at z = 0.05 within 5 mm (the contact tier of box_on_plane) and within 5 mm of
    where it started in x, y. An engine whose contact buffers are too small must raise an error
    naming the buffer; dropping contacts in silence lets boxes sink through the floor (#39: Newton
    dropped the Go1-class robot's foot contacts that way)."""
    b = kit.make("box_grid", 2)
    start = b.get_qpos().reshape(2, 36, 7)[..., :3].copy()
    b.step(np.zeros((2, b.num_actuators)), round(0.3 / b.sim_dt))
    pos = b.get_qpos().reshape(2, 36, 7)[..., :3]
    sunk = np.argwhere(np.abs(pos[..., 2] - 0.05) > 5e-3)
    assert not len(sunk), (f"{len(sunk)} of 72 resting boxes left z = 0.05 (e.g. env {sunk[0][0]} box{sunk[0][1]} "
                           f"at z = {pos[tuple(sunk[0])][2]:.4f}): contacts dropped?")
    np.testing.assert_allclose(pos[..., :2], start[..., :2], atol=5e-3, err_msg="resting boxes moved in x, y")
