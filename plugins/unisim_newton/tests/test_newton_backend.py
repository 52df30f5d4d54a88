"""unisim-newton on the real engine (Newton 1.8 on warp's CPU device): options, refusals that
name the scene feature, the free-root conventions, and agreement with CPU MuJoCo."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from newton_testutil import QUADRUPED

from unisim_core import InvalidInputError, SceneCfg, UnsupportedCapabilityError, create_backend, list_backends
from unisim_core.contract import quat as Q


def test_listed_without_importing_the_engine():
    """The registry lists the plugin from its entry point; importing the package imports no engine."""
    record = next(r for r in list_backends() if r.name == "newton")
    assert record.status == "ok", record.reason
    code = "import sys, unisim_newton; bad = {'warp', 'newton', 'mujoco_warp'} & set(sys.modules); assert not bad, bad"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(("options", "needle"), [
    ({"device": "gpu"}, "device: expected None, 'cpu', 'cuda' or 'cuda:N', got 'gpu'"),
    ({"device": "cuda:7"}, "device: 'cuda:7' is not available"),
    ({"solver": "xpbd"}, "solver: expected one of ['mujoco'], got 'xpbd'"),
])
def test_bad_options_name_the_option(make, options, needle):
    with pytest.raises(InvalidInputError) as info:
        make("pendulum", **options)
    assert needle in str(info.value)


def test_edge_inertia_scene_is_refused_by_feature(make, tmp_path):
    """An inertia diag(0.1, 0.2, 0.3) is on the triangle edge; float32 breaks it for MuJoCo's compiler."""
    path = tmp_path / "edge.xml"
    path.write_text('<mujoco><worldbody><body name="box"><freejoint name="root"/><inertial pos="0 0 0" mass="2" '
                    'diaginertia="0.1 0.2 0.3"/><geom type="box" size="0.1 0.1 0.1" mass="0"/></body></worldbody>'
                    '</mujoco>')
    with pytest.raises(UnsupportedCapabilityError) as info:
        make(path)
    assert info.value.capability == "edge_inertia" and "A + B >= C" in str(info.value)


TENDON = """<mujoco><option integrator="implicitfast"/><worldbody><body name="base" pos="0 0 1">
  <body name="l" pos="0.1 0 0"><joint name="jl" axis="0 1 0" damping="0.01"/>
    <inertial pos="0 0 -0.1" mass="0.3" diaginertia="0.002 0.002 0.001"/></body>
  <body name="r" pos="-0.1 0 0"><joint name="jr" axis="1 0 0" damping="0.01"/>
    <inertial pos="0 0 -0.1" mass="0.2" diaginertia="0.002 0.002 0.001"/></body></body></worldbody>
  <tendon><fixed name="t" stiffness="2" springlength="0.1" damping="0.05"><joint joint="jl" coef="1"/>
    <joint joint="jr" coef="-0.5"/></fixed><fixed name="lever"><joint joint="jr" coef="2"/></fixed></tendon>
  <equality><tendon tendon1="lever" tendon2="t" polycoef="0 0.3 0 0 0"/></equality>
  <actuator><general name="g" tendon="t" gainprm="0.5" biasprm="0 -4 -0.2" biastype="affine" gear="2"/></actuator>
  <sensor><actuatorpos name="len" actuator="g"/></sensor></mujoco>"""


def test_fixed_tendons_and_their_actuators_act_as_in_mujoco(make, tmp_path):
    """A fixed tendon over two hinges (coefficients 1 and -0.5) with a spring, damping, and a <general> servo
    on it (its own ctrl gain, gear 2), and a second tendon tied to it by a tendon equality: Newton's importer
    hands them to MuJoCo Warp as MuJoCo compiles them, and
    200 steps give MuJoCo's qpos (float32: 1e-5 rad); the actuator's length sensor reads MuJoCo's
    ``actuator_length`` of that state."""
    mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo")
    path = tmp_path / "tendon.xml"
    path.write_text(TENDON)
    b = make(path, num_envs=1, sim_dt=0.002)
    b.step(np.full((1, 1), 0.8), 200)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    d.ctrl[:] = 0.8
    mujoco.mj_step(m, d, 200)
    assert np.abs(d.qpos).min() > 5e-3  # both joints move
    np.testing.assert_allclose(b.get_qpos()[0], d.qpos, atol=1e-5)
    mujoco.mj_forward(m, d)
    np.testing.assert_allclose(b.get_sensor_data("len")[0], d.actuator_length, atol=2e-5)


def test_a_tendon_newtons_importer_would_shorten_is_refused(make, tmp_path):
    """A fixed tendon over an axis of a multi-joint body (``rooty``): Newton 1.8's importer keeps only the
    wrap on ``a``; the scene is refused as ``fixed_tendon`` naming the wraps rather than simulated shorter."""
    path = tmp_path / "multi.xml"
    path.write_text(MULTI_JOINT.format(springref=0).replace(
        "<actuator>", '<tendon><fixed name="t" stiffness="1"><joint joint="a" coef="1"/><joint joint="rooty" '
        'coef="1"/></fixed></tendon><actuator>'))
    with pytest.raises(UnsupportedCapabilityError) as info:
        make(path)
    assert info.value.capability == "fixed_tendon" and "wraps" in str(info.value)


def test_an_attached_model_is_refused_naming_newtons_importer(make, tmp_path):
    """``<attach>`` of an ``<asset><model>`` (iit_softfoot): Newton 1.8's importer does not expand it (it loads
    the bodies around it only); refused as ``model_asset`` before any reader."""
    (tmp_path / "child.xml").write_text('<mujoco><worldbody><body name="c"><joint name="j"/><geom size="0.1" '
                                        'mass="1"/></body></worldbody></mujoco>')
    path = tmp_path / "parent.xml"
    path.write_text('<mujoco><asset><model name="kid" file="child.xml"/></asset><worldbody><body name="p">'
                    '<attach model="kid" body="c" prefix="k_"/></body></worldbody></mujoco>')
    with pytest.raises(UnsupportedCapabilityError) as info:
        make(path)
    assert info.value.capability == "model_asset" and "attach" in str(info.value)


def test_a_model_without_bodies_is_refused_by_name(make, tmp_path):
    """Only world geoms (dm_control's lqr template before it adds its bodies): Newton's state has no body arrays;
    refused as ``empty_model`` (it raised a bare AttributeError)."""
    path = tmp_path / "empty.xml"
    path.write_text('<mujoco><worldbody><geom type="plane" size="1 1 0.1"/></worldbody></mujoco>')
    with pytest.raises(UnsupportedCapabilityError) as info:
        make(path)
    assert info.value.capability == "empty_model"


ROPE = """<mujoco><worldbody><site name="hook" pos="0.3 0 1.05"/>
  <body name="bob" pos="0 0 1"><joint name="j" axis="0 1 0"/><geom type="sphere" size="0.05" pos="0.3 0 0" mass="1"
    contype="0" conaffinity="0"/><site name="tip" pos="0.3 0 0"/></body></worldbody>
  <tendon><spatial name="rope" limited="true" range="0 0.35"><site site="hook"/><site site="tip"/></spatial></tendon>
  <sensor><tendonpos name="rope_length" tendon="rope"/></sensor></mujoco>"""


def test_a_spatial_tendon_holds_as_in_mujoco(make, tmp_path):
    """A rope (spatial tendon, range [0, 0.35] m) from a world site to a pendulum's tip, 0.05 m apart at rest: the
    bob swings down until the rope is taut (at 0.35 m) and hangs there, as in MuJoCo (1e-4 rad); the rope's
    tendonpos sensor reads its length at that state (after a set_state too: 0.05 m at rest)."""
    mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo")
    path = tmp_path / "rope.xml"
    path.write_text(ROPE)
    b = make(path, num_envs=1, sim_dt=0.002)
    b.step(np.zeros((1, 0)), 300)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    mujoco.mj_step(m, d, 300)
    assert 0.3 < d.qpos[0] < 1.4  # held by the rope, well short of hanging straight down (pi / 2)
    np.testing.assert_allclose(b.get_qpos()[0], d.qpos, atol=1e-4)
    mujoco.mj_forward(m, d)
    assert abs(d.ten_length[0] - 0.35) < 1e-3
    np.testing.assert_allclose(b.get_sensor_data("rope_length")[0], d.ten_length, atol=1e-5)
    b.set_state(np.arange(1), np.zeros((1, 1)), np.zeros((1, 1)))
    np.testing.assert_allclose(b.get_sensor_data("rope_length")[0], [0.05], atol=1e-6)


@pytest.mark.parametrize(("flag", "accepted"), [('eulerdamp="disable"', True), ('filterparent="disable"', False)])
def test_option_flags_reach_mujoco_warp_or_are_refused(make, tmp_path, flag, accepted):
    """The file's ``<option><flag>``: Newton's importer hands ``eulerdamp`` to MuJoCo Warp (audited against
    MuJoCo's disable bits); it ignores ``filterparent`` (a warning), and the scene is refused naming the flag."""
    path = tmp_path / "flag.xml"
    path.write_text(f'<mujoco><option><flag {flag}/></option><worldbody><body name="a"><joint name="j" axis="0 1 0" '
                    'damping="1"/><geom size="0.1" mass="1"/></body></worldbody></mujoco>')
    if accepted:
        assert make(path).num_dof == 1
        return
    with pytest.warns(UserWarning, match="filterparent"), pytest.raises(UnsupportedCapabilityError) as info:
        make(path)
    assert info.value.capability == "option_flag" and "FILTERPARENT" in str(info.value)


def test_free_root_state_round_trips_in_mujoco_conventions(quadruped):
    """A yawed, spinning base: qpos (wxyz) and qvel (origin velocity world, angular body frame) read back
    as written (float32), and the base's world angular velocity is the body-frame one rotated."""
    b = quadruped
    qpos = np.tile(b.model_info.keyframes["home"], (2, 1))
    qpos[:, 3:7] = Q.quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), np.array([0.5, -1.0]))
    qvel = np.zeros((2, b.nv))
    qvel[:, 0:6] = [[0.3, -0.2, 0.1, 0.5, -1.0, 2.0], [0.0, 0.4, 0.0, -2.0, 0.0, 1.0]]
    b.set_state(np.arange(2), qpos, qvel)
    np.testing.assert_allclose(b.get_qpos(), qpos, atol=1e-6)
    np.testing.assert_allclose(b.get_qvel(), qvel, atol=1e-5)
    np.testing.assert_allclose(b.get_base_ang_vel(), Q.quat_apply(qpos[:, 3:7], qvel[:, 3:6]), atol=1e-5)
    np.testing.assert_allclose(b.get_base_lin_vel(), qvel[:, 0:3], atol=1e-5)


def test_body_velocities_match_mujoco_for_one_state(quadruped):
    """Every body's world velocity (at its origin) equals MuJoCo's for the same spinning state."""
    b = quadruped
    qpos = np.tile(b.model_info.keyframes["home"], (2, 1))
    qpos[:, 3:7] = Q.quat_from_axis_angle(np.array([1.0, 0.0, 0.0]), np.array([0.3, 0.0]))
    qvel = np.random.default_rng(0).uniform(-1.0, 1.0, (2, b.nv))
    b.set_state(np.arange(2), qpos, qvel)
    with create_backend("mujoco", SceneCfg(str(QUADRUPED)), 2, 0.002, np_dtype=np.float64) as mj:
        mj.set_state(np.arange(2), qpos, qvel)
        ids = np.arange(b.num_bodies)
        np.testing.assert_allclose(b.get_body_lin_vel_w(ids), mj.get_body_lin_vel_w(ids), atol=2e-5)
        np.testing.assert_allclose(b.get_body_ang_vel_w(ids), mj.get_body_ang_vel_w(ids), atol=2e-5)
        np.testing.assert_allclose(b.get_body_pos_w(ids), mj.get_body_pos_w(ids), atol=1e-6)


def test_pd_hold_stands_like_mujoco(quadruped):
    """1 s of PD hold at the home pose from z = 0.2848: the base settles near MuJoCo's height
    (contact tier: 5 mm) and stays level."""
    b = quadruped
    q0 = np.asarray(b.get_keyframe_qpos("home"), dtype=np.float64)
    b.set_state(np.arange(2), np.tile(q0, (2, 1)), np.zeros((2, b.nv)))
    ctrl = np.tile(q0[7:], (2, 1))
    b.step(ctrl, 500)
    with create_backend("mujoco", SceneCfg(str(QUADRUPED), default_keyframe="home"), 1, 0.002) as mj:
        mj.step(ctrl[:1], 500)
        z_mj = float(mj.get_base_pos()[0, 2])
    z = b.get_base_pos()[:, 2]
    np.testing.assert_allclose(z, z_mj, atol=5e-3)
    acc = b.get_sensor_data("imu_acc")
    np.testing.assert_allclose(np.linalg.norm(acc, axis=1), 9.81, atol=0.2)  # standing: the accelerometer reads g
    tilt = np.degrees(2 * np.arccos(np.clip(np.abs(b.get_base_quat()[:, 0]), 0, 1)))
    assert (tilt < 3.0).all(), tilt


def test_listed_as_missing_dependency_without_newton():
    """Without the engine the plugin is still listed, with an honest status naming the module."""
    code = ("import sys; sys.modules['newton'] = None\n"
            "from unisim_core import list_backends\n"
            "r = next(r for r in list_backends() if r.name == 'newton')\n"
            "assert r.status == 'missing_dependency' and 'newton' in r.reason, (r.status, r.reason)")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_option_gravity_reaches_the_engine(make, tmp_path):
    """Newton's MJCF importer ignores ``<option gravity>`` (it keeps -9.81 z); the plugin sets the file's
    vector: g = (3, 0, -5) on a COM at (0.5, 0, -0.5) from a y hinge gives 1 N·m on I = 0.01 + 0.5."""
    path = tmp_path / "gravity.xml"
    path.write_text('<mujoco><option gravity="3 0 -5"/><worldbody><body name="a" pos="0 0 1">'
                    '<joint name="j" type="hinge" axis="0 1 0"/>'
                    '<inertial pos="0.5 0 -0.5" mass="1" diaginertia="0.01 0.01 0.01"/></body></worldbody></mujoco>')
    b = make(path, num_envs=1, sim_dt=0.001)
    b.step(np.zeros((1, 0)), 1)
    np.testing.assert_allclose(b.get_qvel()[0, 0], 0.001 * 1.0 / 0.51, rtol=1e-4)


MULTI_JOINT = """<mujoco><compiler settotalmass="4"/><worldbody><body name="torso" pos="0 0 1">
  <joint name="rootx" type="slide" axis="1 0 0"/><joint name="rootz" type="slide" axis="0 0 1"/>
  <joint name="rooty" axis="0 1 0"/><geom size="0.1" mass="1"/>
  <body name="arm" pos="0.3 0 0"><joint name="a" axis="0 1 0" stiffness="4" springref="{springref}"/>
    <inertial pos="0 0 0" mass="1" diaginertia="0.1 0.1 0.1"/></body>
  <body name="arm2" pos="-0.3 0 0"><joint name="b" axis="0 1 0"/>
    <inertial pos="0 0 0" mass="1" diaginertia="0.1 0.1 0.1"/></body></body></worldbody>
  <equality><joint joint1="b" joint2="a"/></equality>
  <actuator><motor name="x" joint="rootx"/></actuator></mujoco>"""


def test_multi_joint_body_settotalmass_and_stiffness_act_as_in_mujoco(make, tmp_path):
    """Slides x, z and a hinge on one body (gymnasium's planar roots: Newton's one D6 joint),
    settotalmass="4" on masses 1 + 1 + 1 (the importer ignores it, the plugin applies it), joint
    stiffness and a joint equality (arm2 follows the sprung arm): five steps of dt
    from rest with u = 1 give MuJoCo's qvel. Then gymnasium hopper's root: the hinge away from the
    slides (Newton's D6 anchor moved to it) and a slide with a ref (MuJoCo's qpos = Newton's + ref)
    give MuJoCo's qpos and qvel from a spinning start; two hinges about different points are refused."""
    mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo")
    path = tmp_path / "multi.xml"
    path.write_text(MULTI_JOINT.format(springref=28.64788975654116))  # 0.5 rad in degrees
    b = make(path, num_envs=1, sim_dt=0.001)
    assert b.model_info.joint_names == ("rootx", "rootz", "rooty", "a", "b")
    b.step(np.ones((1, 1)), 5)
    m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.timestep = 0.001
    d = mujoco.MjData(m)
    d.ctrl[:] = 1.0
    mujoco.mj_step(m, d, 5)
    assert abs(d.qvel[3]) > 1e-3 and abs(d.qvel[4]) > 1e-4  # the spring acts, the equality drags arm2 along
    np.testing.assert_allclose(b.get_qvel()[0], d.qvel, rtol=1e-3, atol=1e-6)
    hopper = MULTI_JOINT.format(springref=0).replace('<joint name="rooty"', '<joint name="rooty" pos="0.1 0 -0.4"')
    path.write_text(hopper.replace('<joint name="rootz"', '<joint name="rootz" ref="0.7"'))
    b = make(path, num_envs=1, sim_dt=0.001)
    m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.timestep = 0.001
    d = mujoco.MjData(m)
    d.qpos[:] = m.qpos0 + [0.1, -0.2, 0.3, 0.1, 0.1]
    d.qvel[:] = [0.2, 0.1, 3.0, -1.0, 0.5]
    b.set_state(np.arange(1), d.qpos[None], d.qvel[None])
    np.testing.assert_allclose(b.get_qpos()[0], d.qpos, atol=1e-6)
    b.step(np.zeros((1, 1)), 100)
    mujoco.mj_step(m, d, 100)
    np.testing.assert_allclose(b.get_qpos()[0], d.qpos, atol=1e-4)
    np.testing.assert_allclose(b.get_qvel()[0], d.qvel, atol=1e-3)
    path.write_text(hopper.replace('<joint name="rootz" type="slide" axis="0 0 1"/>',
                                   '<joint name="rootz" axis="0 0 1" pos="0 0 0.2"/>'))
    with pytest.raises(UnsupportedCapabilityError) as info:
        make(path)
    assert info.value.capability == "multi_joint_body" and "about one point" in str(info.value)


def test_defaults_classes_reach_the_engine(make, tmp_path):
    """Joint damping/armature and actuator gear/ctrlrange from ``<default>`` load (the importer resolves
    them; the comparison passes) and act: a motor at u = 1 with gear 3 on I = 0.26 + 0.02 accelerates
    the joint from rest by 3 / 0.28 rad/s^2 minus gravity's torque (zero at q = 0, the COM below)."""
    path = tmp_path / "defaults.xml"
    path.write_text('<mujoco><default><joint damping="0.5" armature="0.02"/><motor gear="3" ctrlrange="-1 1"/>'
                    '</default><worldbody><body name="a" pos="0 0 1"><joint name="j" type="hinge" axis="0 1 0"/>'
                    '<inertial pos="0 0 -0.5" mass="1" diaginertia="0.01 0.01 0.01"/></body></worldbody>'
                    '<actuator><motor name="m" joint="j"/></actuator></mujoco>')
    b = make(path, num_envs=1, sim_dt=0.001)
    b.step(np.array([[2.0]]), 1)  # clamped to 1
    inertia = 0.01 + 1.0 * 0.5**2 + 0.02
    np.testing.assert_allclose(b.get_qvel()[0, 0], 0.001 * 3.0 / (inertia + 0.001 * 0.5), rtol=2e-3)


def test_option_solver_pgs_is_refused_by_name(make, tmp_path):
    """gymnasium humanoid's ``<option solver="PGS">``: MuJoCo Warp has no PGS (and Newton's importer fails
    parsing it as a number); the scene is refused as ``option_solver`` before any reader, so a humanoid
    is refused for the engine's limit, not for the fixed tendons the reader does not read."""
    path = tmp_path / "pgs.xml"
    path.write_text('<mujoco><option solver="PGS"/><worldbody><body name="a"><joint name="j" axis="0 1 0"/>'
                    '<geom size="0.1" mass="1"/></body></worldbody><tendon><fixed name="t"><joint joint="j" '
                    'coef="1"/></fixed></tendon></mujoco>')
    with pytest.raises(UnsupportedCapabilityError) as info:
        make(path)
    assert info.value.capability == "option_solver" and "'PGS'" in str(info.value)


FRC_RANGE = ('<mujoco><worldbody><body name="a" pos="0 0 1"><joint name="j" type="hinge" axis="0 1 0" '
             'actuatorfrcrange="{range}"/><inertial pos="0 0 -0.5" mass="1" diaginertia="0.01 0.01 0.01"/></body>'
             '</worldbody><actuator><motor name="m" joint="j" gear="2" ctrlrange="-10 10"/></actuator></mujoco>')


def test_joint_actuatorfrcrange_loads_and_clamps_as_in_mujoco(make, tmp_path):
    """A joint's ``actuatorfrcrange`` (pal_talos, booster_t1, pal_tiago...): Newton keeps it on the
    joint (``jnt_actfrcrange``), ``mjcf_lite`` folds it into the actuator's forcerange; the plugin
    compares the two as one limit (it refused every such scene as ``actuator_forcerange`` before).
    u = 5 at gear 2 asks 10 N·m, the joint gets 3: qvel after one step is 3 / I. Newton makes the range
    symmetric (max |bound|), so an asymmetric one is refused by name."""
    path = tmp_path / "frc.xml"
    path.write_text(FRC_RANGE.format(range="-3 3"))
    b = make(path, num_envs=1, sim_dt=0.001)
    b.step(np.array([[5.0]]), 1)
    inertia = 0.01 + 1.0 * 0.5**2
    np.testing.assert_allclose(b.get_qvel()[0, 0], 0.001 * 3.0 / inertia, rtol=2e-3)
    path.write_text(FRC_RANGE.format(range="-1 3"))
    with pytest.raises(UnsupportedCapabilityError) as info:
        make(path)
    assert info.value.capability == "joint_actuatorfrcrange" and "[-3.0, 3.0]" in str(info.value)


def _prism_scene(sides: int = 40, radius: float = 0.1, height: float = 0.04) -> str:
    """A puck (a prism of ``2 * sides`` vertices, all on its hull) dropped tilted onto a box table."""
    ang = np.arange(sides) * 2 * np.pi / sides
    ring = np.c_[radius * np.cos(ang), radius * np.sin(ang)]
    verts = np.concatenate([np.c_[ring, np.full(sides, -height / 2)], np.c_[ring, np.full(sides, height / 2)]])
    i, j, k = np.arange(sides), (np.arange(sides) + 1) % sides, np.arange(1, sides - 1)
    faces = np.concatenate([np.c_[0 * k, k + 1, k], np.c_[0 * k + sides, k + sides, k + 1 + sides],  # end caps
                            np.c_[i, j, j + sides], np.c_[i, j + sides, i + sides]])  # faces: Newton hulls bare
    # vertices with scipy
    return (f'<mujoco><option timestep="0.002"/><asset><mesh name="prism" vertex="'
            f'{" ".join(f"{v:.6f}" for v in verts.ravel())}" face="{" ".join(map(str, faces.ravel()))}"/></asset>'
            '<worldbody>'
            '<geom name="table" type="box" size="0.3 0.3 0.02" pos="0 0 -0.02"/>'
            '<body name="puck" pos="0 0 0.03" euler="0.15 0 0"><freejoint name="root"/><geom type="mesh" mesh="prism"/>'
            '<inertial pos="0 0 0" mass="0.5" diaginertia="0.0013 0.0013 0.0025"/>'
            '</body></worldbody></mujoco>')


def test_mesh_contacts_are_mujocos(make, tmp_path):
    """MuJoCo 4 collides a mesh as its whole convex hull and makes up to 4 contacts per convex pair
    (multi-CCD on); Newton's defaults cut the hull it hands MuJoCo Warp to 64 vertices and turn multi-CCD
    off (pal_talos' arms in its thighs: 14 contacts to MuJoCo's 34, dof_pos 0.21 off after 100 steps).
    Here a puck of 80 hull vertices lands tilted on a table: the hull keeps 80 vertices, 4 contacts
    hold it as in MuJoCo (in MuJoCo itself multi-CCD off moves qpos 0.012 after 150 steps, a 64-vertex hull 4e-5)."""
    mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo")
    path = tmp_path / "puck.xml"
    path.write_text(_prism_scene())
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    mujoco.mj_step(m, d, 150)
    b = make(path, num_envs=1, sim_dt=0.002)
    mj = b._solver.mj_model
    assert mj.mesh_graph[mj.mesh_graphadr[0]] == m.mesh_graph[m.mesh_graphadr[0]] == 80  # hull vertices
    b.step(np.zeros((1, 0)), 150)
    assert int(b._solver.mjw_data.nacon.numpy()[0]) == d.ncon == 4
    np.testing.assert_allclose(b.get_qpos()[0], d.qpos, atol=2e-4)


AGC_ARM = ('<mujoco><compiler angle="radian"/><worldbody><body name="arm" pos="0 0 1" gravcomp="1">'
           '<joint name="j" axis="0 1 0" actuatorfrcrange="-1 1" actuatorgravcomp="true"/>'
           '<inertial pos="0.25 0 0" mass="1" diaginertia="0.001 0.02 0.02"/></body></worldbody>'
           '<actuator><motor name="m" joint="j"/></actuator></mujoco>')


def test_gravcomp_and_actuatorgravcomp_act_as_in_mujoco(make, tmp_path):
    """``gravcomp`` and ``actuatorgravcomp`` reach MuJoCo Warp (the importer's ``mujoco:gravcomp`` /
    ``jnt_actgravcomp``, compared with the file after the build). Kit scene gravcomp (gravcomp 1, 0.5, 2 on
    free bodies, 1 and 0.5 on hinge arms) after 100 steps: MuJoCo's qpos ("sink" at 0.9009 m, "rise" at
    1.198 m, arm_half 0.29935 rad). An arm whose 2.45 N m of compensation goes through its actuator,
    clamped to actuatorfrcrange 1 N m: 0.35313 rad as MuJoCo (0 with the compensation passive). A value the
    importer lost would refuse the scene by name (shown with a file table edited to disagree)."""
    mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo")
    from unisim_conformance import SCENES_DIR
    from unisim_core.plugin.mjcf_lite import load_mjcf
    from unisim_newton._scene import ACCEPTED, build_model

    agc = tmp_path / "agc.xml"
    agc.write_text(AGC_ARM)
    for path in (SCENES_DIR / "gravcomp.xml", agc):
        m = mujoco.MjModel.from_xml_path(str(path))
        d = mujoco.MjData(m)
        mujoco.mj_step(m, d, 100)
        b = make(path, num_envs=2, sim_dt=0.002)
        b.step(np.zeros((2, b.num_actuators)), 100)
        np.testing.assert_allclose(b.get_qpos(), np.tile(d.qpos, (2, 1)), atol=1e-5, err_msg=str(path))
    assert d.qpos[0] == pytest.approx(0.35313, abs=1e-5)
    lite = load_mjcf(agc, accept=ACCEPTED)
    lite.body_gravcomp[1] = 0.5
    with pytest.raises(UnsupportedCapabilityError) as info:
        build_model(str(agc), lite, 1, "cpu")
    assert info.value.capability == "body_gravcomp" and "gives body gravcomp [1.0]" in str(info.value)


def test_graph_capture_replays_every_substep_bit_for_bit():
    """Each substep direction (state A -> B, B -> A) is captured once and replayed (``graph_capture``
    default): through contacts, a staged body wrench, a ``set_state`` of one env, an odd substep
    count and a snapshot restore the trajectory equals the plain Python launches bit for bit."""
    def run(**options):
        with create_backend("newton", SceneCfg(QUADRUPED, default_keyframe="home"), 2, 0.002, **options) as b:
            ctrl = np.tile(b.get_default_dof_pos(), (2, 1)).astype(np.float32)
            base = b.get_body_ids([b.model_info.body_names[1]])
            out, snap = [], None
            for k in range(10):
                if k == 2:
                    b.apply_body_force(base, np.array([[[0.0, 20.0, 0.0]], [[5.0, 0.0, 0.0]]]))
                if k == 4:
                    q = b.get_qpos().astype(np.float64)[:1]
                    q[0, 2] += 0.05
                    b.set_state(np.array([0]), q, np.zeros((1, b.nv)))
                    snap = b.get_physics_state()
                if k == 7:
                    b.set_physics_state(snap)
                b.step(ctrl, 3)
                out.append(np.concatenate([b.get_qpos(), b.get_qvel()], axis=1))
            return len(b._graphs), np.stack(out)

    graphs, replayed = run()
    none, plain = run(graph_capture=False)
    assert (graphs, none) == (2, 0)
    np.testing.assert_array_equal(replayed, plain)


def test_free_root_qvel_is_converted_on_the_device_like_numpy(quadruped):
    """``get_qvel``'s kernel (Newton's ``[v_com, w_world]`` -> MuJoCo's ``[v_origin, w_body]``, on the
    device, float64) gives what the core's numpy conversion gives from the same float32 engine rows,
    on a yawed, tumbling, sliding base; and ``set_state``'s inverse conversion round-trips."""
    b = quadruped
    qpos = np.tile(b.model_info.keyframes["home"], (2, 1))
    qpos[:, 3:7] = Q.quat_normalize(np.array([[0.9, 0.1, -0.3, 0.2], [0.5, -0.5, 0.5, 0.4]]))
    qvel = np.zeros((2, b.nv))
    qvel[:, 0:6] = [[0.3, -0.2, 0.1, 0.5, -1.0, 2.0], [1.0, 0.4, -0.7, -2.0, 0.3, 1.0]]
    b.set_state(np.arange(2), qpos, qvel)
    np.testing.assert_allclose(b.get_qvel()[:, :6], qvel[:, :6], atol=2e-6)  # float32 engine rows
    b.step(np.tile(b.get_default_dof_pos(), (2, 1)), 2)
    got = b._qvel(b.newton_state).copy()
    lay = b._layout
    _, joint_qd, body_q, body_qd = (a.astype(np.float64) for a in b._host(b.newton_state))
    row = lay.body_src[lay.free[0][2]]
    quat = Q.quat_xyzw_to_wxyz(body_q[:, row, 3:])
    com = b._com[:, lay.free[0][2] - 1]
    want = joint_qd[:, lay.qd_src]
    want[:, :3] = Q.com_to_origin_velocity(quat, body_qd[:, row, :3], body_qd[:, row, 3:], com)
    want[:, 3:6] = Q.quat_apply_inverse(quat, body_qd[:, row, 3:])
    assert np.abs(want[:, :6]).min() > 1e-3  # every free-root column is non-trivial
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("option", ["", '<option integrator="RK4"/>'])
def test_integrator_is_the_files(make, tmp_path, option):
    """MuJoCo's integrator is the file's, Euler when it names none; SolverMuJoCo's own default is
    implicitfast (a damped joint then moves otherwise), so the backend passes the file's."""
    mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo's compiled model")
    path = tmp_path / "damped.xml"
    path.write_text(f'<mujoco>{option}<worldbody><body name="arm"><joint name="j" damping="1"/>'
                    '<geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"/></body></worldbody></mujoco>')
    b = make(path)
    assert b._solver.mjw_model.opt.integrator == mujoco.MjModel.from_xml_path(str(path)).opt.integrator


def test_site_jacobian_is_mujocos(quadruped):
    """The shared site Jacobian (unisim_core.contract.kinematics) over Newton's body poses: MuJoCo's mj_jacSite
    of the quadruped's FL_foot site (free root) at a tilted, bent pose, to float32 (1e-5)."""
    mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo's mj_jacSite")
    m = mujoco.MjModel.from_xml_path(str(QUADRUPED))
    d = mujoco.MjData(m)
    d.qpos[:] = m.key_qpos[0]
    d.qpos[3:7] = Q.quat_normalize(np.array([0.9, 0.2, -0.3, 0.1]))
    d.qpos[7:] += np.linspace(-0.3, 0.3, m.nu)
    mujoco.mj_forward(m, d)
    site = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, "FL_foot")
    jacp, jacr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
    mujoco.mj_jacSite(m, d, jacp, jacr, site)
    quadruped.set_state(np.arange(2), np.tile(d.qpos, (2, 1)), np.zeros((2, m.nv)))
    got_p, got_r = quadruped.get_site_jacobian_w(quadruped.get_site_ids(["FL_foot"])[0], np.arange(m.nv))
    np.testing.assert_allclose(got_p, np.broadcast_to(jacp, got_p.shape), atol=1e-5)
    np.testing.assert_allclose(got_r, np.broadcast_to(jacr, got_r.shape), atol=1e-5)


DRONE = """<mujoco><option timestep="0.002"/><worldbody><body name="drone" pos="0 0 1"><freejoint/>
  <geom type="box" size="0.1 0.08 0.02" mass="0.5"/><site name="rotor" pos="0.05 0.02 0.02" euler="0.1 0 0"/>
</body></worldbody><actuator><motor name="thrust" site="rotor" gear="0 0 1 0 0 0" ctrlrange="0 10"/>
  <motor name="yaw" site="rotor" gear="0 0 0 0 0 0.01"/></actuator></mujoco>"""


def test_site_motors_push_and_turn_as_in_mujoco(make, tmp_path):
    """Site transmissions (Menagerie's drones): a thrust along the tilted rotor site's z off the COM and a
    yaw moment about it hold up and turn a free box as in MuJoCo (0.3 s, tight tier 1e-4)."""
    mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo")
    path = tmp_path / "drone.xml"
    path.write_text(DRONE)
    b = make(path, num_envs=1)
    assert b.model_info.actuator_joint.tolist() == [-1, -1]
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    d.ctrl[:] = [6.0, 2.0]
    mujoco.mj_step(m, d, 150)
    b.step(np.array([[6.0, 2.0]]), 150)
    assert d.qpos[2] > 0.7 and abs(d.qpos[6]) > 0.01  # free fall ends at 0.56 m; the yaw moment turned it
    np.testing.assert_allclose(b.get_qpos()[0], d.qpos, atol=1e-4)


def test_a_model_without_joints_loads(make, tmp_path):
    """A static model (Menagerie's realsense_d435i: one body fixed to the world, no joints, no dofs):
    SolverMuJoCo's tables hold no joint attributes, which the checks must not need."""
    path = tmp_path / "static.xml"
    path.write_text('<mujoco><worldbody><body name="cam" pos="0 0 1"><geom type="capsule" size="0.02 0.01"/>'
                    '</body></worldbody></mujoco>')
    b = make(path)
    b.step(np.zeros((2, 0)), 2)
    assert b.nq == b.nv == 0 and b.get_body_pos_w(b.get_body_ids(["cam"]))[0, 0, 2] == 1.0


def test_the_importers_frames_and_inertias_are_audited(tmp_path):
    """Body poses at the file's pose, COMs, inertia tensors and hinge anchors of Newton's import are
    compared with mjcf_lite's (MuJoCo's compile): a body mjcf_lite places 1 mm elsewhere (as a <frame> the
    importer missed would) is refused by name; a 1e-11 kg m^2 inertia stays the file's (Newton's finalize
    would raise it by 1e-6, gymnasium pusher's object)."""
    from unisim_core.plugin.mjcf_lite import load_mjcf
    from unisim_newton._scene import ACCEPTED, build_model

    path = tmp_path / "tiny.xml"
    path.write_text('<mujoco><worldbody><body name="arm" pos="0 0 1"><joint name="j" axis="0 1 0"/>'
                    '<inertial pos="0.1 0 0" mass="1e-8" diaginertia="1e-11 1e-11 1.5e-11"/></body>'
                    '</worldbody></mujoco>')
    lite = load_mjcf(path, accept=ACCEPTED)
    model, _ = build_model(str(path), lite, 1, "cpu")
    np.testing.assert_allclose(np.diag(model.body_inertia.numpy()[0]), [1e-11, 1e-11, 1.5e-11], rtol=1e-6)
    lite.body_pos[1] = lite.body_pos[1] + [0.001, 0, 0]
    with pytest.raises(UnsupportedCapabilityError) as info:
        build_model(str(path), lite, 1, "cpu")
    assert info.value.capability == "body" and "body positions at the file's pose" in str(info.value)


def test_the_importers_collision_geoms_are_audited(make, tmp_path):
    """Every primitive geom SolverMuJoCo collides has mjcf_lite's size and pose in its body (up to the
    primitive's symmetries; unnamed geoms matched per body in file order): a capsule mjcf_lite sizes 1 mm
    larger than the importer (as a fit or fromto computed otherwise would be) is refused by name."""
    from unisim_core.plugin.mjcf_lite import load_mjcf
    from unisim_newton._scene import ACCEPTED, build_model, build_solver

    path = tmp_path / "geoms.xml"
    path.write_text('<mujoco><worldbody><geom type="plane" size="1 1 0.1"/><body pos="0 0 1"><freejoint/>'
                    '<geom type="box" size="0.1 0.2 0.3" pos="0.1 0 0" euler="0.3 0.2 0.1"/>'
                    '<geom type="capsule" fromto="0 0 0 0 0.3 0.4" size="0.05"/></body></worldbody></mujoco>')
    make(path)  # loads: the audit passes
    lite = load_mjcf(path, accept=ACCEPTED)
    lite.geoms[2]["size"] = lite.geoms[2]["size"] + [0.001, 0, 0]
    model, layout = build_model(str(path), lite, 1, "cpu")
    with pytest.raises(UnsupportedCapabilityError) as info:
        build_solver(model, str(path), lite, layout=layout)
    assert info.value.capability == "geom_size" and "size" in str(info.value)


BALL = """<mujoco><option timestep="0.001" magnetic="0.1 -0.4 0.2"/><worldbody>
  <body name="base" pos="0 0 1" euler="0.2 0 0"><freejoint/><geom type="box" size="0.1 0.1 0.05" mass="2"/>
    <body name="rod" pos="0.1 0 -0.05"><joint name="ball" type="ball" damping="0.01"/>
      <geom type="capsule" fromto="0 0 0 0.2 0.1 -0.3" size="0.02" mass="0.3"/><site name="tip" pos="0.2 0.1 -0.3"/>
      <body name="arm" pos="0.2 0.1 -0.3"><joint name="h" axis="0 1 0"/><geom size="0.03" mass="0.1"/></body>
    </body></body></worldbody>
  <actuator><motor name="m" joint="h" gear="2"/></actuator>
  <sensor><magnetometer name="mag" site="tip"/><actuatorpos name="len" actuator="m"/>
    <gyro name="gyro" site="tip" cutoff="0.3"/><jointvel name="hv" joint="h"/></sensor></mujoco>"""


def test_ball_joints_and_their_sensors_move_as_in_mujoco(make, tmp_path):
    """A ball joint (agility_cassie's rods) under a free base: Newton's quaternion [x y z w] and parent-frame
    angular velocity are MuJoCo's wxyz and body-frame ones (a state written reads back; 0.1 s of a tumbling
    chain gives MuJoCo's qpos to 1e-4); a magnetometer, an actuatorpos and a gyro clamped by
    its cutoff read what MuJoCo's sensors read at the same state. (The motor stays off: with 1 on it raw
    MuJoCo Warp itself leaves MuJoCo by 6e-3 rad/s in 10 steps of this chain.)"""
    mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo")
    path = tmp_path / "ball.xml"
    path.write_text(BALL)
    b = make(path, num_envs=1, sim_dt=0.001)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    d.qpos[7:11] = Q.quat_normalize(np.array([0.9, 0.3, -0.2, 0.1]))
    d.qvel[:] = [0.1, 0, 0.2, 0.5, -0.3, 0.2, 2.0, -1.0, 1.5, 0.7]
    b.set_state(np.arange(1), d.qpos[None], d.qvel[None])
    np.testing.assert_allclose(b.get_qvel()[0], d.qvel, atol=1e-6)
    b.step(np.zeros((1, 1)), 100)
    mujoco.mj_step(m, d, 100)
    np.testing.assert_allclose(b.get_qpos()[0], d.qpos, atol=1e-4)
    np.testing.assert_allclose(b.get_qvel()[0], d.qvel, atol=1e-3)
    d.qpos[:], d.qvel[:] = b.get_qpos()[0], b.get_qvel()[0]
    mujoco.mj_forward(m, d)
    for name, adr, dim in zip(("mag", "len", "gyro", "hv"), m.sensor_adr, m.sensor_dim):
        np.testing.assert_allclose(b.get_sensor_data(name)[0], d.sensordata[adr:adr + dim], atol=1e-5, err_msg=name)
    assert np.abs(d.sensordata[m.sensor_adr[2]:m.sensor_adr[2] + 3]).max() == pytest.approx(0.3)  # the cutoff acts
    path.write_text(BALL.replace("<freejoint/>", ""))  # the ball turns a root under a static body: refused
    with pytest.raises(UnsupportedCapabilityError, match="fixed to the world") as info:
        make(path, num_envs=1)
    assert info.value.capability == "ball_joint"


WXAI = Path(__file__).resolve().parents[3].parent / "shared" / "corpus" / "menagerie" / "trossen_wxai" / "scene.xml"


@pytest.mark.skipif(not WXAI.is_file(), reason=f"the Menagerie corpus is not at {WXAI.parent.parent} "
                    "(../shared/corpus/menagerie from the repository root)")
def test_mesh_bodies_get_the_files_masses():
    """Newton's importer computes mesh volumes its own way: trossen_wxai's base link 0.2575337 kg against
    MuJoCo's 0.2575049 (1.1e-4); it was refused as ``body_mass``. Within 1e-3 the file's mass is written
    (the inertia scaled alike), so the scene builds with MuJoCo's masses (float32 on Newton)."""
    import mujoco

    want = mujoco.MjModel.from_xml_path(str(WXAI)).body_mass
    with create_backend("newton", SceneCfg(str(WXAI)), 1, 0.002) as sim:
        got = sim.get_model_field("body_mass")[0]
    np.testing.assert_allclose(got, want, rtol=2e-7)
