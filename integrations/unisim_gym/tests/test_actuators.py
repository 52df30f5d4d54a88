"""unisim_core.tools.actuators: the torque laws (known answers), joint selection by pattern, the delay
line, refusals by name, and the same torques on every engine through set_pre_step_control."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

from unisim_core import InvalidInputError, SceneCfg, UnknownNameError, create_backend
from unisim_core.tools.actuators import ActuatorModel, DCMotorCfg, IdealPDCfg, motor_actuator_names
from unisim_gym import QUADRUPED, RobotCfg, build_scene

JOINTS = tuple(f"{leg}_{j}_joint" for leg in ("FL", "FR", "RL", "RR") for j in ("hip", "thigh", "calf"))
#: The shipped quadruped's servos (kp 60, kv 2, forcerange 33.5) as an explicit PD on torque motors.
PD = IdealPDCfg(joint_names=(".*",), stiffness=60.0, damping=2.0, effort_limit=33.5)
MOTOR_QUADRUPED = attrs.evolve(QUADRUPED, name="quadruped_motors", joint_names=JOINTS, motors=True, actuators=(PD,))


def motor_backend(name="fake", n=2, actuators=(PD,), **options):
    robot = attrs.evolve(MOTOR_QUADRUPED, actuators=actuators)
    return create_backend(name, SceneCfg(build_scene(robot), default_keyframe="home"), n, 0.005, **options)


def test_ideal_pd_law_and_effort_limit():
    """tau = kp (q* - q) + kd (0 - qd), clipped to +-effort_limit; per-joint values by pattern."""
    b = motor_backend()
    cfg = IdealPDCfg(joint_names=(".*",), stiffness={".*_calf_joint": 40.0, ".*_(hip|thigh)_joint": 10.0},
                     damping=1.0, effort_limit=5.0)
    am = ActuatorModel(b, [cfg], install=False)
    q, qd, tgt = np.zeros((2, 12)), np.full((2, 12), 0.5), np.full((2, 12), 0.1)
    tau = am.torque(tgt, q, qd)
    kp = np.where([j.endswith("calf_joint") for j in JOINTS], 40.0, 10.0)
    np.testing.assert_array_equal(am.computed_torque, np.broadcast_to(kp * 0.1 - 0.5, (2, 12)))
    np.testing.assert_array_equal(tau, np.clip(am.computed_torque, -5.0, 5.0))
    assert tau[0, 2] == 3.5 and tau[0, 0] == 0.5  # calf 40 * 0.1 - 0.5; hip 10 * 0.1 - 0.5
    b.close()


def test_dc_motor_torque_speed_line():
    """Saturation 10 N m, no-load speed 20 rad/s, effort limit 8: at qd = 10 rad/s the motor gives
    at most 10 (1 - 10/20) = 5 N m forward and min(8, 10 (1 + 10/20)) = 8 N m backward."""
    b = motor_backend()
    am = ActuatorModel(b, [DCMotorCfg(joint_names=(".*",), stiffness=100.0, saturation_effort=10.0,
                                      velocity_limit=20.0, effort_limit=8.0)], install=False)
    q, qd = np.zeros((2, 12)), np.full((2, 12), 10.0)
    tau = am.torque(np.full((2, 12), 1.0), q, qd)  # asks +100 N m
    assert (tau == 5.0).all()
    tau = am.torque(np.full((2, 12), -1.0), q, qd)  # asks -100 N m
    assert (tau == -8.0).all()
    assert (am.torque(np.full((2, 12), 0.01), q, np.zeros((2, 12))) == 1.0).all()  # inside the line: PD
    b.close()


def test_velocity_and_effort_drives():
    """velocity: kd (qd* - qd); effort: the target is the torque (clipped); per-joint drives by pattern."""
    b = motor_backend()
    am = ActuatorModel(b, [IdealPDCfg(joint_names=(".*_calf_joint",), drive="velocity", stiffness=50.0, damping=2.0),
                           IdealPDCfg(joint_names=(".*_(hip|thigh)_joint",), drive="effort", effort_limit=3.0)],
                       install=False)
    tau = am.torque(np.full((2, 12), 4.0), np.full((2, 12), 0.3), np.full((2, 12), 1.0))
    calf = np.array([j.endswith("calf_joint") for j in JOINTS])
    assert (tau[:, calf] == 2.0 * (4.0 - 1.0)).all()  # no position term on a velocity drive
    assert (tau[:, ~calf] == 3.0).all()  # 4 N m asked, limit 3
    b.close()


def test_delay_line_holds_back_the_targets():
    """delay=2 substeps: the torque of substep k acts on the targets of substep k - 2 (the reset's
    targets before that)."""
    b = motor_backend()
    am = ActuatorModel(b, [IdealPDCfg(joint_names=(".*",), drive="effort", delay=2)])
    am.reset(np.arange(2), np.zeros((2, 12)))
    seen = []
    for k in range(1, 5):
        b.step(np.full((2, 12), float(k), np.float32), 1)
        seen.append(am.applied_torque[0, 0])
    assert seen == [0.0, 0.0, 1.0, 2.0]
    with pytest.raises(InvalidInputError, match="rng"):
        ActuatorModel(b, [IdealPDCfg(joint_names=(".*",), delay=(0, 3))]).reset(np.arange(2))
    b.close()


def test_refusals_name_what_is_wrong():
    b = create_backend("fake", SceneCfg(build_scene(QUADRUPED), default_keyframe="home"), 1, 0.005)
    with pytest.raises(InvalidInputError, match="FL_hip_act .*position/velocity servos"):
        ActuatorModel(b, [PD])  # the shipped quadruped's actuators are servos
    b.close()
    b = motor_backend()
    assert motor_actuator_names(b) == JOINTS
    with pytest.raises(UnknownNameError, match="knee"):
        ActuatorModel(b, [IdealPDCfg(joint_names=("knee",))])
    with pytest.raises(InvalidInputError, match="matched by no actuator config"):
        ActuatorModel(b, [IdealPDCfg(joint_names=(".*_calf_joint",))])
    with pytest.raises(InvalidInputError, match="already matched"):
        ActuatorModel(b, [IdealPDCfg(joint_names=(".*",)), IdealPDCfg(joint_names=("FL_.*",))])
    with pytest.raises(InvalidInputError, match="stiffness"):
        IdealPDCfg(joint_names=(".*",), stiffness=-1.0)
    with pytest.raises(InvalidInputError, match="drive"):
        IdealPDCfg(joint_names=(".*",), drive="torque")
    b.close()


def test_motor_pd_matches_mujocos_own_servo():
    """MuJoCo's position servo (kp 60, kv 2, forcerange 33.5) against the same PD law computed here
    every substep on gear-1 motors, both under MuJoCo's Euler integrator (which, unlike implicitfast,
    applies an actuator's velocity gain explicitly, as the hook does): 10 steps of 4 substeps from
    one perturbed state with the same targets. Equal but for the order of the floating-point
    operations (kp ctrl - kp q - kv qd in MuJoCo, kp (q* - q) - kd qd here): measured max |dq|
    1.2e-7 rad, one float32 ulp of the reads."""
    euler = {"integrator": "Euler"}
    servo = create_backend("mujoco", SceneCfg(build_scene(attrs.evolve(QUADRUPED, name="q_euler", mjcf_option=euler)),
                                              default_keyframe="home"), 2, 0.005)
    robot = attrs.evolve(MOTOR_QUADRUPED, name="qm_euler", mjcf_option=euler)
    motor = create_backend("mujoco", SceneCfg(build_scene(robot), default_keyframe="home"), 2, 0.005)
    ActuatorModel(motor, [PD])
    rng = np.random.default_rng(0)
    q = np.tile(servo.get_default_qpos(), (2, 1))
    q[:, 7:] += rng.uniform(-0.2, 0.2, (2, 12))
    for b in (servo, motor):
        b.set_state(np.arange(2), q, np.zeros((2, servo.nv)))
    tgt = (np.tile(servo.get_default_dof_pos(), (2, 1)) + rng.uniform(-0.3, 0.3, (2, 12))).astype(np.float32)
    for _ in range(10):
        servo.step(tgt, 4)
        motor.step(tgt, 4)
    assert np.abs(servo.get_dof_pos() - motor.get_dof_pos()).max() < 1e-5
    servo.close()
    motor.close()


@pytest.fixture(scope="module")
def same_state_torques():
    """One substep on each engine from the same state (float32-exact values) with the same targets:
    the hook's torque, per engine."""
    out = {}
    rng = np.random.default_rng(1)
    for name in ("mujoco", "motrix", "sapien"):
        b = motor_backend(name, actuators=(attrs.evolve(PD, effort_limit=1000.0),))
        am = ActuatorModel(b, [attrs.evolve(PD, effort_limit=1000.0)])
        q = np.tile(b.get_default_qpos().astype(np.float64), (2, 1))
        q[:, 7:] += rng.uniform(-0.2, 0.2, (2, 12)) if not out else 0.0
        q, v = q.astype(np.float32).astype(np.float64), np.zeros((2, b.nv))
        v[:, 6:] = np.float32(0.5)
        if out:
            q, v = out["state"]
        b.set_state(np.arange(2), q, v)
        out["state"] = (q, v)
        b.step(np.tile(b.get_default_dof_pos(), (2, 1)).astype(np.float32), 1)
        out[name] = am.applied_torque.copy()
        b.close()
    return out


@pytest.mark.parametrize("name", ["motrix", "sapien"])
def test_same_torques_on_every_engine_bit_for_bit(same_state_torques, name):
    """The torque handed to each engine's motors is one numpy computation on the contract's reads:
    from the same state it is the same on MuJoCo, MotrixSim and SAPIEN, bit for bit (Newton too,
    checked once by hand: its start-up costs ~30 s, too long for CI). The kit's pre_step_control
    check proves each engine applies the hook's output as the actuators' ctrl."""
    np.testing.assert_array_equal(same_state_torques[name], same_state_torques["mujoco"])
    assert np.abs(same_state_torques["mujoco"]).max() > 1.0  # a real torque, not zeros


def test_robot_without_actuator_model_for_motors_is_refused():
    """The issue's case: a torque-motor robot handed to the velocity task without an actuator model
    is refused naming its motors (it used to send joint targets as torques)."""
    from unisim_gym import UniSimVectorEnv, VelocityTrackingCfg, VelocityTrackingTask

    scene_file = build_scene(MOTOR_QUADRUPED)
    bare = attrs.evolve(QUADRUPED, name="bare_motors", model_file=scene_file)
    with pytest.raises(InvalidInputError, match="FL_hip_joint.*take torques"):
        UniSimVectorEnv(VelocityTrackingTask(VelocityTrackingCfg(robot=bare)), "mujoco", 1)
    with pytest.raises(InvalidInputError, match="motors"):
        RobotCfg(name="x", model_file=scene_file, motors=True, foot_bodies=(), foot_offset=(0, 0, 0), foot_radius=1)
