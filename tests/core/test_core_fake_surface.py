"""Every method the base class derives, checked on the fake against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest
from core_helpers import SCENES, G, make, write_scene, yaw90

from unisim_core.contract.config import SceneCfg
from unisim_core.contract.errors import InvalidInputError, UnknownNameError
from unisim_core.contract.quat import quat_apply
from unisim_core.plugin.fake import FakeBackend

C45 = np.cos(np.pi / 4)
HOME_LEG = [0.0, 0.9, -1.8]


def set_root(b, env, pos=(0.0, 0.0, 1.0), quat=(1.0, 0, 0, 0), lin=(0.0, 0, 0), ang=(0.0, 0, 0)):
    qpos, qvel = b.get_qpos()[[env]], b.get_qvel()[[env]]
    qpos[0, :7] = [*pos, *quat]
    qvel[0, :6] = [*lin, *ang]
    b.set_state(np.array([env]), qpos, qvel)


def test_yaw_reads_back_wxyz(free_body):
    base = np.array([free_body.base_body_id])
    set_root(free_body, 1, quat=yaw90())
    expected = [C45, 0.0, 0.0, C45]
    np.testing.assert_allclose(free_body.get_base_quat()[1], expected, atol=1e-15)
    np.testing.assert_allclose(free_body.get_body_quat_w(base)[1, 0], expected, atol=1e-15)
    np.testing.assert_array_equal(free_body.get_base_quat()[0], [1, 0, 0, 0])  # untouched env


def test_known_spin_in_world_and_body_frames(free_body):
    base = np.array([free_body.base_body_id])
    set_root(free_body, 2, quat=yaw90(), ang=(1.0, 0.0, 0.0))  # body-frame spin about body x
    np.testing.assert_allclose(free_body.get_base_ang_vel()[2], [0, 1, 0], atol=1e-15)  # body x = world y
    np.testing.assert_allclose(free_body.get_body_ang_vel_w(base)[2, 0], [0, 1, 0], atol=1e-15)
    np.testing.assert_allclose(free_body.get_body_ang_vel_b(base)[2, 0], [1, 0, 0], atol=1e-15)


def test_known_linear_velocity_world_and_body(free_body):
    base = np.array([free_body.base_body_id])
    set_root(free_body, 0, quat=yaw90(), lin=(1.0, 2.0, 3.0))
    np.testing.assert_allclose(free_body.get_base_lin_vel()[0], [1, 2, 3], atol=1e-15)
    np.testing.assert_allclose(free_body.get_body_lin_vel_w(base)[0, 0], [1, 2, 3], atol=1e-15)
    # R^T v for a 90 deg yaw: (x, y, z) -> (y, -x, z)
    np.testing.assert_allclose(free_body.get_body_lin_vel_b(base)[0, 0], [2, -1, 3], atol=1e-15)


def test_base_relative_pose_and_child_offsets(quad):
    set_root(quad, 1, pos=(1.0, -2.0, 0.5), quat=yaw90())
    ids = quad.get_body_ids(["base", "FL_hip", "FL_thigh", "RR_calf"])
    pos_b, quat_b = quad.get_body_pos_b(ids), quad.get_body_quat_b(ids)
    np.testing.assert_allclose(pos_b[1, 0], 0.0, atol=1e-15)
    np.testing.assert_allclose(quat_b[1, 0], [1, 0, 0, 0], atol=1e-15)
    np.testing.assert_allclose(pos_b[1, 1], [0.1881, 0.04675, 0.0], atol=1e-14)  # MJCF offset of FL_hip
    np.testing.assert_allclose(pos_b[1, 2], [0.1881, 0.04675 + 0.080, 0.0], atol=1e-14)
    np.testing.assert_allclose(pos_b[1, 3], [-0.1881, -0.04675 - 0.080, -0.213], atol=1e-14)
    # world position of FL_hip: base + R(yaw 90) offset = (1 - 0.04675, -2 + 0.1881, 0.5)
    np.testing.assert_allclose(quad.get_body_pos_w(ids)[1, 1], [1 - 0.04675, -2 + 0.1881, 0.5], atol=1e-14)


def test_rows_variants_equal_full_reads_indexed(quad):
    quad.step(np.tile(np.array(HOME_LEG * 4), (3, 1)), 5)
    ids, rows = np.array([1, 4, 7]), np.array([2, 0])
    pos, quat = quad.get_body_pose_w_rows(rows, ids)
    np.testing.assert_array_equal(pos, quad.get_body_pos_w(ids)[rows])
    np.testing.assert_array_equal(quat, quad.get_body_quat_w(ids)[rows])
    np.testing.assert_array_equal(quad.get_body_lin_vel_w_rows(rows, ids), quad.get_body_lin_vel_w(ids)[rows])
    np.testing.assert_array_equal(quad.get_body_ang_vel_w_rows(rows, ids), quad.get_body_ang_vel_w(ids)[rows])
    np.testing.assert_array_equal(quad.get_sensor_data_rows("imu_vel", rows), quad.get_sensor_data("imu_vel")[rows])
    p2, q2 = quad.get_body_pose_w(ids)
    s = quad.get_body_state_w(ids)
    np.testing.assert_array_equal(p2, s[0])
    np.testing.assert_array_equal(q2, s[1])
    np.testing.assert_array_equal(quad.get_body_vel_w(ids)[1], s[3])


def test_copy_body_state_w_fills_and_validates_buffers():
    b = make("quadruped", 2, np_dtype=np.float32)
    ids = np.array([1, 2])
    bufs = [np.full((2, 2, w), np.nan, dtype=np.float32) for w in (3, 4, 3, 3)]
    out = b.copy_body_state_w(ids, *bufs)
    assert all(o is buf for o, buf in zip(out, bufs))
    for buf, ref in zip(bufs, b.get_body_state_w(ids)):
        np.testing.assert_array_equal(buf, ref)
    bad_shape = [np.zeros((2, 3, 3), np.float32), *bufs[1:]]
    with pytest.raises(InvalidInputError, match=r"out_pos: expected a float32 array of shape \(2, 2, 3\)"):
        b.copy_body_state_w(ids, *bad_shape)
    with pytest.raises(InvalidInputError, match="out_quat"):
        b.copy_body_state_w(ids, bufs[0], bufs[1].astype(np.float64), *bufs[2:])
    ro = bufs[3].copy()
    ro.setflags(write=False)
    with pytest.raises(InvalidInputError, match="out_ang_vel: buffer is read-only"):
        b.copy_body_state_w(ids, *bufs[:3], ro)


def test_sensors_batch_view_and_known_values(quad):
    set_root(quad, 0, pos=(0.3, 0.2, 1.0), quat=yaw90(), lin=(1.0, 0.0, 0.0), ang=(0.0, 0.0, 2.0))
    names = ["imu_quat", "imu_gyro", "imu_pos", "imu_vel", "imu_acc"]
    batch = quad.get_sensor_data_batch(names)
    np.testing.assert_array_equal(batch, np.concatenate([quad.get_sensor_data(n) for n in names], axis=1))
    view = quad.bind_sensor_data(names)
    assert view.width == 4 + 3 + 3 + 3 + 3 and view.slices["imu_pos"] == slice(7, 10)
    np.testing.assert_array_equal(view.read(), batch)
    np.testing.assert_allclose(batch[0, view.slices["imu_quat"]], [C45, 0, 0, C45], atol=1e-15)
    np.testing.assert_allclose(batch[0, view.slices["imu_gyro"]], [0, 0, 2], atol=1e-15)  # site frame = body
    np.testing.assert_allclose(batch[0, view.slices["imu_pos"]], [0.3, 0.2, 1.0], atol=1e-15)
    np.testing.assert_allclose(batch[0, view.slices["imu_vel"]], [0, -1, 0], atol=1e-15)  # R^T (1,0,0)
    # The legs do not move the root, so the root is in free fall: proper acceleration 0.
    np.testing.assert_allclose(batch[0, view.slices["imu_acc"]], 0.0, atol=1e-9)


def test_accelerometer_reads_minus_gravity_when_supported(quad):
    """A vertical force M g on the base cancels gravity: a = 0, so the sensor reads -g = (0, 0, +g)."""
    mass = quad.get_body_mass().sum()
    force = np.zeros((3, 1, 3))
    force[:, 0, 2] = mass * G
    quad.apply_body_force(np.array([quad.base_body_id]), force)
    quad.step(np.zeros((3, 12)))
    np.testing.assert_allclose(quad.get_sensor_data("imu_acc"), np.tile([0, 0, G], (3, 1)), atol=1e-9)


def test_default_dof_pos_and_keyframe_round_trip():
    plain = make("quadruped", 2)
    np.testing.assert_array_equal(plain.get_default_dof_pos(), np.zeros(12))
    home = FakeBackend(SceneCfg(str(SCENES["quadruped"]), default_keyframe="home"), 2, 0.002, np_dtype=np.float64)
    np.testing.assert_array_equal(home.get_default_dof_pos(), HOME_LEG * 4)
    key = home.get_keyframe_qpos("home")
    np.testing.assert_array_equal(key[:7], [0, 0, 0.2848, 1, 0, 0, 0])
    home.set_state(np.array([1]), key[None], np.zeros((1, home.nv)))
    np.testing.assert_array_equal(home.get_qpos()[1], key)
    np.testing.assert_array_equal(home.get_dof_pos()[1], HOME_LEG * 4)
    with pytest.raises(UnknownNameError, match="unknown keyframe 'crouch'"):
        home.get_keyframe_qpos("crouch")


def test_root_state_layout(free_body, arm):
    lay = free_body.get_root_state_layout("box")
    assert (lay.body_name, lay.joint_name, lay.qpos_start, lay.qvel_start) == ("box", "root", 0, 0)
    assert lay.quat_slice == slice(3, 7) and lay.ang_vel_slice == slice(3, 6)
    with pytest.raises(InvalidInputError, match="no free joint"):
        arm.get_root_state_layout("base_link")
    with pytest.raises(UnknownNameError, match="unknown body 'nope'"):
        arm.get_root_state_layout("nope")


def test_joint_index_helpers_agree_with_names(quad):
    names = ["FL_calf_joint", "RR_hip_joint", "FR_thigh_joint"]
    np.testing.assert_array_equal(quad.get_joint_dof_pos_indices(names), [2, 9, 4])
    np.testing.assert_array_equal(quad.get_joint_dof_vel_indices(names), [2, 9, 4])
    np.testing.assert_array_equal(quad.get_joint_dof_indices(names), [2, 9, 4])
    np.testing.assert_array_equal(quad.get_joint_state_qpos_indices(names), [9, 16, 11])
    np.testing.assert_array_equal(quad.get_joint_state_qvel_indices(names), [8, 15, 10])
    qpos, qvel = quad.get_qpos(), quad.get_qvel()
    qpos[:, 7:] = np.arange(12) * 0.01
    qvel[:, 6:] = np.arange(12) * 0.1
    quad.set_state(np.arange(3), qpos, qvel)
    cols = quad.get_joint_dof_pos_indices(names)
    np.testing.assert_array_equal(quad.get_dof_pos()[:, cols], qpos[:, quad.get_joint_state_qpos_indices(names)])
    np.testing.assert_array_equal(quad.get_dof_vel()[:, cols], qvel[:, quad.get_joint_state_qvel_indices(names)])
    with pytest.raises(InvalidInputError, match="'root' is a free joint"):
        quad.get_joint_dof_pos_indices(["root"])


def test_actuator_names_joint_names_and_subtree(quad, arm):
    legs = [f"{leg}_{j}" for leg in ("FL", "FR", "RL", "RR") for j in ("hip", "thigh", "calf")]
    assert quad.get_actuator_names() == tuple(f"{n}_act" for n in legs)
    assert quad.get_actuator_joint_names() == tuple(f"{n}_joint" for n in legs)
    assert arm.get_actuator_joint_names() == ("shoulder_yaw", "shoulder_pitch", "elbow", "wrist")
    hip = int(quad.get_body_ids(["FL_hip"])[0])
    np.testing.assert_array_equal(quad.get_body_subtree_ids(hip), quad.get_body_ids(["FL_hip", "FL_thigh", "FL_calf"]))
    assert len(quad.get_body_subtree_ids(0)) == quad.num_bodies == 14  # world, base, 4 legs x 3


def test_model_tables():
    b = make("quadruped", 2, np_dtype=np.float32)
    info = b.model_info
    assert (b.nq, b.nv, b.num_actuators, b.num_dof, b.num_dof_vel) == (19, 18, 12, 12, 12)
    ranges = b.get_actuator_ctrl_range()
    assert ranges.shape == (12, 2) and ranges.dtype == np.float32
    np.testing.assert_array_equal(ranges[:3], np.array([[-0.8, 0.8], [-1.5, 3.4], [-2.7, -0.9]], np.float32))
    np.testing.assert_array_equal(b.get_joint_range(), ranges)  # ctrlrange == joint range in this scene
    kp, kd = b.get_actuator_gains()
    np.testing.assert_array_equal(kp, 60.0)
    np.testing.assert_array_equal(kd, 2.0)
    assert b.get_body_mass().shape == (14,) and b.get_body_mass().sum() == pytest.approx(12.6, rel=1e-6)
    assert b.get_body_ipos().shape == (14, 3)
    assert b.get_gravity().tolist() == pytest.approx([0, 0, -G])
    ngeom = len(b.get_geom_names())
    assert b.get_geom_friction().shape == (ngeom, 3) and b.get_geom_solref().shape == (ngeom, 2)
    assert b.get_geom_solimp().shape == (ngeom, 5) and b.get_geom_body_ids().shape == (ngeom,)
    foot = np.array([0.02, 0, 0], np.float32)  # size from the "foot" default class
    np.testing.assert_array_equal(b.get_geom_size("FL_foot_geom"), foot)
    contype, conaff = b.get_geom_contact_masks()
    assert contype[b.get_geom_id("FL_foot_geom")] == 1 and contype[b.get_geom_id("FL_thigh_geom")] == 0
    np.testing.assert_array_equal(info.dof_damping[6:], 0.5)
    assert b.get_init_qvel().shape == (18,) and b.get_default_qpos().shape == (19,)
    assert b.get_body_ids(["base"]).dtype == np.int32 and b.base_body_id == 1
    assert b.get_qpos().dtype == np.float32 and b.get_body_pos_w(np.array([1])).dtype == np.float32


def test_fixed_base_getters_and_forward_kinematics(arm):
    """fixed_arm closed form: ee_x = 0.4 sin a + 0.3 sin b + 0.1 sin c, ee_z = 0.1 + 0.4 cos a + ..."""
    q = np.array([[0.0, 0.3, -0.5, 0.9]])
    arm.set_state(np.array([1]), q, np.zeros((1, 4)))
    a, b_, c = 0.3, -0.2, 0.7
    ee = [0.4 * np.sin(a) + 0.3 * np.sin(b_) + 0.1 * np.sin(c), 0.0,
          0.1 + 0.4 * np.cos(a) + 0.3 * np.cos(b_) + 0.1 * np.cos(c)]
    np.testing.assert_allclose(arm.get_sensor_data("ee_pos")[1], ee, atol=1e-14)
    assert arm.base_body_id == 1
    np.testing.assert_array_equal(arm.get_base_pos(), 0.0)
    np.testing.assert_array_equal(arm.get_base_quat()[:, 0], 1.0)
    np.testing.assert_array_equal(arm.get_sensor_data("elbow_pos")[:, 0], [0.0, -0.5, 0.0])


def test_site_jacobian_matches_finite_differences_and_velocity(arm):
    site = int(arm.get_site_ids(["ee"])[0])
    q0 = np.array([0.4, 0.3, -0.5, 0.9])
    arm.set_state(np.arange(3), np.tile(q0, (3, 1)), np.zeros((3, 4)))
    jacp, jacr = arm.get_site_jacobian_w(site, np.arange(4))
    assert jacp.shape == jacr.shape == (3, 3, 4)
    sub_p, sub_r = arm.get_site_jacobian_w(site, np.array([3, 1]))
    np.testing.assert_array_equal(sub_p, jacp[:, :, [3, 1]])
    np.testing.assert_array_equal(sub_r, jacr[:, :, [3, 1]])
    eps = 1e-6
    for k in range(4):
        qs = np.tile(q0, (2, 1))
        qs[0, k] += eps
        qs[1, k] -= eps
        arm.set_state(np.array([0, 1]), qs, np.zeros((2, 4)))
        p = arm.get_sensor_data("ee_pos")
        np.testing.assert_allclose((p[0] - p[1]) / (2 * eps), jacp[2, :, k], atol=1e-8)
    np.testing.assert_allclose(jacr[2, :, 0], [0, 0, 1], atol=1e-15)  # shoulder_yaw axis


def test_free_root_jacobian_times_qvel_is_site_velocity(quad):
    qvel = np.random.default_rng(0).normal(size=(3, 18))
    quad.set_state(np.arange(3), quad.get_qpos(), qvel)
    site = int(quad.get_site_ids(["FL_foot"])[0])
    jacp, jacr = quad.get_site_jacobian_w(site, np.arange(18))
    calf = quad.get_body_ids(["FL_calf"])
    ang = quad.get_body_ang_vel_w(calf)[:, 0]
    calf_quat = quad.get_body_quat_w(calf)[:, 0]  # site at (0, 0, -0.213) in FL_calf
    r = quat_apply(calf_quat, np.array([0.0, 0.0, -0.213]))
    v_site = quad.get_body_lin_vel_w(calf)[:, 0] + np.cross(ang, r)
    np.testing.assert_allclose(np.einsum("nij,nj->ni", jacp, qvel), v_site, atol=1e-12)
    np.testing.assert_allclose(np.einsum("nij,nj->ni", jacr, qvel), ang, atol=1e-12)


def test_frame_sensors_on_bodies_and_joint_velocity(tmp_path):
    """objtype xbody = body frame, body = inertial frame (MuJoCo semantics); jointvel = q̇."""
    path = write_scene(tmp_path, '''
      <compiler angle="radian"/>
      <worldbody>
        <body name="b" pos="1 0 0">
          <joint name="j" type="hinge" axis="0 0 1"/>
          <inertial pos="0.5 0 0" quat="0.7071068 0 0 0.7071068" mass="1" diaginertia="1 1 1"/>
        </body>
      </worldbody>
      <sensor>
        <framepos name="xb" objtype="xbody" objname="b"/>
        <framepos name="com" objtype="body" objname="b"/>
        <framequat name="iq" objtype="body" objname="b"/>
        <jointvel name="jv" joint="j"/>
      </sensor>''')
    b = make(path, 1)
    b.set_state([0], [[np.pi / 2]], [[0.25]])
    np.testing.assert_allclose(b.get_sensor_data("xb")[0], [1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(b.get_sensor_data("com")[0], [1, 0.5, 0], atol=1e-7)  # rotated 90° about z
    np.testing.assert_allclose(b.get_sensor_data("iq")[0], [0, 0, 0, 1], atol=1e-7)  # 90° ⊗ 90° about z
    np.testing.assert_array_equal(b.get_sensor_data("jv"), [[0.25]])
