"""The worker's sensors, wrenches, pushes, randomization and snapshots: the REAL worker.py on the SDK
stubs (both Isaac Lab generations, the GPU pipeline's staged writes) through the real host.

The stub physics is kinematic with one dynamic rule (``stub_sdk.engine``): a floating root moves by
the summed external force over the total mass, no gravity, no rotation from forces. The known
answers below follow from that rule and from the sensors' definitions; how PhysX moves the robot is
``scripts/gpu_acceptance.py``'s (its ``capabilities`` checks)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from isaacsim_testing import USD_EXTRA, import_or_skip_outside_ci
from isaacsim_testing.stub_sdk import LAB_ENV
from isaacsim_testing.stub_sdk_run import StubSdkIsaacSim

from unisim_core import InitRandomizationPlan, InvalidInputError, RandomizationOp, SceneCfg
from unisim_core.scenes import scene_path

import_or_skip_outside_ci("physx_usd_schemas", USD_EXTRA)  # the stub stage is real USD

DT = 0.005
G = 9.81


@pytest.fixture(scope="module", params=[2, 3], ids=["isaaclab2", "isaaclab3"])
def robot(request):
    from unisim_isaacsim._runtime import PYTHON_ENV

    saved = {k: os.environ.get(k) for k in (LAB_ENV, PYTHON_ENV)}
    os.environ[LAB_ENV], os.environ[PYTHON_ENV] = str(request.param), sys.executable
    try:
        b = StubSdkIsaacSim(SceneCfg(str(scene_path("quadruped")), default_keyframe="home"), 2, DT,
                            device="cuda:0", init_timeout_s=120.0, call_timeout_s=60.0)
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    yield b
    b.close()


def _still(b, v=(0.0, 0.0, 0.0)):
    """Both envs at the default pose, the base moving at world velocity ``v``."""
    q = np.tile(b.get_default_qpos(), (2, 1))
    qd = np.zeros((2, b.nv))
    qd[:, :3] = v
    b.set_state(np.arange(2), q, qd)
    return q


def _hold(b):
    return np.tile(b.get_default_dof_pos(), (2, 1))


def test_declares_the_worker_capabilities(robot):
    from unisim_core import Capability as C

    assert {C.SENSORS, C.BODY_FORCE, C.BODY_TORQUE, C.PUSH, C.PHYSICS_SNAPSHOT, C.SITE_JACOBIAN,
            C.INIT_RANDOMIZATION, C.INTERVAL_RANDOMIZATION, C.RESET_RANDOMIZATION} <= robot.capabilities
    assert robot.snapshot_tier == "state"
    assert "body_mass" in robot.get_dr_capabilities().init_terms
    assert "geom_friction" not in robot.get_dr_capabilities().init_terms


def test_sensors_from_link_states(robot):
    """Base moving at v = (0.3, -0.2, 0.1) m/s, upright, the imu site at the base origin without a turn:
    velocimeter v, gyro 0, framepos / framequat the base pose; accelerometer R^T (a - g): (0, 0, 9.81)
    coasting, (F/M, 0, 9.81) with F = 12 N along x on the base during the step."""
    b = robot
    v = np.array([0.3, -0.2, 0.1])
    q = _still(b, v)
    np.testing.assert_allclose(b.get_sensor_data("imu_vel"), [v] * 2, atol=1e-6)
    np.testing.assert_allclose(b.get_sensor_data("imu_gyro"), 0.0, atol=1e-6)
    np.testing.assert_allclose(b.get_sensor_data("imu_pos"), q[:, :3], atol=1e-6)
    np.testing.assert_allclose(b.get_sensor_data("imu_quat"), q[:, 3:7], atol=1e-6)
    b.step(_hold(b), 1)
    np.testing.assert_allclose(b.get_sensor_data("imu_acc"), [[0, 0, G]] * 2, atol=1e-4)
    M = float(np.sum(b.model_info.body_mass))
    base = b.get_body_ids(["base"])
    b.apply_body_force(base, np.tile([[[12.0, 0.0, 0.0]]], (2, 1, 1)))
    b.step(_hold(b), 1)
    np.testing.assert_allclose(b.get_sensor_data("imu_acc"), [[12.0 / M, 0, G]] * 2, rtol=1e-4)


def test_body_force_and_push_move_the_root_by_f_over_m(robot):
    """A staged force acts over every substep of the next step only (3 substeps: dv = 3 dt F / M), then
    is cleared; a push draws a horizontal force per env and returns it (dv = dt f / M)."""
    b = robot
    M = float(np.sum(b.model_info.body_mass))
    _still(b)
    base = b.get_body_ids(["base"])
    f = np.array([[[6.0, -3.0, 2.0]], [[0.0, 4.0, 0.0]]])
    b.apply_body_force(base, f, np.zeros_like(f))
    b.step(_hold(b), 3)
    np.testing.assert_allclose(b.get_base_lin_vel(), 3 * DT * f[:, 0] / M, rtol=1e-4, atol=1e-9)
    before = b.get_base_lin_vel()
    b.step(_hold(b), 2)
    np.testing.assert_allclose(b.get_base_lin_vel(), before, atol=1e-7)  # cleared after its step
    pushed = b.push_robots([-20.0, 20.0])
    b.step(_hold(b), 1)
    np.testing.assert_allclose(b.get_base_lin_vel() - before, DT * pushed / M, rtol=1e-4, atol=1e-9)


def test_randomized_fields_read_back_and_act(robot):
    """Per env: base mass +2 kg in env 1 (the same force then accelerates it M / (M + 2) as much),
    gravity +1 m/s^2 along z in env 0 (m (g_env - g) at each COM: dv = k dt (0, 0, 1)), COM offset,
    inertia, dof damping / armature and kp / kd read back; a free joint's dof is refused with nothing
    written."""
    b = robot
    base = b.get_body_ids(["base"])
    M = float(np.sum(b.model_info.body_mass))
    ops = [RandomizationOp(term="body_mass", env_ids=np.array([1]), target_ids=base, values=np.array([[2.0]]),
                           operation="add"),
           RandomizationOp(term="gravity", env_ids=np.array([0]), values=np.array([[0.0, 0.0, 1.0]]), operation="add"),
           RandomizationOp(term="body_com_offset", env_ids=np.array([1]), target_ids=base,
                           values=np.array([[[0.01, 0.0, -0.02]]]), operation="add"),
           RandomizationOp(term="body_inertia", env_ids=np.array([1]), target_ids=base,
                           values=np.array([[[1.5, 1.5, 1.5]]]), operation="scale"),
           RandomizationOp(term="dof_damping", env_ids=np.array([0]), target_ids=np.array([6, 7]),
                           values=np.array([[0.3, 0.4]]), operation="set"),
           RandomizationOp(term="dof_armature", env_ids=np.array([1]), target_ids=np.array([8]),
                           values=np.array([[0.05]]), operation="set"),
           RandomizationOp(term="actuator_kp", env_ids=np.array([1]), target_ids=np.array([0]),
                           values=np.array([[2.0]]), operation="scale"),
           RandomizationOp(term="actuator_kd", env_ids=np.array([0]), target_ids=np.array([1]),
                           values=np.array([[3.0]]), operation="set")]
    info = b.model_info
    b.apply_init_randomization(InitRandomizationPlan(ops))
    mass = b.get_model_field("body_mass")
    np.testing.assert_allclose(mass[:, base[0]], [info.body_mass[base[0]], info.body_mass[base[0]] + 2.0], rtol=1e-6)
    np.testing.assert_allclose(b.get_model_field("gravity"), [[0, 0, -G + 1.0], [0, 0, -G]], atol=1e-6)
    np.testing.assert_allclose(b.get_model_field("body_com_offset")[1, base[0]],
                               info.body_ipos[base[0]] + [0.01, 0.0, -0.02], atol=1e-7)
    np.testing.assert_allclose(b.get_model_field("body_inertia")[1, base[0]], 1.5 * info.body_inertia[base[0]],
                               rtol=1e-6)
    np.testing.assert_allclose(b.get_model_field("dof_damping")[0, 6:8], [0.3, 0.4])
    np.testing.assert_allclose(b.get_model_field("dof_armature")[1, 8], 0.05)
    np.testing.assert_allclose(b.get_model_field("actuator_kp")[:, 0], [info.actuator_kp[0], 2 * info.actuator_kp[0]])
    np.testing.assert_allclose(b.get_model_field("actuator_kd")[:, 1], [3.0, info.actuator_kd[1]])
    _still(b)
    f = np.tile([[[10.0, 0.0, 0.0]]], (2, 1, 1))
    b.apply_body_force(base, f)
    b.step(_hold(b), 4)
    v = b.get_base_lin_vel()
    np.testing.assert_allclose(v[:, 0], 4 * DT * 10.0 / np.array([M, M + 2.0]), rtol=1e-4)
    np.testing.assert_allclose(v[:, 2], [4 * DT * 1.0, 0.0], atol=1e-6)
    before = b.get_model_field("dof_damping")
    with pytest.raises(InvalidInputError, match="free joint"):
        b.apply_init_randomization(InitRandomizationPlan([RandomizationOp(
            term="dof_damping", env_ids=np.array([0]), target_ids=np.array([0]), values=np.array([[1.0]]),
            operation="set")]))
    np.testing.assert_array_equal(b.get_model_field("dof_damping"), before)


def test_snapshot_restores_every_read(robot):
    """Rows [time, qpos, qvel]; a restore reads back bit for bit (bodies and sensors too), the time column
    included."""
    b = robot
    _still(b, (0.2, 0.0, 0.0))
    t0 = b.get_physics_state()[:, 0]
    b.step(_hold(b), 3)
    snap = b.get_physics_state()
    np.testing.assert_allclose(snap[:, 0], t0 + 3 * DT, rtol=1e-9)
    ids = np.arange(b.num_bodies)
    reads = (b.get_qpos(), b.get_body_pos_w(ids), b.get_body_lin_vel_w(ids), b.get_sensor_data("imu_acc"))
    b.step(_hold(b), 5)
    b.set_physics_state(snap)
    after = (b.get_qpos(), b.get_body_pos_w(ids), b.get_body_lin_vel_w(ids), b.get_sensor_data("imu_acc"))
    for x, y in zip(reads, after):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(b.get_physics_state(), snap)
