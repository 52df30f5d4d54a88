"""Forces, sensors, snapshots, Jacobians, height scans: closed forms and MuJoCo references."""

from __future__ import annotations

import numpy as np
import pytest
from motrix_testutil import home_state, scene_path

from unisim_core import TerrainCfg
from unisim_core.contract.errors import InvalidInputError

G = 9.81


def test_force_gives_a_equals_f_over_m_held_over_substeps_then_cleared(make):
    """free_body: m = 2 kg. F = 4 N world x for one step of 5 substeps -> v_x = F/m * 5 dt = 0.02 m/s,
    the same for a yawed body (world frame); afterwards the force is gone (v_x stays)."""
    b = make("free_body.xml", 2)
    q, v = home_state(b)
    q[1, 3:7] = [np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)]
    b.set_state(np.arange(2), q, v)
    f = np.zeros((2, 1, 3))
    f[:, 0, 0] = 4.0
    b.apply_body_force(np.array([1]), f)
    b.step(np.zeros((2, 0)), 5)
    np.testing.assert_allclose(b.get_base_lin_vel()[:, 0], 0.02, rtol=1e-5)
    np.testing.assert_allclose(b.get_base_lin_vel()[:, 2], -G * 5 * 0.002, rtol=1e-5)
    b.step(np.zeros((2, 0)), 5)
    np.testing.assert_allclose(b.get_base_lin_vel()[:, 0], 0.02, rtol=1e-5)


def test_torque_world_frame_gives_alpha_equals_t_over_i(make):
    """World torque 0.25 N m about z, Izz = 0.25 -> w_z = 1 rad/s^2 * 10 dt = 0.02 rad/s."""
    b = make("free_body.xml", 1)
    t = np.zeros((1, 1, 3))
    t[0, 0, 2] = 0.25
    b.apply_body_force(np.array([1]), np.zeros((1, 1, 3)), t)
    b.step(np.zeros((1, 0)), 10)
    np.testing.assert_allclose(b.get_base_ang_vel()[0], [0, 0, 0.02], atol=1e-6)


def test_force_acts_at_body_origin_not_com(tmp_path):
    """COM 0.5 m along x from the origin; F_y = 2 N at the origin -> torque -1 N m about z."""
    from unisim_core import SceneCfg
    from unisim_motrix import MotrixBackend

    xml = tmp_path / "com.xml"
    xml.write_text("""<mujoco><option gravity="0 0 0"/><worldbody><body name="b" pos="0 0 1"><freejoint/>
      <inertial pos="0.5 0 0" mass="2" diaginertia="0.1 0.2 0.3"/><geom type="sphere" size="0.1" mass="0"/>
      </body></worldbody></mujoco>""")
    with MotrixBackend(SceneCfg(str(xml)), 1, 0.002) as b:
        f = np.array([[[0, 2.0, 0]]])
        b.apply_body_force(np.array([1]), f)
        b.step(np.zeros((1, 0)), 1)
        assert b.get_qvel()[0, 5] == pytest.approx(-1 / 0.3 * 0.002, rel=1e-4)


def test_push_robots_and_world_body_rejected(make):
    b = make("free_body.xml", 3, seed=1)
    drawn = b.push_robots([-10, 10])
    b.step(np.zeros((3, 0)), 1)
    np.testing.assert_allclose(b.get_base_lin_vel()[:, :2], drawn[:, :2] / 2 * 0.002, rtol=1e-4)
    with pytest.raises(InvalidInputError, match="world"):
        b.apply_body_force(np.array([0]), np.zeros((3, 1, 3)))


def test_sensors_in_mujoco_order_with_mujoco_values(make):
    """Quadruped sensors: MuJoCo order; position/orientation sensors equal MuJoCo's after mj_forward."""
    mujoco = pytest.importorskip("mujoco")
    m = mujoco.MjModel.from_xml_path(scene_path("quadruped.xml"))
    d = mujoco.MjData(m)
    b = make("quadruped.xml", 2, keyframe="home")
    assert b.model_info.sensor_names == ("imu_gyro", "imu_acc", "imu_quat", "imu_pos", "imu_vel")
    q, v = home_state(b)
    q[:, 3:7] = [np.cos(0.3), 0.0, np.sin(0.3) * 0.6, np.sin(0.3) * 0.8]
    q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=1, keepdims=True)
    b.set_state(np.arange(2), q, v)
    d.qpos[:] = q[0]
    mujoco.mj_forward(m, d)
    for name in ("imu_quat", "imu_pos"):
        adr, dim = m.sensor(name).adr[0], m.sensor(name).dim[0]
        np.testing.assert_allclose(b.get_sensor_data(name)[0], d.sensordata[adr:adr + dim], atol=1e-5)
    batch = b.get_sensor_data_batch(["imu_pos", "imu_quat"])
    np.testing.assert_allclose(batch[:, 3:], b.get_sensor_data("imu_quat"))
    # at rest on the floor, the accelerometer reads +g (proper acceleration) after a step
    b.set_state(np.arange(2), *home_state(b))
    for _ in range(200):
        b.step(np.tile(b.get_default_dof_pos(), (2, 1)), 5)
    np.testing.assert_allclose(np.linalg.norm(b.get_sensor_data("imu_acc"), axis=1), G, rtol=0.02)


def test_body_sensors_option(make):
    b = make("free_body.xml", 2, add_body_sensors=True)
    assert b.model_info.sensor_names == ("box_pos", "box_quat", "box_body_pos", "box_body_quat",
                                         "box_body_linvel", "box_body_angvel")
    q, v = home_state(b)
    q[:, 3:7] = [np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)]
    v[:, :6] = [1, 2, 3, 0, 0, 0.5]
    b.set_state(np.arange(2), q, v)
    np.testing.assert_allclose(b.get_sensor_data("box_body_pos"), [[0, 0, 1]] * 2, atol=1e-6)
    np.testing.assert_allclose(b.get_sensor_data("box_body_quat"), q[:, 3:7], atol=1e-6)
    np.testing.assert_allclose(b.get_sensor_data("box_body_linvel"), [[1, 2, 3]] * 2, atol=1e-6)
    np.testing.assert_allclose(b.get_sensor_data("box_body_angvel"), [[0, 0, 0.5]] * 2, atol=1e-6)


def test_snapshot_state_tier_the_warm_start_is_not_restored(make):
    """PHYSICS_SNAPSHOT at tier "state": a restored row reads back bit for bit (qpos, qvel, bodies,
    sensors: an accelerometer is computed by a step only, so the row's reads are remembered), but
    MotrixSim keeps its contact-solver warm start (not exposed), so stepping on after a restore does
    not reproduce a contact trajectory bit for bit (within 1e-3 here); without contacts it does."""
    b = make("quadruped.xml", 2, keyframe="home")
    assert b.snapshot_tier == "state"
    b.set_state(np.arange(2), *home_state(b))
    ctrl = np.tile(b.get_default_dof_pos(), (2, 1))
    b.step(ctrl, 10)
    snap = b.get_physics_state()
    ids = np.arange(b.num_bodies)
    reads = (b.get_qpos(), b.get_body_lin_vel_w(ids), b.get_sensor_data("imu_acc"))
    np.testing.assert_allclose(snap[:, 0], 10 * b.sim_dt, rtol=1e-12)
    b.step(ctrl, 10)
    first = b.get_qpos()
    b.set_physics_state(snap)
    for before, after in zip(reads, (b.get_qpos(), b.get_body_lin_vel_w(ids), b.get_sensor_data("imu_acc"))):
        assert np.array_equal(before, after)
    assert np.any(reads[2] != 0.0)  # the accelerometer of the row, not the 0 a state write leaves
    b.step(ctrl, 10)
    assert not np.array_equal(b.get_qpos(), first)
    np.testing.assert_allclose(b.get_qpos(), first, atol=1e-3)
    p = make("double_pendulum.xml", 2)
    q, v = home_state(p)
    q[:, 0] = 0.7
    p.set_state(np.arange(2), q, v)
    snap = p.get_physics_state()
    p.step(np.zeros((2, 0)), 50)
    first = p.get_qpos()
    p.set_physics_state(snap)
    p.step(np.zeros((2, 0)), 50)
    assert np.array_equal(p.get_qpos(), first)


def test_site_jacobian_matches_finite_differences(make):
    """fixed_arm site ee: jacp ~ d(site pos)/dq by central differences (float32 state: eps 1e-3, tol 2e-3);
    jacr columns of y-axis hinges are (0, 1, 0) and of the z-axis hinge (0, 0, 1)."""
    b = make("fixed_arm.xml", 1, np_dtype=np.float64)
    q0 = np.array([[0.2, 0.3, -0.5, 0.4]])
    site = int(b.get_site_ids(["ee"])[0])
    body = np.array([b.model_info.site_body[site]])
    b.set_state(np.array([0]), q0, np.zeros((1, 4)))
    jacp, jacr = b.get_site_jacobian_w(site, np.arange(4))
    np.testing.assert_allclose(b.get_site_jacobian_w(site, np.array([3, 1]))[0][0], jacp[0][:, [3, 1]])
    eps = 1e-3
    fd = np.zeros((3, 4))
    site_pos = lambda: _site_pos(b, site, body)  # noqa: E731
    for k in range(4):
        for sgn in (1, -1):
            q = q0.copy()
            q[0, k] += sgn * eps
            b.set_state(np.array([0]), q, np.zeros((1, 4)))
            fd[:, k] += sgn * site_pos() / (2 * eps)
    np.testing.assert_allclose(jacp[0], fd, atol=2e-3)
    z = np.array([0, 0, 1.0])
    np.testing.assert_allclose(jacr[0][:, 0], z, atol=1e-6)


def _site_pos(b, site, body):
    from unisim_core.contract import quat as Q

    local = np.asarray(b.model.sites[site].local_pos, np.float64)
    pos, quat = b.get_body_pose_w(body)
    return (pos[0, 0] + Q.quat_apply(quat[0, 0][None], local[None])[0]).astype(np.float64)


def test_height_scan_known_heights(make):
    """hfield_terrain: h(x) = 0.2 (x + 2) for x <= 0, 0.4 for x >= 0; ball at (1, 0, z)."""
    b = make("hfield_terrain.xml", 2)
    q, v = home_state(b)
    q[1, 3:7] = [0, 0, 0, 1]  # env 1 yawed 180 deg
    b.set_state(np.arange(2), q, v)
    gid = b.get_geom_id("terrain")
    ball = int(b.get_body_ids(["ball"])[0])
    offsets = np.array([[-2.0, 0], [-3.0, 0], [0.0, 0], [-1.5, 0.5]])
    world = b.create_hfield_scanner(hfield_geom_id=gid, offsets=offsets, frame_body_id=ball, alignment="world")
    np.testing.assert_allclose(world.scan(), [[0.2, 0.0, 0.4, 0.3]] * 2, atol=1e-5)
    yaw = b.create_hfield_scanner(hfield_geom_id=gid, offsets=np.array([[2.0, 0.0], [-2.0, 0]]),
                                  frame_body_id=ball, alignment="yaw")
    np.testing.assert_allclose(yaw.scan(), [[0.4, 0.2], [0.2, 0.4]], atol=1e-5)
    dist = b.create_hfield_scanner(hfield_geom_id=gid, offsets=np.zeros((1, 2)), frame_body_id=ball,
                                   alignment="full", output="distance")
    np.testing.assert_allclose(dist.scan()[:, 0], b.get_base_pos()[:, 2] - 0.4, atol=1e-5)
    with pytest.raises(InvalidInputError, match="hfield"):
        b.create_hfield_scanner(hfield_geom_id=gid + 1, offsets=offsets, frame_body_id=ball)


def test_terrain_spawn_data(tmp_path):
    from unisim_core import SceneCfg
    from unisim_motrix import MotrixBackend

    scene = SceneCfg(scene_path("hfield_terrain.xml"), terrain=TerrainCfg(hfield_geom="terrain", rows=1, cols=3,
                                                                          spacing=1.0))
    with MotrixBackend(scene, 1, 0.002) as b:
        t = b.get_terrain_spawn_data()
        np.testing.assert_allclose(t.origins, [[-1, 0, 0.2], [0, 0, 0.4], [1, 0, 0.4]], atol=1e-5)
        np.testing.assert_allclose(t.sample_height(np.array([[[-2.0, 0.0]], [[-0.5, 1.0]]])), [[0.0], [0.3]],
                                   atol=1e-5)
        assert t.size == (2.0, 2.0, 0.4, 0.1)


def test_pre_step_control_called_every_substep(make):
    b = make("fixed_arm.xml", 2)
    calls = []
    b.set_pre_step_control(lambda be, c: (calls.append(1), c)[1])
    b.step(np.zeros((2, 4)), 4)
    assert len(calls) == 4


def test_getters_do_not_perturb_dynamics(make):
    """Reads run forward kinematics lazily; that must not change the trajectory."""
    a, c = make("quadruped.xml", 1, keyframe="home"), make("quadruped.xml", 1, keyframe="home")
    for b in (a, c):
        b.set_state(np.array([0]), *home_state(b))
    ctrl = np.tile(a.get_default_dof_pos(), (1, 1))
    for _ in range(20):
        a.step(ctrl, 2)
        a.get_body_pos_w(np.arange(a.num_bodies))
        a.get_sensor_data("imu_pos")
        c.step(ctrl, 2)
    assert np.array_equal(a.get_qpos(), c.get_qpos())


def test_contact_torque_is_the_reports_moment_about_the_com(tmp_path):
    """A 1 kg box (half-size 0.1) at (1, 2) with its COM 3 cm off the link origin, 2 envs, pushed
    along +x at its bottom face (4.5 N at the origin, which lies at the COM's height, plus
    (0, -0.45, 0) N m) in env 0 only: static friction 0.1 m below the COM, so the contact torque
    about the COM is (0, +0.45, 0) N m in env 0 and (0, 0, 0) at rest in env 1. The report's
    moment about the COM reaches the contract unchanged through the fill's moment about the world
    origin (the box is 2.2 m from it: a wrong origin or COM would show as metres x newtons)."""
    import warnings

    from unisim_core import SceneCfg
    from unisim_motrix import MotrixBackend, MotrixModellingWarning

    xml = tmp_path / "box.xml"
    xml.write_text("""<mujoco><option timestep="0.002"/><worldbody>
      <geom name="floor" type="plane" size="5 5 0.1" friction="0.5 0.005 0.0001" condim="3"/>
      <body name="box" pos="1 2 0.1"><freejoint/>
        <inertial pos="0.03 0 0" mass="1" diaginertia="0.0066667 0.0066667 0.0066667"/>
        <geom type="box" size="0.1 0.1 0.1" friction="0.5 0.005 0.0001" condim="3" mass="0"/></body>
    </worldbody></mujoco>""")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MotrixModellingWarning)
        b = MotrixBackend(SceneCfg(str(xml)), 2, 0.002)
    try:
        c = b.bind_contact_forces(["box"], torques=True)
        b.step(np.zeros((2, 0)), 25)
        samples = []
        for i in range(38):
            b.apply_body_force(np.array([1]), np.array([[[4.5, 0, 0]], [[0, 0, 0]]]),
                               np.array([[[0, -0.45, 0]], [[0, 0, 0]]]))
            b.step(np.zeros((2, 0)), 2)
            if i >= 19 and i % 2:
                samples.append(c.read_torque()[:, 0].astype(np.float64))
                np.testing.assert_allclose(samples[-1], c._fill._buf[:, 0, 3:], atol=2e-5)  # the report's own
        np.testing.assert_allclose(np.mean(samples, axis=0), [[0, 0.45, 0], [0, 0, 0]], atol=0.005)
    finally:
        b.close()


AGC_ARM = """<mujoco><compiler angle="radian"/><worldbody><body name="arm" pos="0 0 1" gravcomp="1">
  <joint name="j" axis="0 1 0" actuatorfrcrange="-1 1" actuatorgravcomp="true"/>
  <inertial pos="0.25 0 0" mass="1" diaginertia="0.001 0.02 0.02"/></body></worldbody>
  <actuator><motor name="m" joint="j"/></actuator></mujoco>"""


def test_gravcomp_scales_each_bodys_gravity_as_mujoco_and_actuatorgravcomp_is_refused(make, tmp_path):
    """Kit scene gravcomp (gravcomp 1, 0.5, 2 on free bodies, 1 and 0.5 on hinge arms): MotrixSim honours
    gravcomp; after 100 steps (0.2 s) the state equals MuJoCo's: "sink" at z = 1 - g/2 dt^2 n(n+1)/2 =
    0.9009 m, "rise" 1.198 m, arm_half 0.29935 rad (measured to 1e-6). actuatorgravcomp (the
    compensation through the actuator, clamped by actuatorfrcrange: MuJoCo's arm falls to 0.353 rad)
    MotrixSim applies as passive force (the arm stays at 0): refused as joint_actuatorgravcomp."""
    import mujoco

    from unisim_core import SceneCfg, UnsupportedCapabilityError
    from unisim_motrix import MotrixBackend

    b = make("gravcomp.xml", 2)
    b.step(np.zeros((2, 0)), 100)
    m = mujoco.MjModel.from_xml_path(scene_path("gravcomp.xml"))
    d = mujoco.MjData(m)
    mujoco.mj_step(m, d, 100)
    np.testing.assert_allclose(b.get_qpos(), np.tile(d.qpos, (2, 1)), atol=1e-5)
    assert d.qpos[[2, 9, 16]] == pytest.approx([1.0, 1.0 - 0.5 * G * 0.002 ** 2 * 100 * 101 / 2,
                                                1.0 + G * 0.002 ** 2 * 100 * 101 / 2])
    path = tmp_path / "agc.xml"
    path.write_text(AGC_ARM)
    with pytest.raises(UnsupportedCapabilityError) as info:
        MotrixBackend(SceneCfg(str(path)), 1, 0.002)
    assert info.value.capability == "joint_actuatorgravcomp"
    assert "attribute 'actuatorgravcomp' of <joint> 'j' is not supported by motrix" in str(info.value)
