"""The PhysX mapping of ``unisim_physx`` on a real PhysX (SAPIEN 3, CPU), against MuJoCo.

Each test has a known answer: MuJoCo's trajectory, a closed-form spin, or the solver values asked for.
"""

from __future__ import annotations

import numpy as np
import pytest

from unisim_conformance import scene_path
from unisim_core import InvalidInputError, SceneCfg, UnsupportedCapabilityError, create_backend

mujoco = pytest.importorskip("mujoco", reason="the reference trajectories come from MuJoCo (pip install mujoco)")

SERVO = """<mujoco>
  <option timestep="0.002" integrator="{integrator}" gravity="0 0 0"/>
  <worldbody>
    <body name="arm"><joint name="j" type="hinge" axis="0 1 0" limited="false"/>
      <inertial pos="0 0 -0.25" mass="1" diaginertia="0.02 0.02 0.001"/>
    </body>
  </worldbody>
  <actuator><position name="p" joint="j" kp="{kp}" kv="{kv}"/></actuator>
</mujoco>"""


def _servo(tmp_path, kp=20.0, kv=0.0, integrator="implicitfast"):
    path = tmp_path / "servo.xml"
    path.write_text(SERVO.format(kp=kp, kv=kv, integrator=integrator))
    return str(path)


def _mujoco_servo(path, target, steps):
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    d.ctrl[:] = target
    out = []
    for _ in range(steps):
        mujoco.mj_step(m, d)
        out.append(d.qpos[0])
    return np.array(out)


@pytest.mark.parametrize("kv", [0.0, 0.5])
def test_servo_kp_explicit_like_mujoco_and_the_implicit_drive_drifts(tmp_path, kv):
    """The shared mapping (kp as an explicit effort, kv implicit) follows MuJoCo's implicitfast servo;
    the old mapping (PhysX drive stiffness = kp, implicit) loses the undamped servo's energy."""
    path, steps = _servo(tmp_path, kv=kv), 150  # 0.3 s
    want = _mujoco_servo(path, 0.5, steps)
    b = create_backend("sapien", SceneCfg(model_file=path), 1, 0.002)
    got = np.array([b.step(np.full((1, 1), 0.5, np.float32), 1) or b.get_qpos()[0, 0] for _ in range(steps)])
    assert np.abs(got - want).max() < 1e-5  # measured 1.6e-7 (kv 0), 2.4e-7 (kv 0.5)
    old = create_backend("sapien", SceneCfg(model_file=path), 1, 0.002)
    (art,) = old.sapien_articulations[0]
    joint = art.get_active_joints()[0]
    joint.set_drive_properties(20.0, kv, 3.4e38)  # the pre-fix mapping: stiffness = gear² kp
    joint.set_drive_target(0.5)
    art.set_qf(np.zeros(1, np.float32))
    drifted = []
    for _ in range(steps):
        old.sapien_scenes[0].step()
        drifted.append(art.get_qpos()[0])
    assert np.abs(np.array(drifted) - want).max() > (1e-2 if kv == 0.0 else 1e-3)


def test_euler_keeps_servo_kv_explicit_like_mujoco(tmp_path):
    """MuJoCo's Euler integrates an actuator's kv explicitly (only joint damping implicitly): a stiff kv
    servo (kv dt / I = 0.24) follows MuJoCo's Euler trajectory, not its implicitfast one."""
    path = _servo(tmp_path, kp=20.0, kv=10.0, integrator="Euler")
    want = _mujoco_servo(path, 0.5, 100)
    b = create_backend("sapien", SceneCfg(model_file=path), 1, 0.002)
    got = np.array([b.step(np.full((1, 1), 0.5, np.float32), 1) or b.get_qpos()[0, 0] for _ in range(100)])
    assert np.abs(got - want).max() < 1e-5
    implicit = _mujoco_servo(_servo(tmp_path, kp=20.0, kv=10.0), 0.5, 100)
    assert np.abs(implicit - want).max() > 1e-3


def test_physx_defaults_are_replaced_on_the_engine():
    """Link damping, velocity caps and sleeping, joint friction and velocity caps: read from PhysX."""
    b = create_backend("sapien", SceneCfg(model_file=str(scene_path("quadruped")), default_keyframe="home"), 1, 0.002)
    (art,) = b.sapien_articulations[0]
    assert art.get_sleep_threshold() == 0.0
    for link in art.get_links():
        assert (link.get_linear_damping(), link.get_angular_damping()) == (0.0, 0.0)
        assert link.get_max_linear_velocity() == link.get_max_angular_velocity() == pytest.approx(1e10)
    for joint in art.get_active_joints():
        assert joint.get_friction() == 0.0 and joint.get_max_velocity() == pytest.approx(1e10)
        assert joint.get_type() == "revolute_unwrapped" and joint.get_stiffness() == 0.0


def test_a_fast_spin_is_neither_capped_nor_damped():
    """PhysX's defaults would cap 80 rad/s at 50 and damp it by 0.05/s; MuJoCo keeps it (free body, no gravity
    torque: the spin about a principal axis is constant)."""
    b = create_backend("sapien", SceneCfg(model_file=str(scene_path("free_body"))), 1, 0.002)
    qvel = np.zeros((1, 6))
    qvel[0, 5] = 80.0
    b.set_state([0], b.get_qpos(), qvel)
    b.step(np.zeros((1, 0), np.float32), 250)
    assert b.get_qvel()[0, 5] == pytest.approx(80.0, rel=1e-5)


def test_an_unlimited_hinge_does_not_wrap_at_two_pi(tmp_path):
    b = create_backend("sapien", SceneCfg(model_file=_servo(tmp_path, kp=0.0)), 1, 0.002)
    b.set_state([0], np.array([[6.0]]), np.array([[2.0]]))
    b.step(np.zeros((1, 1), np.float32), 250)
    assert b.get_qpos()[0, 0] == pytest.approx(7.0, abs=1e-3)


def test_solver_config_is_applied_and_read_back_from_the_engine():
    physx = dict(solver_type="TGS", solver_position_iteration_count=7, solver_velocity_iteration_count=2,
                 bounce_threshold_velocity=0.3, contact_offset=0.02, rest_offset=0.001, max_depenetration_velocity=5.0)
    b = create_backend("sapien", SceneCfg(model_file=str(scene_path("box_on_plane"))), 2, 0.002, physx=physx)
    back = b.solver_readback
    assert sorted(back) == sorted(physx)
    for field, want in physx.items():
        assert back[field]["source"] == "physx"
        assert back[field]["value"] == (want if isinstance(want, (int, str)) else pytest.approx(want, rel=1e-7))
    assert back["contact_offset"]["objects"] == 4  # one box and the floor, per env
    (art,) = b.sapien_articulations[1]
    assert b.sapien_scenes[1].physx_system.config.enable_tgs
    assert art.get_solver_position_iterations() == 7


def test_default_solver_is_pgs():
    b = create_backend("sapien", SceneCfg(model_file=str(scene_path("pendulum"))), 1, 0.001)
    assert not b.sapien_scenes[0].physx_system.config.enable_tgs


@pytest.mark.parametrize("physx, match", [
    ({"gpu_max_rigid_contact_count": 1024}, "GPU"),
    ({"solver_type": "tgs"}, "solver_type"),
    ({"rest_offset": 0.01}, "rest_offset requires contact_offset"),
])
def test_bad_solver_options_are_refused_before_anything_is_built(physx, match):
    with pytest.raises(InvalidInputError, match=match):
        create_backend("sapien", SceneCfg(model_file=str(scene_path("pendulum"))), 1, 0.001, physx=physx)


def test_joint_ref_is_the_model_pose(tmp_path):
    """MuJoCo's model pose is q = ref (qpos0 = ref); PhysX's is q = 0: a pendulum with ref = 0.4
    follows MuJoCo until the range's upper end (MuJoCo's q), where PhysX's hard limit holds it at
    1.2 (MuJoCo's soft limit overshoots)."""
    path = tmp_path / "ref.xml"
    path.write_text("""<mujoco><compiler angle="radian"/><option timestep="0.002" integrator="implicitfast"/>
      <worldbody><body name="pole" pos="0 0 1">
        <joint name="j" type="hinge" axis="0 1 0" ref="0.4" range="-1 1.2"/>
        <inertial pos="0.3 0 0" mass="1" diaginertia="0.01 0.01 0.01"/></body></worldbody></mujoco>""")
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    want = []
    for _ in range(200):
        mujoco.mj_step(m, d)
        want.append(d.qpos[0])
    b = create_backend("sapien", SceneCfg(model_file=str(path)), 1, 0.002)
    assert b.get_qpos()[0, 0] == pytest.approx(0.4)
    got = np.array([b.step(np.zeros((1, 0), np.float32), 1) or b.get_qpos()[0, 0] for _ in range(200)])
    want = np.array(want)
    free = np.arange(200) < np.argmax(want > 1.2)
    assert 50 < free.sum() < 200 and np.abs(got - want)[free].max() < 1e-5
    assert got.max() == pytest.approx(1.2, abs=1e-3)


FRICTION = """<mujoco><compiler angle="radian"/><option timestep="0.001" integrator="implicitfast" gravity="0 0 0"/>
  <worldbody><body name="wheel"><joint name="j" type="hinge" axis="0 0 1" frictionloss="0.05" damping="0.01"/>
    <inertial pos="0 0 0" mass="1" diaginertia="0.02 0.02 0.02"/></body></worldbody>
  <actuator><motor name="push" joint="j" ctrlrange="-1 1"/></actuator></mujoco>"""


def test_frictionloss_is_a_force_limited_drive_like_mujoco(tmp_path):
    """frictionloss f as a PhysX drive of huge damping limited to f (joint damping then explicit): a
    spinning hinge decelerates and stops as in MuJoCo, holds under a push below f and breaks away above."""
    path = tmp_path / "friction.xml"
    path.write_text(FRICTION)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    b = create_backend("sapien", SceneCfg(model_file=str(path)), 1, 0.001)
    d.qvel[0] = 1.0
    b.set_state([0], np.zeros((1, 1)), np.ones((1, 1)))
    for push, steps in ((0.0, 600), (0.04, 200), (0.09, 200)):
        d.ctrl[0] = push
        want = []
        for _ in range(steps):
            mujoco.mj_step(m, d)
            want.append(d.qvel[0])
        got = np.array([b.step(np.full((1, 1), push, np.float32), 1) or b.get_qvel()[0, 0] for _ in range(steps)])
        # MuJoCo's friction constraint is soft: near standstill its velocity is up to 9e-3 rad/s off the hard stop
        assert np.abs(got - np.array(want)).max() < 1.5e-2, push
        if push == 0.04:
            assert abs(got[-1]) < 1e-6  # held below the friction bound
    assert got[-1] == pytest.approx((0.09 - 0.05) / 0.02 * 0.2, rel=0.05)  # (u - f) / I for 0.2 s, minus damping


CHAIN = """<mujoco><option timestep="0.002" integrator="implicitfast"/><worldbody>
  <body name="torso" pos="0 0 1">
    <joint name="rootx" type="slide" axis="1 0 0"/><joint name="rootz" type="slide" axis="0 0 1"/>
    <joint name="rooty" type="hinge" axis="0 1 0" pos="0.1 0 0"/>
    <inertial pos="0.05 0 0.02" mass="3" diaginertia="0.1 0.2 0.15"/>
    <body name="arm" pos="0.3 0 0"><joint name="a1" type="hinge" axis="0 1 0" stiffness="4" springref="0.3"/>
      <joint name="a2" type="hinge" axis="1 0 0" pos="0 0 0.05"/>
      <inertial pos="0.2 0 0" mass="1" diaginertia="0.01 0.02 0.02"/></body></body></worldbody>
  <actuator><motor joint="rooty"/><motor joint="a1"/><position joint="a2" kp="5" kv="0.2"/></actuator></mujoco>"""


def test_a_body_with_several_joints_is_a_chain_of_light_links(tmp_path):
    """A torso on slide x, slide z and hinge y (gymnasium's planar root) and an arm on two hinges, one with a
    spring (MuJoCo's -stiffness (q - springref), explicit as in MuJoCo): each joint but a body's last moves a
    link of CHAIN_LINK_MASS (1e-6) of the body, so PhysX carries that much more inertia than MuJoCo: within
    1e-5 of MuJoCo's qpos after 0.5 s (measured 7e-7; 1e-3 gave 8e-4) while the state moves by 1.3."""
    from unisim_sapien._build import CHAIN_LINK_MASS

    assert CHAIN_LINK_MASS == 1e-6
    path = tmp_path / "chain.xml"
    path.write_text(CHAIN)
    out = []
    for name in ("mujoco", "sapien"):
        b = create_backend(name, SceneCfg(model_file=str(path)), 1, 0.002)
        b.set_state(np.array([0]), np.array([[0.1, -0.2, 0.3, 0.2, -0.1]]), np.array([[0.5, 0.2, -1.0, 0.3, 0.4]]))
        b.step(np.array([[0.5, -0.3, 0.4]]), 250)
        out.append(b.get_qpos()[0])
    assert np.abs(out[0] - [0.1, -0.2, 0.3, 0.2, -0.1]).max() > 1.0
    np.testing.assert_allclose(out[1], out[0], atol=1e-5)


def test_rk4_runs_on_physx_with_a_warning_naming_it(tmp_path):
    """MuJoCo's RK4 has no PhysX counterpart: the model's dynamics run on PhysX's own scheme, named in a
    SapienModellingWarning (gymnasium's swimmer: within 3e-5 rad of MuJoCo's RK4 over 100 steps, zoo)."""
    from unisim_sapien import SapienModellingWarning

    path = tmp_path / "rk4.xml"
    path.write_text(SERVO.format(kp=20.0, kv=0.0, integrator="RK4"))
    with pytest.warns(SapienModellingWarning, match="RK4"):
        create_backend("sapien", SceneCfg(model_file=str(path)), 1, 0.002)


def test_a_dampratio_servo_follows_mujoco(tmp_path):
    """<position dampratio="1">: mjcf_lite resolves kv as MuJoCo's compiler does (effective inertia at qpos0);
    the servo then follows MuJoCo's trajectory within 1e-5 rad over 0.3 s (it would ring undamped with kv 0)."""
    path = tmp_path / "dampratio.xml"
    path.write_text(SERVO.format(kp=20.0, kv=0.0, integrator="implicitfast").replace('kv="0.0"', 'dampratio="1"'))
    want = _mujoco_servo(str(path), 0.5, 150)
    b = create_backend("sapien", SceneCfg(model_file=str(path)), 1, 0.002)
    got = np.array([b.step(np.full((1, 1), 0.5, np.float32), 1) or b.get_qpos()[0, 0] for _ in range(150)])
    assert np.abs(got - want).max() < 1e-5
    assert np.abs(want - _mujoco_servo(_servo(tmp_path, kp=20.0, kv=0.0), 0.5, 150)).max() > 0.1


EQUALITY = """<mujoco><option timestep="0.002" integrator="implicitfast"/><worldbody>
  <body name="base" pos="0 0 0.5"><inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 0.01"/>
    <body name="left" pos="0 0.05 0"><joint name="jl" type="hinge" axis="1 0 0" damping="0.01"/>
      <inertial pos="0 0 -0.05" mass="0.05" diaginertia="5e-5 5e-5 1e-5"/></body>
    <body name="right" pos="0 -0.05 0"><joint name="jr" type="hinge" axis="1 0 0" damping="0.01"/>
      <inertial pos="0 0 -0.05" mass="0.05" diaginertia="5e-5 5e-5 1e-5"/></body></body></worldbody>
  {coupling}
  <actuator><motor joint="jl" gear="1"/></actuator></mujoco>"""
#: The coupling of EQUALITY's two fingers: their joints, or fixed tendons over them (coefficients 2 and 0.5).
JOINTS = '<equality><joint joint1="jl" joint2="jr" polycoef="{poly}"/></equality>'
TENDONS = ('<tendon><fixed name="tl"><joint joint="jl" coef="2"/></fixed>'
           '<fixed name="tr"><joint joint="jr" coef="0.5"/></fixed></tendon>'
           '<equality><tendon tendon1="tl" tendon2="tr" polycoef="0.1 -1 0 0 0"/></equality>')


def _coupled(path) -> list[np.ndarray]:
    """qpos of MuJoCo and SAPIEN after 0.6 s of the left finger pushed at 0.02 N m."""
    out = []
    for name in ("mujoco", "sapien"):
        b = create_backend(name, SceneCfg(model_file=str(path)), 1, 0.002)
        b.step(np.array([[0.02]]), 300)
        out.append(b.get_qpos()[0].astype(np.float64))
    return out


def test_a_joint_equality_is_a_fixed_tendon_and_a_polynomial_one_is_refused(tmp_path):
    """Two fingers mirrored with an offset (jl = 0.1 - jr, a gripper's coupling), one pushed by a motor: the
    other follows through the fixed tendon, within 2e-3 rad of MuJoCo over 0.6 s (measured 1.0e-3: MuJoCo's
    soft equality holds the sum to 2.0e-3 of 0.1, the tendon to 4.0e-3) while the fingers move 0.3 rad. A
    quadratic coupling is refused as joint_equality."""
    path = tmp_path / "eq.xml"
    path.write_text(EQUALITY.format(coupling=JOINTS.format(poly="0.1 -1 0 0 0")))
    out = _coupled(path)
    assert out[0][0] > 0.3 and abs(out[0][0] + out[0][1] - 0.1) < 3e-3
    np.testing.assert_allclose(out[1], out[0], atol=2e-3)
    path.write_text(EQUALITY.format(coupling=JOINTS.format(poly="0 -1 0.5 0 0")))
    with pytest.raises(UnsupportedCapabilityError, match="polycoef") as info:
        create_backend("sapien", SceneCfg(model_file=str(path)), 1, 0.002)
    assert info.value.capability == "joint_equality"


def test_a_tendon_equality_couples_its_tendons_joints(tmp_path):
    """``tl = 0.1 - tr`` over fixed tendons (2 jl, 0.5 jr): the right finger follows the pushed left one through
    the PhysX fixed tendon of coefficients (2, 0.5), within 3e-3 rad of MuJoCo over 0.6 s (measured 2.0e-3 of
    0.086 and -0.137 rad travelled; the joint equality's mapping)."""
    path = tmp_path / "tendon_equality.xml"
    path.write_text(EQUALITY.format(coupling=TENDONS))
    out = _coupled(path)
    assert out[0][0] > 0.05 and abs(2 * out[0][0] + 0.5 * out[0][1] - 0.1) < 5e-3  # MuJoCo's soft coupling: 0.104
    np.testing.assert_allclose(out[1], out[0], atol=3e-3)
