"""ModelInfo from mjModel, external wrenches (F = m a), sensors, Jacobians."""

from __future__ import annotations

import numpy as np
import pytest
from mujoco_testutil import QUADRUPED, home_ctrl, kit

import unisim_core
from unisim_core.contract.capabilities import Capability


def test_model_info_quadruped(make):
    sim = make(QUADRUPED)
    info = sim.model_info
    assert info.joint_types[0] == "free" and set(info.joint_types[1:]) == {"hinge"}
    assert info.geom_types[:3] == ("plane", "box", "cylinder")
    assert sim.get_actuator_joint_names()[:3] == ("FL_hip_joint", "FL_thigh_joint", "FL_calf_joint")
    np.testing.assert_allclose(sim.get_actuator_gains()[0], 60)
    np.testing.assert_allclose(sim.get_actuator_gains()[1], 2)
    np.testing.assert_allclose(sim.get_actuator_ctrl_range()[0], [-0.8, 0.8])
    np.testing.assert_allclose(sim.get_joint_range()[1], [-1.5, 3.4])
    assert info.joint_range[0].tolist() == [-np.inf, np.inf]  # the free joint is unlimited
    np.testing.assert_allclose(sim.get_body_mass().sum(), 12.6)
    np.testing.assert_allclose(sim.get_keyframe_qpos("home")[7:10], [0, 0.9, -1.8])
    assert info.sensor_names == ("imu_gyro", "imu_acc", "imu_quat", "imu_pos", "imu_vel")
    assert info.sensor_dims.tolist() == [3, 3, 4, 3, 3]
    assert sim.base_body_id == 1


def test_model_info_unlimited_motor_and_mocap(make, tmp_path):
    xml = tmp_path / "m.xml"
    xml.write_text("""<mujoco><worldbody>
      <body name="target" mocap="true" pos="0 0 1"><geom size="0.05" contype="0" conaffinity="0"/></body>
      <body name="arm"><joint name="j" type="slide" axis="1 0 0"/><geom size="0.1" mass="1"/></body>
    </worldbody><actuator><motor name="m" joint="j"/></actuator></mujoco>""")
    sim = make(xml)
    info = sim.model_info
    assert info.mocap_body_names == ("target",)
    assert sim.get_actuator_ctrl_range().tolist() == [[-np.inf, np.inf]]
    assert info.joint_types == ("slide",) and info.actuator_joint.tolist() == [0]
    assert sim.get_actuator_gains()[0].tolist() == [0.0]


def test_force_gives_f_over_m(make):
    # No gravity term in x: a_x = F/m exactly (free body m = 2 kg), for one step of 4 substeps.
    sim = make(kit("free_body.xml"), num_envs=2)
    body = np.array([1])
    f = np.zeros((2, 1, 3))
    f[:, 0, 0] = [4.0, 10.0]
    sim.apply_body_force(body, f)
    sim.step(np.zeros((2, 0)), 4)
    np.testing.assert_allclose(sim.get_base_lin_vel()[:, 0], f[:, 0, 0] / 2.0 * 4 * 0.002, rtol=1e-12)
    sim.step(np.zeros((2, 0)), 4)  # cleared after one step
    np.testing.assert_allclose(sim.get_base_lin_vel()[:, 0], f[:, 0, 0] / 2.0 * 4 * 0.002, rtol=1e-12)


def test_force_acts_at_body_origin_not_com(make, tmp_path):
    # COM c = (0.5, 0, 0) in the body frame. A force F_z at the ORIGIN p equals F at the COM
    # plus the torque (p - c) x F = (-0.5, 0, 0) x (0, 0, F) = (0, 0.5 F, 0): with I_yy = 0.2,
    # one Euler step of dt gives w_y = 0.5 F / 0.2 * dt and v_com = F / m * dt.
    xml = tmp_path / "off.xml"
    xml.write_text("""<mujoco><option gravity="0 0 0" integrator="Euler"/><worldbody>
      <body name="b"><freejoint/><inertial pos="0.5 0 0" mass="2" diaginertia="0.1 0.2 0.3"/>
      <geom size="0.1" contype="0" conaffinity="0" mass="0"/></body></worldbody></mujoco>""")
    sim = make(xml, sim_dt=1e-4)
    F = 3.0
    sim.apply_body_force(np.array([1]), np.array([[[0.0, 0.0, F]]]))
    sim.step(np.zeros((1, 0)), 1)
    w = sim.get_body_ang_vel_w(np.array([1]))[0, 0]
    np.testing.assert_allclose(w, [0, 0.5 * F / 0.2 * 1e-4, 0], rtol=1e-9, atol=1e-15)
    # COM velocity = F/m dt; the origin moves with v_com + w x (p - c)
    v_origin = sim.get_body_lin_vel_w(np.array([1]))[0, 0]
    v_com = np.array([0, 0, F / 2 * 1e-4])
    np.testing.assert_allclose(v_origin, v_com + np.cross(w, [-0.5, 0, 0]), rtol=1e-9, atol=1e-15)


def test_torque_gives_alpha(make):
    sim = make(kit("free_body.xml"))
    t = np.array([[[0.0, 0.0, 0.6]]])
    sim.apply_body_force(np.array([1]), np.zeros((1, 1, 3)), t)
    sim.step(np.zeros((1, 0)), 1)
    np.testing.assert_allclose(sim.get_base_ang_vel()[0], [0, 0, 0.6 / 0.25 * 0.002], rtol=1e-9)


def test_push_robots_moves_base(make):
    sim = make(kit("free_body.xml"), num_envs=3, seed=3)
    forces = sim.push_robots([5.0, 10.0])
    sim.step(np.zeros((3, 0)), 1)
    np.testing.assert_allclose(sim.get_base_lin_vel()[:, :2], forces[:, :2] / 2 * 0.002, rtol=1e-9)


def test_sensors(make):
    sim = make(QUADRUPED, num_envs=2, scene_kwargs={"default_keyframe": "home"})
    np.testing.assert_allclose(sim.get_sensor_data("imu_pos")[0], [0, 0, 0.2848], atol=1e-12)
    np.testing.assert_allclose(sim.get_sensor_data("imu_quat")[0], [1, 0, 0, 0], atol=1e-12)
    batch = sim.get_sensor_data_batch(["imu_quat", "imu_gyro"])
    assert batch.shape == (2, 7)
    np.testing.assert_array_equal(batch[:, :4], sim.get_sensor_data("imu_quat"))
    view = sim.bind_sensor_data(["imu_pos", "imu_vel"])
    np.testing.assert_array_equal(view.read()[:, view.slices["imu_vel"]], sim.get_sensor_data("imu_vel"))


def test_site_jacobian_fixed_arm(make):
    # d ee_x / d q2 = 0.4 cos a + 0.3 cos b + 0.1 cos c with a = q2, b = q2+q3, c = b+q4 (SCENES.md)
    sim = make(kit("fixed_arm.xml"), num_envs=2)
    q = np.array([[0, 0.3, -0.4, 0.2], [0, -0.2, 0.5, 0.1]])
    sim.set_state(np.arange(2), q, np.zeros((2, 4)))
    site = int(sim.get_site_ids(["ee"])[0])
    jacp, jacr = sim.get_site_jacobian_w(site, np.array([1, 2, 3]))
    a, b = q[:, 1], q[:, 1] + q[:, 2]
    c = b + q[:, 3]
    np.testing.assert_allclose(jacp[:, 0, 0], 0.4 * np.cos(a) + 0.3 * np.cos(b) + 0.1 * np.cos(c), atol=1e-12)
    np.testing.assert_allclose(jacp[:, 0, 2], 0.1 * np.cos(c), atol=1e-12)
    np.testing.assert_allclose(jacr[:, 1], 1.0, atol=1e-12)  # pitch joints rotate about world y


def test_entry_point_and_capabilities():
    cls = unisim_core.get_backend_class("mujoco")
    assert cls.__name__ == "MujocoBackend"
    assert Capability.RENDER not in cls.CAPABILITIES  # no interactive window
    assert {Capability.VIDEO_CAPTURE, Capability.PLAYBACK, Capability.MOCAP} <= cls.CAPABILITIES


def test_render_is_unsupported(make):
    sim = make(QUADRUPED)
    with pytest.raises(NotImplementedError, match="render"):
        sim.render()


def test_contact_torques_are_mujocos_cfrc_ext(make):
    """The quadruped under random controls (3 envs, 0.3 s): for every body, the contract's contact
    force F and torque about the COM give MuJoCo's own cfrc_ext, [tau_com + (x_com - subtree_com of
    the root) x F, F], computed by mj_forward + mj_rnePostConstraint on each env's state (the
    quadruped's contacts are condim 3, no torsional friction; every body has a joint, so none is
    welded to its parent)."""
    import mujoco

    sim = make(QUADRUPED, 3)
    sim.set_state(np.arange(3), np.tile(sim.get_keyframe_qpos("home"), (3, 1)), np.zeros((3, sim.nv)))
    ids = np.arange(1, sim.num_bodies)
    c = sim.bind_contact_forces(ids, torques=True)
    rng = np.random.default_rng(0)
    d = mujoco.MjData(sim.model)
    contacts = 0
    for _ in range(3):
        sim.step(home_ctrl(sim) + rng.uniform(-0.3, 0.3, (3, sim.num_actuators)), 50)
        f, t = c.read(), c.read_torque()
        com = sim.get_body_pos_w(ids) + unisim_core.contract.quat.quat_apply(sim.get_body_quat_w(ids),
                                                                             sim.get_body_ipos()[ids])
        for i in range(3):
            sim.batch.get_data(i, d)
            mujoco.mj_forward(sim.model, d)
            mujoco.mj_rnePostConstraint(sim.model, d)
            contacts += d.ncon
            centre = d.subtree_com[sim.model.body_rootid[ids]]
            want = d.cfrc_ext[ids]
            np.testing.assert_allclose(f[i], want[:, 3:], rtol=1e-9, atol=1e-9 * np.abs(want).max())
            np.testing.assert_allclose(t[i] + np.cross(com[i] - centre, f[i]), want[:, :3], rtol=1e-9,
                                       atol=1e-9 * np.abs(want).max())
    assert contacts >= 20, contacts



def test_contact_torque_about_a_randomized_com(make, tmp_path):
    """A 1 kg box (half-size 0.1) resting on a plane, 2 envs; env 0's COM moved to (0.03, 0, 0)
    in the box frame by init randomization after binding: the floor's support shifts under the new
    COM, so the torque about the COM stays (0, 0, 0) while the moment about the box's centre
    becomes (0.03, 0, -0.1) x (0, 0, m g) = (0, -0.294, 0) N m; env 1 is unchanged. (The COM
    starts 1 mm off-centre: MuJoCo refuses to move the COM of a body compiled as "simple".)"""
    from unisim_core.contract.randomization import InitRandomizationPlan, RandomizationOp

    xml = tmp_path / "box.xml"
    xml.write_text("""<mujoco><option timestep="0.002"/><worldbody>
      <geom name="floor" type="plane" size="5 5 0.1" friction="0.5"/>
      <body name="box" pos="0 0 0.1"><freejoint/>
        <inertial pos="0.001 0 0" mass="1" diaginertia="0.0067 0.0067 0.0067"/>
        <geom type="box" size="0.1 0.1 0.1" friction="0.5" mass="0"/></body>
    </worldbody></mujoco>""")
    sim = make(xml, 2)
    c = sim.bind_contact_forces(["box"], torques=True)
    sim.step(np.zeros((2, 0)), 50)
    np.testing.assert_allclose(c.read_torque(), 0.0, atol=1e-4)
    sim.apply_init_randomization(InitRandomizationPlan([RandomizationOp(
        term="body_com_offset", values=[[[0.03, 0.0, 0.0]]], env_ids=[0], target_ids=[1])]))
    sim.step(np.zeros((2, 0)), 250)
    t, f = c.read_torque()[:, 0], c.read()[:, 0]
    np.testing.assert_allclose(t, 0.0, atol=1e-4)
    offset = np.array([[0.03, 0.0, 0.0], [0.001, 0.0, 0.0]])  # COM - centre (the box stays upright)
    np.testing.assert_allclose(t + np.cross(offset, f), [[0, -0.03 * 9.81, 0], [0, -0.001 * 9.81, 0]], atol=2e-3)
