"""Stepping, state, getters and snapshots against MuJoCo itself and closed-form answers."""

from __future__ import annotations

import copy

import mujoco
import numpy as np
import pytest
from mujoco_testutil import QUADRUPED, home_ctrl, kit, reference

from unisim_core.contract.errors import EngineError


def _random_states(sim, n, seed):
    rng = np.random.default_rng(seed)
    qpos = np.tile(sim.get_keyframe_qpos("home"), (n, 1))
    qpos[:, 7:] += rng.uniform(-0.2, 0.2, (n, sim.nq - 7))
    qvel = rng.normal(0, 0.3, (n, sim.nv))
    ctrl = home_ctrl(sim)[:n] + rng.uniform(-0.3, 0.3, (n, sim.num_actuators))
    return qpos, qvel, ctrl


def test_batch_env_is_bit_identical_to_the_env_alone(make):
    # Batch promises a loop over one MjData per simulation, at any thread count.
    batch = make(QUADRUPED, num_envs=4, threads=2)
    qpos, qvel, ctrl = _random_states(batch, 4, seed=0)
    batch.set_state(np.arange(4), qpos, qvel)
    for _ in range(50):
        batch.step(ctrl, 1)
    for i in (0, 3):
        alone = make(QUADRUPED, num_envs=1, threads=1)
        alone.set_state(np.array([0]), qpos[i:i + 1], qvel[i:i + 1])
        for _ in range(50):
            alone.step(ctrl[i:i + 1], 1)
        assert np.array_equal(alone.get_qpos()[0], batch.get_qpos()[i])
        assert np.array_equal(alone.get_qvel()[0], batch.get_qvel()[i])


def test_step_matches_plain_mj_step_and_getters_are_current(make):
    # Reference: the file compiled by MuJoCo itself, stepped with mj_step, then mj_forward at the
    # final state. ctrl offsets up to 0.9 rad drive the kp=60 servos past their 33.5 N m forcerange.
    sim = make(QUADRUPED, num_envs=2, add_body_sensors=True)
    qpos, qvel, _ = _random_states(sim, 2, seed=1)
    ctrl = home_ctrl(sim) + np.random.default_rng(1).uniform(-0.9, 0.9, (2, sim.num_actuators))
    sim.set_state(np.arange(2), qpos, qvel)
    sim.step(ctrl, 5)
    m, d = reference(QUADRUPED, sim.sim_dt)
    d.qpos[:], d.qvel[:], d.ctrl[:] = qpos[1], qvel[1], ctrl[1]
    mujoco.mj_forward(m, d)
    for _ in range(5):
        mujoco.mj_step(m, d)
    mujoco.mj_forward(m, d)
    assert np.array_equal(sim.get_qpos()[1], d.qpos)
    ids = np.arange(m.nbody)
    np.testing.assert_array_equal(sim.get_body_pos_w(ids)[1], d.xpos)
    np.testing.assert_array_equal(sim.get_body_quat_w(ids)[1], d.xquat)
    np.testing.assert_array_equal(sim.get_sensor_data("imu_acc")[1], d.sensor("imu_acc").data)
    res = np.zeros(6)
    for b in range(1, m.nbody):  # XBODY: the body frame origin, the contract's point
        mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_XBODY, b, res, 0)
        np.testing.assert_allclose(sim.get_body_lin_vel_w(np.array([b]))[1, 0], res[3:], atol=1e-12)
        np.testing.assert_allclose(sim.get_body_ang_vel_w(np.array([b]))[1, 0], res[:3], atol=1e-12)
    # the added frame sensors of the body frames agree with the getters
    np.testing.assert_allclose(sim.get_sensor_data("FL_calf_linvel")[1],
                               sim.get_body_lin_vel_w(np.array([4]))[1, 0], atol=1e-12)


def test_getters_are_current_whichever_forward_stage_the_step_computed(make):
    # A step computes the forward stages at the new state only when derived fields were read since
    # the previous step; a read after a step that did not must still see the current state. Each read
    # is compared bit for bit with mj_forward on a copy of plain MuJoCo stepped alongside.
    sim = make(QUADRUPED, num_envs=2)
    qpos, qvel, ctrl = _random_states(sim, 2, seed=3)
    sim.set_state(np.arange(2), qpos, qvel)
    m, d = reference(QUADRUPED, sim.sim_dt)
    d.qpos[:], d.qvel[:], d.ctrl[:] = qpos[0], qvel[0], ctrl[0]
    ids = np.arange(m.nbody)
    for read_poses in (False, False, True, True, False, True):
        sim.step(ctrl, 2)
        for _ in range(2):
            mujoco.mj_step(m, d)
        assert np.array_equal(sim.get_qpos()[0], d.qpos)
        if read_poses:
            now = copy.copy(d)
            mujoco.mj_forward(m, now)
            np.testing.assert_array_equal(sim.get_body_pos_w(ids)[0], now.xpos)
            np.testing.assert_array_equal(sim.get_body_quat_w(ids)[0], now.xquat)
            np.testing.assert_array_equal(sim.get_sensor_data("imu_acc")[0], now.sensor("imu_acc").data)
    # a state written while the outputs lag is seen by the next read
    sim.step(ctrl, 1)
    sim.set_state(np.array([0]), qpos[:1], qvel[:1])
    ref = copy.copy(d)
    ref.qpos[:], ref.qvel[:] = qpos[0], qvel[0]
    mujoco.mj_forward(m, ref)
    np.testing.assert_array_equal(sim.get_body_pos_w(ids)[0], ref.xpos)


def test_a_step_of_hooked_substeps_leaves_derived_fields_current_for_the_next_read(make):
    """With a pre-step hook a step is one engine call per substep. Before, the first call took the
    'derived fields were read' flag and the last ran without the forward stages, so the next read of
    a body pose paid a whole extra forward (12 ms a control step for 64 Go1s on a height field). Now
    the step's last call computes them: no forward before the read, and the read equals mj_forward."""
    sim = make(QUADRUPED, num_envs=2)
    qpos, qvel, ctrl = _random_states(sim, 2, seed=5)
    sim.set_state(np.arange(2), qpos, qvel)
    ids = np.arange(sim.num_bodies)
    sim.get_body_pos_w(ids)  # a derived read before the step
    sim.set_pre_step_control(lambda b, c: c)
    m, d = reference(QUADRUPED, sim.sim_dt)
    d.qpos[:], d.qvel[:], d.ctrl[:] = qpos[0], qvel[0], ctrl[0]
    sim.step(ctrl, 4)
    for _ in range(4):
        mujoco.mj_step(m, d)
    assert sim._fresh >= int(mujoco.mjtStage.mjSTAGE_VEL), "the step's last call left the derived fields stale"
    now = copy.copy(d)
    mujoco.mj_forward(m, now)
    np.testing.assert_array_equal(sim.get_body_pos_w(ids)[0], now.xpos)


def test_restore_rows_continue_bit_for_bit_in_another_instance(make):
    # What a rebuilt Ray shard relies on: the rows carry the solver warm start, which the contract's
    # snapshot row lacks (a fresh instance restored from the snapshot differs after a contact).
    a, b = make(QUADRUPED, num_envs=2), make(QUADRUPED, num_envs=2)
    assert a.restore_tier == "exact"
    qpos, qvel, ctrl = _random_states(a, 2, seed=4)
    a.set_state(np.arange(2), qpos, qvel)
    for _ in range(30):  # into contact
        a.step(ctrl, 2)
    b._load_restore_rows(a._restore_rows())
    np.testing.assert_array_equal(b.get_body_pos_w(np.arange(a.num_bodies)), a.get_body_pos_w(np.arange(a.num_bodies)))
    for _ in range(30):
        a.step(ctrl, 2)
        b.step(ctrl, 2)
        assert np.array_equal(a.get_qpos(), b.get_qpos()) and np.array_equal(a.get_qvel(), b.get_qvel())
    np.testing.assert_array_equal(a._restore_rows(np.array([1])), b._restore_rows()[1:])


def test_batch_is_persistent_only_for_models_that_need_it(make, tmp_path):
    # One MjData per thread is cheaper (measured in the module docstring); sleep, IPC and plugins
    # need one MjData per env.
    assert not make(QUADRUPED).batch.persistent
    xml = tmp_path / "sleepy.xml"
    xml.write_text('<mujoco><option><flag sleep="enable"/></option>'
                   '<worldbody><body><freejoint/><geom size=".1"/></body></worldbody></mujoco>')
    assert make(xml).batch.persistent


@pytest.mark.parametrize(("scene", "dt"), [("actuated_hinges.xml", 0.001), ("frictionloss_hinge.xml", 0.001),
                                           ("fixed_arm.xml", 0.002), ("sensor_probe.xml", 0.002)])
def test_actuators_joint_properties_and_sensors_match_mujoco_built_from_the_file(make, scene, dt):
    # Each env against its own raw MjData from the file: motor/position/velocity actuators with ctrl
    # up to 1.5x outside ctrlrange (clamps), forcerange, damping, armature, frictionloss, limits and
    # every sensor, from a random state. The backend steps MuJoCo itself, so agreement is bitwise.
    path = kit(scene)
    sim = make(path, num_envs=2, sim_dt=dt)
    m, d = reference(path, dt)
    rng = np.random.default_rng(3)
    qpos = np.tile(m.qpos0, (2, 1))
    hinge = np.flatnonzero(m.jnt_type == mujoco.mjtJoint.mjJNT_HINGE)
    qpos[:, m.jnt_qposadr[hinge]] += rng.uniform(-0.25, 0.25, (2, len(hinge)))
    qvel = rng.normal(0.0, 1.0, (2, m.nv))
    span = np.where(m.actuator_ctrllimited[:, None].astype(bool), m.actuator_ctrlrange, [-1.0, 1.0])
    sim.set_state(np.arange(2), qpos, qvel)
    ctrls = [rng.uniform(1.5 * span[:, 0], 1.5 * span[:, 1], (2, m.nu)) for _ in range(4)]
    for ctrl in ctrls:
        sim.step(ctrl, 50)
    sensors = sim.get_sensor_data_batch(list(sim.model_info.sensor_names)) if m.nsensor else None
    for env in range(2):
        mujoco.mj_resetData(m, d)
        d.qpos[:], d.qvel[:] = qpos[env], qvel[env]
        for ctrl in ctrls:
            d.ctrl[:] = ctrl[env]
            for _ in range(50):
                mujoco.mj_step(m, d)
        mujoco.mj_forward(m, d)
        np.testing.assert_array_equal(sim.get_qpos()[env], d.qpos)
        np.testing.assert_array_equal(sim.get_qvel()[env], d.qvel)
        if sensors is not None:
            np.testing.assert_array_equal(sensors[env], d.sensordata)


def test_body_origin_velocity_matches_finite_differences(make):
    # v_origin = d xpos / dt: integrate qpos by qvel*eps, difference the origins.
    sim = make(QUADRUPED, num_envs=1)
    qpos, qvel, _ = _random_states(sim, 1, seed=2)
    sim.set_state(np.array([0]), qpos, qvel)
    (m, d), eps = reference(QUADRUPED, sim.sim_dt), 1e-7
    d.qpos[:] = qpos[0]
    mujoco.mj_integratePos(m, d.qpos, qvel[0], eps)
    mujoco.mj_kinematics(m, d)
    ids = np.arange(1, m.nbody)
    fd = (d.xpos[ids] - sim.get_body_pos_w(ids)[0]) / eps
    np.testing.assert_allclose(sim.get_body_lin_vel_w(ids)[0], fd, atol=2e-6)  # O(eps) truncation


def test_set_state_changes_only_listed_envs_and_getters_follow(make):
    sim = make(QUADRUPED, num_envs=3)
    sim.step(home_ctrl(sim), 3)
    before = sim.get_qpos(), sim.get_body_pos_w(np.arange(13))
    qpos = sim.get_qpos()[[1]].astype(np.float64)
    qpos[0, :3] = [1.0, -2.0, 0.5]
    qpos[0, 3:7] = [np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)]  # 90 deg yaw
    qvel = np.zeros((1, sim.nv))
    qvel[0, 5] = 2.0  # body-frame yaw rate
    sim.set_state(np.array([1]), qpos, qvel)
    after = sim.get_qpos()
    assert np.array_equal(after[[0, 2]], before[0][[0, 2]])
    np.testing.assert_allclose(sim.get_base_pos()[1], [1.0, -2.0, 0.5])
    np.testing.assert_allclose(sim.get_body_pos_w(np.array([1]))[1, 0], [1.0, -2.0, 0.5])
    np.testing.assert_allclose(sim.get_base_ang_vel()[1], [0, 0, 2.0], atol=1e-12)
    np.testing.assert_allclose(sim.get_body_ang_vel_w(np.array([1]))[1, 0], [0, 0, 2.0], atol=1e-12)


def test_getters_are_detached_and_dtype(make):
    sim = make(QUADRUPED, num_envs=2, np_dtype=np.float32)
    q = sim.get_qpos()
    assert q.dtype == np.float32 and q.flags.c_contiguous and q.shape == (2, 19)
    q[:] = 7
    assert not np.any(sim.get_qpos() == 7)


def test_free_fall_closed_form(make):
    # semi-implicit Euler: z_n = 1 - g dt^2 n(n+1)/2 (SCENES.md)
    sim = make(kit("free_body.xml"), num_envs=2, integrator="euler")
    sim.step(np.zeros((2, 0)), 50)
    dt, g = 0.002, 9.81
    np.testing.assert_allclose(sim.get_base_pos()[:, 2], 1 - g * dt * dt * 50 * 51 / 2, rtol=0, atol=1e-12)


def test_snapshot_restore_reproduces_trajectory_bit_for_bit(make):
    sim = make(QUADRUPED, num_envs=2, scene_kwargs={"default_keyframe": "home"})
    ctrl = home_ctrl(sim)
    sim.step(ctrl, 30)  # contacts active: the solver's warm start matters
    snap = sim.get_physics_state()
    assert snap.shape == (2, 1 + sim.nq + sim.nv) and snap.dtype == np.float64
    for _ in range(20):
        sim.step(ctrl, 2)
    a = sim.get_qpos()
    sim.set_physics_state(snap)
    np.testing.assert_array_equal(sim.get_physics_state(), snap)
    for _ in range(20):
        sim.step(ctrl, 2)
    assert np.array_equal(sim.get_qpos(), a)


def test_instability_raises_engine_error_naming_env(make, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # MuJoCo logs the warning to ./MUJOCO_LOG.TXT
    sim = make(kit("free_body.xml"), num_envs=3)
    qvel = np.zeros((1, 6))
    qvel[0, 0] = 1e10  # at mjMAXVAL (accepted); the force below takes qacc beyond it
    force = np.zeros((3, 1, 3))
    force[1, 0, 0] = 1e10
    try:
        sim.set_state(np.array([1]), sim.get_qpos()[[1]], qvel)
        sim.apply_body_force(np.array([1]), force)
        sim.step(np.zeros((3, 0)), 1)
    except EngineError as exc:
        assert "env(s) [1]" in str(exc)
    else:
        pytest.fail("no EngineError")
    sim.step(np.zeros((3, 0)), 1)  # the reset env steps on


def test_options(make):
    with pytest.raises(TypeError, match="thread"):
        make(QUADRUPED, thread=2)
    with pytest.raises(ValueError, match="integrator"):
        make(QUADRUPED, integrator="verlet")
    with pytest.raises(ValueError, match="iterations"):
        make(QUADRUPED, iterations=0)
    sim = make(QUADRUPED, sim_dt=0.005, integrator="rk4", iterations=7, ls_iterations=3)
    opt = sim.model.opt
    assert (opt.timestep, opt.integrator, opt.iterations, opt.ls_iterations) == \
        (0.005, mujoco.mjtIntegrator.mjINT_RK4, 7, 3)
