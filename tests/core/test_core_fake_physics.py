"""Closed-form physics on the fake backend. Each test states its reference equation and why its
tolerance is what it is (the fake integrates with semi-implicit Euler in float64)."""

from __future__ import annotations

import numpy as np
import pytest
from core_helpers import G, make, write_scene, yaw90

from unisim_core.contract.errors import InvalidInputError
from unisim_core.contract.randomization import (
    InitRandomizationPlan,
    IntervalRandomizationPlan,
    RandomizationOp,
    ResetRandomizationPayload,
)

NONE = np.zeros((2, 0))
SLIDERS = """
<worldbody>
  <body name="cart"><joint name="x" type="slide" axis="1 0 0"/>
    <inertial pos="0 0 0" mass="2" diaginertia="1 1 1"/></body>
  <body name="cart2"><joint name="y" type="slide" axis="0 1 0"/>
    <inertial pos="0 0 0" mass="4" diaginertia="1 1 1"/></body>
</worldbody>
<actuator>
  <position name="p" joint="x" kp="100" kv="10"/>
  <motor name="m" joint="y" gear="2" ctrlrange="-1 1"/>
</actuator>"""


def op(term, values, env_ids=None, target_ids=None, operation="set"):
    return RandomizationOp(term=term, values=values, env_ids=env_ids, target_ids=target_ids, operation=operation)


def test_free_fall_within_semi_implicit_euler_error():
    """z(t) = z0 - g t²/2. Semi-implicit Euler gives z_n = z0 - g dt² n(n+1)/2, i.e. an error of
    exactly g·dt·t/2 (0.0098 m after 1 s at dt = 2 ms); rounding adds ~1e-13."""
    dt, n = 0.002, 500
    b = make("free_body", 2, dt)
    b.step(NONE, n)
    t = n * dt
    z = b.get_base_pos()[:, 2]
    err = z - (1.0 - 0.5 * G * t**2)
    np.testing.assert_allclose(err, -G * dt * t / 2, atol=1e-10)
    assert np.all(np.abs(err) <= G * dt * t / 2 + 1e-10)
    np.testing.assert_allclose(b.get_base_lin_vel()[:, 2], -G * t, rtol=1e-12)
    assert b.get_physics_state()[0, 0] == pytest.approx(t)


def test_force_equals_mass_times_acceleration_for_one_step():
    """v₁ = (F/m + g) dt with m = 2 kg; the wrench is cleared after the step (v₂ = v₁ + g dt)."""
    dt = 0.002
    b = make("free_body", 2, dt)
    force = np.array([[[4.0, 0.0, 0.0]], [[0.0, -6.0, 2.0 * G]]])  # env 1: gravity compensated in z
    b.apply_body_force(np.array([1]), force)
    b.step(NONE)
    np.testing.assert_allclose(b.get_base_lin_vel(), [[2 * dt, 0, -G * dt], [0, -3 * dt, 0]], atol=1e-15)
    b.step(NONE)
    np.testing.assert_allclose(b.get_base_lin_vel(), [[2 * dt, 0, -2 * G * dt], [0, -3 * dt, -G * dt]], atol=1e-15)


def test_world_torque_gives_body_frame_angular_acceleration():
    """Yawed 90° about z: a world torque about z is a body torque about z; ω_z = τ/I_zz dt
    (I_zz = 0.25, ω = 0 so no gyroscopic term); a world x torque acts about body -y (I_yy = 0.2)."""
    dt = 0.002
    b = make("free_body", 2, dt)
    qpos = b.get_qpos()
    qpos[:, 3:7] = yaw90()
    b.set_state(np.arange(2), qpos, np.zeros((2, 6)))
    torque = np.array([[[0.0, 0.0, 0.6]], [[0.4, 0.0, 0.0]]])
    b.apply_body_force(np.array([1]), np.zeros((2, 1, 3)), torque)
    b.step(NONE)
    np.testing.assert_allclose(b.get_qvel()[:, 3:6], [[0, 0, 0.6 / 0.25 * dt], [0, -0.4 / 0.2 * dt, 0]], atol=1e-15)
    np.testing.assert_allclose(b.get_base_ang_vel(), [[0, 0, 2.4 * dt], [2 * dt, 0, 0]], atol=1e-15)


def test_off_center_force_on_a_child_body_rotates_the_root():
    """Quadruped at zero joint angles, identity pose: a force F on FL_hip gives the root
    a = g + F/M and α = I_base⁻¹ ((p_hip - com) × F), com over all 13 bodies."""
    dt = 0.002
    b = make("quadruped", 1, dt)
    mass, ipos = b.get_body_mass().astype(float), b.get_body_ipos()
    pos = b.get_body_pos_w(np.arange(b.num_bodies))[0]
    com = (mass[:, None] * (pos + ipos)).sum(0) / mass.sum()
    hip = int(b.get_body_ids(["FL_hip"])[0])
    F = np.array([0.0, 0.0, 10.0])
    b.apply_body_force(np.array([hip]), F[None, None])
    b.step(np.zeros((1, 12)))
    alpha = np.cross(pos[hip] - com, F) / np.array([0.0083, 0.0643, 0.0643])
    np.testing.assert_allclose(b.get_qvel()[0, 3:6], alpha * dt, rtol=1e-12)
    np.testing.assert_allclose(b.get_qvel()[0, 0:3], (np.array([0, 0, -G]) + F / mass.sum()) * dt, rtol=1e-12)


def test_pendulum_equation_one_step():
    """I q̈ = -m g L sin q with I = m L² + 1e-6: q̇₁ = -dt g sin q₀ / I, q₁ = q₀ + dt q̇₁;
    the bob site is at (-L sin q, 0, -L cos q)."""
    dt, q0 = 0.001, 0.5
    b = make("pendulum", 1, dt)
    b.set_state([0], [[q0]], [[0.0]])
    b.step(np.zeros((1, 0)))
    qd1 = -dt * G * np.sin(q0) / (1.0 + 1e-6)
    assert b.get_qvel()[0, 0] == pytest.approx(qd1, rel=1e-12)
    q1 = q0 + dt * qd1
    assert b.get_qpos()[0, 0] == pytest.approx(q1, rel=1e-12)
    bob = b.get_body_pos_w(np.array([1]))[0, 0] + [-np.sin(q1), 0, -np.cos(q1)]
    site = b.get_site_jacobian_w(0, [0])  # only used for shape: d bob / dq = (-cos q, 0, sin q)
    np.testing.assert_allclose(site[0][0, :, 0], [-np.cos(q1), 0, np.sin(q1)], atol=1e-12)
    np.testing.assert_allclose(bob, [-np.sin(q1), 0, -np.cos(q1)], atol=1e-15)


def test_pendulum_small_angle_period():
    """T = 2π √(I/(m g L)) (1 + θ₀²/16), I = 1 + 1e-6. Remaining errors: the next amplitude term
    (11/3072) θ₀⁴ ≈ 2e-8; semi-implicit Euler shifts the frequency by ω² dt²/24 (1.6e-6 at dt = 2 ms);
    crossing times are linearly interpolated at q ≈ 0 where q̈ ≈ 0 (≪ 1e-8). Tolerance: twice the
    integrator term plus 1e-7, relative."""
    dt, th0 = 0.002, 0.05
    b = make("pendulum", 1, dt)
    b.set_state([0], [[th0]], [[0.0]])
    qs = [th0]
    for _ in range(int(1.6 / dt)):  # past the second zero crossing at 3T/4 ≈ 1.505 s
        b.step(np.zeros((1, 0)))
        qs.append(b.get_qpos()[0, 0])
    qs = np.array(qs)
    k = np.flatnonzero(np.sign(qs[:-1]) != np.sign(qs[1:]))[:2]
    crossings = (k + qs[k] / (qs[k] - qs[k + 1])) * dt
    period = 2.0 * (crossings[1] - crossings[0])
    expected = 2 * np.pi * np.sqrt((1.0 + 1e-6) / G) * (1 + th0**2 / 16)
    tol = 2 * G * dt**2 / 24 + 1e-7
    assert abs(period - expected) / expected < tol


def test_motor_torque_implicit_damping_ctrl_clamp_and_limits():
    """fixed_arm wrist at q = 0 (COM above the anchor, no gravity torque): I = 0.0002 + 0.2·0.05² + armature
    0.01 = 0.0107; implicit damping c = 0.1: q̇₁ = dt τ / (I + dt c); ctrl 80 is clamped to 50 N·m."""
    dt = 0.002
    b = make("fixed_arm", 2, dt)
    b.step(np.array([[0, 0, 0, 1.0], [0, 0, 0, 80.0]]))
    i_eff = 0.0002 + 0.2 * 0.05**2 + 0.01
    np.testing.assert_allclose(b.get_qvel()[:, 3], [dt / (i_eff + dt * 0.1), 50 * dt / (i_eff + dt * 0.1)], rtol=1e-12)
    b.step(np.array([[0, 0, 0, 50.0], [0, 0, 0, -50.0]]), 200)  # reach the ±3.14159 limits
    np.testing.assert_array_equal(b.get_qpos()[:, 3], [3.14159, -3.14159])
    np.testing.assert_array_equal(b.get_qvel()[:, 3], 0.0)


def test_position_and_motor_actuators(tmp_path):
    """Slide m = 2, position kp 100 kv 10: f = kp (u - q) - kv q̇; motor gear 2 on m = 4, ctrl clamped to 1."""
    dt = 0.002
    b = make(write_scene(tmp_path, SLIDERS), 2, dt)
    b.set_state([1], [[0.0, 0.0]], [[1.0, 0.0]])
    b.step(np.array([[0.5, 5.0], [0.0, -0.5]]))
    np.testing.assert_allclose(b.get_qvel(), [[dt * 50 / 2, dt * 2 / 4], [1 - dt * 10 / 2, -dt * 1 / 4]], rtol=1e-12)


def test_dr_actuator_gains_change_only_targets_and_act(tmp_path):
    dt = 0.002
    b = make(write_scene(tmp_path, SLIDERS), 3, dt)
    b.apply_init_randomization(InitRandomizationPlan([
        op("actuator_kp", [[2.0]], env_ids=[1], target_ids=[0], operation="scale"),
        op("actuator_kd", [[20.0]], env_ids=[2], target_ids=[0]),
    ]))
    np.testing.assert_array_equal(b.get_model_field("actuator_kp"), [[100, 0], [200, 0], [100, 0]])
    np.testing.assert_array_equal(b.get_model_field("actuator_kd"), [[10, 0], [10, 0], [20, 0]])
    b.set_state([2], [[0.0, 0.0]], [[1.0, 0.0]])
    b.step(np.array([[0.5, 0], [0.5, 0], [0.0, 0]]))
    np.testing.assert_allclose(b.get_qvel()[:, 0], [dt * 50 / 2, dt * 100 / 2, 1 - dt * 20 / 2], rtol=1e-12)


def test_dr_damping_changes_only_target_and_damps():
    """Pendulum at the bottom (no gravity torque): q̇₁ = I q̇₀ / (I + dt c)."""
    dt = 0.001
    b = make("pendulum", 2, dt)
    b.apply_init_randomization(InitRandomizationPlan([op("dof_damping", [[0.5]], env_ids=[1], target_ids=[0])]))
    np.testing.assert_array_equal(b.get_model_field("dof_damping"), [[0.0], [0.5]])
    b.set_state(np.arange(2), np.zeros((2, 1)), np.ones((2, 1)))
    b.step(np.zeros((2, 0)))
    inertia = 1.0 + 1e-6
    np.testing.assert_allclose(b.get_qvel()[:, 0], [1.0, inertia / (inertia + dt * 0.5)], rtol=1e-14)


def test_dr_body_mass_changes_only_target_and_scales_acceleration():
    dt = 0.002
    b = make("free_body", 3, dt)
    b.apply_init_randomization(InitRandomizationPlan([op("body_mass", [[2.0]], env_ids=[1], target_ids=[1],
                                                         operation="scale")]))
    np.testing.assert_array_equal(b.get_model_field("body_mass"), [[0, 2], [0, 4], [0, 2]])
    np.testing.assert_array_equal(b.get_body_mass(), [0, 2])  # nominal table unchanged
    b.apply_body_force(np.array([1]), np.tile([[[8.0, 0, 0]]], (3, 1, 1)))
    b.step(np.zeros((3, 0)))
    np.testing.assert_allclose(b.get_base_lin_vel()[:, 0], [4 * dt, 2 * dt, 4 * dt], rtol=1e-14)


def test_dr_gravity_on_reset_changes_only_reset_envs():
    dt, n = 0.002, 100
    b = make("free_body", 3, dt)
    qpos, qvel = b.get_qpos()[[0]], b.get_qvel()[[0]]
    payload = ResetRandomizationPayload([op("gravity", [[0.0, 0.0, -1.62]]),
                                         op("root_lin_vel_delta", [[0.0, 0.5, 0.0]], operation="add")])
    b.set_state([0], qpos, qvel, randomization=payload)
    np.testing.assert_array_equal(b.get_model_field("gravity"), [[0, 0, -1.62], [0, 0, -G], [0, 0, -G]])
    np.testing.assert_array_equal(b.get_qvel()[:, 1], [0.5, 0, 0])
    b.step(np.zeros((3, 0)), n)
    z = 1.0 - np.array([1.62, G, G]) * dt**2 * n * (n + 1) / 2  # semi-implicit Euler, exact sum
    np.testing.assert_allclose(b.get_base_pos()[:, 2], z, rtol=1e-12)


def test_interval_terms_target_envs_only():
    dt = 0.002
    b = make("free_body", 3, dt, np_dtype=np.float64)
    b.apply_interval_randomization(IntervalRandomizationPlan([
        op("root_lin_vel_delta", [[1.0, 0, 0]], env_ids=[1], operation="add"),
        op("root_ang_vel_delta", [[0, 0, 2.0]], env_ids=[2], operation="add"),
        op("body_force", [[[4.0, 0, 0]]], env_ids=[0], target_ids=[1]),
        op("body_torque", [[[0, 0, 0.6]]], env_ids=[0], target_ids=[1]),
    ]))
    qvel = b.get_qvel()
    np.testing.assert_array_equal(qvel[:, :6], [[0] * 6, [1, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 2]])
    b.step(np.zeros((3, 0)))
    v = b.get_qvel()
    assert v[0, 0] == pytest.approx(2 * dt) and v[0, 5] == pytest.approx(2.4 * dt)  # F/m, τ/I_zz
    assert v[1, 0] == 1.0 and v[2, 5] == 2.0 and v[1, 5] == 0.0 and v[2, 0] == 0.0


def test_root_velocity_terms_need_a_free_root():
    b = make("fixed_arm", 2)
    before = b.get_qvel()
    with pytest.raises(InvalidInputError, match="root_lin_vel_delta: the model has no floating root"):
        b.apply_interval_randomization(IntervalRandomizationPlan([op("root_lin_vel_delta", np.ones((2, 3)),
                                                                     operation="add")]))
    assert np.array_equal(b.get_qvel(), before)


def test_push_robots_is_a_horizontal_force_for_one_step():
    dt = 0.002
    b = make("free_body", 4, dt, seed=7)
    forces = b.push_robots([-10.0, 10.0])
    assert forces.shape == (4, 3) and np.all(forces[:, 2] == 0) and np.all(np.abs(forces) <= 10)
    b.step(np.zeros((4, 0)))
    np.testing.assert_allclose(b.get_base_lin_vel()[:, :2], forces[:, :2] / 2 * dt, rtol=1e-12)


def test_pre_step_control_runs_every_substep():
    calls = []

    def hook(backend, ctrl):
        calls.append(ctrl.copy())
        return ctrl * 2

    a, b = make("fixed_arm", 2), make("fixed_arm", 2)
    ctrl = np.full((2, 4), 0.5)
    a.set_pre_step_control(hook)
    a.step(ctrl, 3)
    assert len(calls) == 3
    for _ in range(3):
        b.step(ctrl * 2)
    np.testing.assert_array_equal(a.get_physics_state(), b.get_physics_state())


def random_quad_state(b, seed):
    rng = np.random.default_rng(seed)
    n = b.num_envs
    qpos = np.tile(b.get_keyframe_qpos("home"), (n, 1))
    qpos[:, 7:] += rng.normal(scale=0.1, size=(n, 12))
    qpos[:, 3:7] += rng.normal(scale=0.2, size=(n, 4))
    qvel = rng.normal(scale=0.5, size=(n, b.nv))
    b.set_state(np.arange(n), qpos, qvel)
    return np.tile(b.get_keyframe_qpos("home")[7:], (n, 1))


def full_read(b):
    ids = np.arange(b.num_bodies)
    return [b.get_physics_state(), *b.get_body_state_w(ids), b.get_sensor_data_batch(b.model_info.sensor_names)]


def test_subset_set_state_leaves_other_envs_bit_identical():
    b = make("quadruped", 4)
    ctrl = random_quad_state(b, 0)
    b.step(ctrl, 3)
    before = full_read(b)
    qpos = np.tile(b.get_keyframe_qpos("home"), (2, 1))
    b.set_state(np.array([3, 1]), qpos, np.zeros((2, b.nv)))
    after = full_read(b)
    for x, y in zip(before, after):
        np.testing.assert_array_equal(x[[0, 2]], y[[0, 2]])
    np.testing.assert_array_equal(b.get_qpos()[[1, 3]], qpos)


def test_nsteps_equals_single_steps_and_instances_agree():
    a, b, c = make("quadruped", 3), make("quadruped", 3), make("quadruped", 3)
    ctrl = random_quad_state(a, 1)
    random_quad_state(b, 1)
    random_quad_state(c, 1)
    a.step(ctrl, 5)
    for _ in range(5):
        b.step(ctrl)
    c.step(ctrl, 5)
    for x, y, z in zip(full_read(a), full_read(b), full_read(c)):
        np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(x, z)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_snapshot_restore_then_step_reproduces_bitwise(dtype):
    b = make("quadruped", 2, np_dtype=dtype)
    ctrl = random_quad_state(b, 2)
    b.step(ctrl, 4)
    snap = b.get_physics_state()
    assert snap.dtype == np.float64 and snap.shape == (2, 1 + 19 + 18)  # lossless rows
    np.testing.assert_allclose(snap[:, 0], 4 * 0.002)
    b.step(ctrl, 6)
    first = full_read(b)
    b.set_physics_state(snap)
    np.testing.assert_array_equal(b.get_physics_state(), snap)
    b.step(ctrl, 6)
    for x, y in zip(first, full_read(b)):
        np.testing.assert_array_equal(x, y)
