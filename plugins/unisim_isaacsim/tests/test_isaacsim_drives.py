"""MJCF actuators as PhysX drives (``unisim_physx``) in Isaac Lab's configs, checked against the
forces real MuJoCo computes."""

from __future__ import annotations

import numpy as np
import pytest
from isaacsim_testing import import_or_skip_outside_ci

from unisim_core.plugin.mjcf_lite import load_mjcf
from unisim_isaacsim._drives import joint_actuator_cfgs
from unisim_physx import FRICTION_DAMPING, physx_drives

mujoco = import_or_skip_outside_ci("mujoco", "the reference forces come from MuJoCo (pip install mujoco)")

MJCF = """<mujoco>
  <option gravity="0 0 0"/>
  <worldbody>
    <body name="a"><joint name="j_pos" type="hinge" axis="0 1 0" damping="{damping}" armature="0.01"/>
      <inertial pos="0 0 -0.25" mass="1" diaginertia="0.02 0.02 0.001"/>
      <geom type="capsule" size="0.05" fromto="0 0 0 0 0 -0.5" mass="0"/>
      <body name="b" pos="0 0 -0.5"><joint name="j_motor" type="slide" axis="1 0 0"/>
        <inertial pos="0 0 0" mass="1" diaginertia="0.001 0.001 0.001"/>
        <body name="c"><joint name="j_free_spin" type="hinge" axis="0 0 1" damping="0.25"/>
          <inertial pos="0 0 0" mass="0.5" diaginertia="0.001 0.001 0.001"/></body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position name="p" joint="j_pos" gear="2" kp="50" kv="3" forcelimited="true" forcerange="-{flim} {flim}"/>
    <motor name="m" joint="j_motor" gear="3" forcelimited="true" forcerange="-2 2"/>
  </actuator>
</mujoco>"""


def _models(tmp_path, damping=0.5, flim=40.0):
    path = tmp_path / "drives.xml"
    path.write_text(MJCF.format(damping=damping, flim=flim))
    lite = load_mjcf(str(path))
    return mujoco.MjModel.from_xml_path(str(path)), physx_drives(lite.joints, lite.actuators)


def _mujoco_force(model, q, qd, ctrl):
    data = mujoco.MjData(model)
    data.qpos[:], data.qvel[:], data.ctrl[:] = q, qd, ctrl
    mujoco.mj_forward(model, data)
    return data.qfrc_actuator + data.qfrc_passive


def _physx_force(d, q, qd, ctrl):
    """What PhysX applies at (q, qd): the implicit drive (stiffness 0) -damping qd, plus the efforts."""
    return d.efforts(ctrl[None, :], q[None, :], qd[None, :])[0] - d.damping * qd


def test_drives_are_dampers_and_efforts_carry_kp(tmp_path):
    """The drive gets no stiffness (an implicit kp would damp an undamped servo: docs/sapien.md);
    the old mapping (stiffness = gear² kp) fails this."""
    _, d = _models(tmp_path)
    assert d.joints == ("j_pos", "j_motor", "j_free_spin")
    np.testing.assert_allclose(d.damping, [4 * 3 + 0.5, 0, 0.25])
    np.testing.assert_allclose(d.armature, [0.01, 0, 0])
    cfgs = joint_actuator_cfgs(lambda **kw: kw, d, {n: n for n in d.joints}, 1e9)
    assert [c["stiffness"] for c in cfgs.values()] == [0.0, 0.0, 0.0]
    assert [c["friction"] for c in cfgs.values()] == [0.0, 0.0, 0.0]
    q, qd, ctrl = np.array([0.1, 0.0, 0.0]), np.zeros(3), np.array([0.3, 0.0])
    assert d.efforts(ctrl[None], q[None], qd[None])[0, 0] == pytest.approx(2 * 50 * (0.3 - 2 * 0.1))


@pytest.mark.parametrize("q, qd, ctrl", [
    ([0.1, 0.02, 0.3], [0.4, -0.2, 1.0], [0.3, 0.5]),
    ([-0.2, 0.0, 0.0], [0.0, 0.3, -2.0], [-0.1, 5.0]),  # motor saturates at forcerange
])
def test_physx_forces_equal_mujoco_actuator_and_damping_forces(tmp_path, q, qd, ctrl):
    model, d = _models(tmp_path)
    q, qd, ctrl = map(np.array, (q, qd, ctrl))
    np.testing.assert_allclose(_physx_force(d, q, qd, ctrl), _mujoco_force(model, q, qd, ctrl), atol=1e-9)


@pytest.mark.parametrize("damping", [0.0, 0.5])
def test_saturated_servo_and_joint_damping_like_mujoco(tmp_path, damping):
    """MuJoCo caps the actuator force only, never the joint damping; so does the mapping now (the old
    one put the damping on the drive and capped it with the servo: 3.0 instead of 2.8)."""
    model, d = _models(tmp_path, damping=damping, flim=1.5)
    q, qd, ctrl = np.array([0.5, 0, 0]), np.array([0.4, 0, 0]), np.array([2.0, 0.0])
    mj = _mujoco_force(model, q, qd, ctrl)
    assert mj[0] == pytest.approx(3.0 - damping * 0.4)
    np.testing.assert_allclose(_physx_force(d, q, qd, ctrl)[0], mj[0], atol=1e-12)


def _act(**kw):
    base = {"name": "a", "kind": "position", "joint": 0, "gear": 1.0, "forcerange": (-np.inf, np.inf),
            "ctrlrange": (-np.inf, np.inf), "kp": 1.0, "kv": 0.0}
    return {**base, **kw}


HINGE = [{"name": "j", "type": "hinge", "damping": 0, "armature": 0}]


@pytest.mark.parametrize("joints, actuators, match", [
    (HINGE, [_act(gear=0.0)], "gear must be finite and non-zero"),
    ([{"name": "r", "type": "free", "damping": 0, "armature": 0}], [_act()], "'r' is not a hinge/slide joint"),
])
def test_unmappable_actuators_fail_closed(joints, actuators, match):
    with pytest.raises(ValueError, match=match):
        physx_drives(joints, actuators)


def test_frictionloss_is_a_force_limited_drive_and_damping_goes_explicit():
    """The shared mapping of frictionloss f: drive damping FRICTION_DAMPING limited to f (MuJoCo's dry
    friction as a bounded velocity constraint, measured on PhysX in unisim-sapien), the joint's
    damping and its servo's kv then explicit efforts."""
    joints = [{"name": "j", "type": "hinge", "damping": 0.3, "armature": 0.0, "frictionloss": 0.05}]
    d = physx_drives(joints, [_act(kp=10.0, kv=2.0)])
    assert d.damping[0] == FRICTION_DAMPING and d.force_limit[0] == 0.05
    cfg = joint_actuator_cfgs(lambda **kw: kw, d, {"j": "j"}, 1e9)["j0"]
    assert (cfg["damping"], cfg["effort_limit_sim"], cfg["stiffness"]) == (FRICTION_DAMPING, 0.05, 0.0)
    q, qd = np.array([[0.1]]), np.array([[0.5]])
    assert d.efforts(np.array([[0.3]]), q, qd)[0, 0] == pytest.approx(10.0 * 0.2 - 2.0 * 0.5 - 0.3 * 0.5)


ONE_SERVO_PER_JOINT = """<mujoco>
  <option gravity="0 0 0" integrator="implicitfast"/>
  <worldbody>
    <body name="a"><joint name="j0" type="hinge" axis="0 1 0" damping="0.2"/>
      <inertial pos="0 0 -0.25" mass="1" diaginertia="0.02 0.02 0.001"/>
      <body name="b" pos="0 0 -0.5"><joint name="j1" type="hinge" axis="1 0 0"/>
        <inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 0.01"/></body>
    </body>
  </worldbody>
  <actuator>
    <position joint="j0" gear="{g0}" kp="40" kv="2" forcelimited="true" forcerange="-3 3"/>
    <position joint="j1" gear="{g1}" kp="25" kv="1" ctrlrange="-0.5 0.5"/>
  </actuator>
</mujoco>"""


@pytest.mark.parametrize("gears", [(1.0, 1.0), (2.0, 1.0)])
def test_one_servo_per_joint_uses_whole_vectors_like_mujoco(tmp_path, gears):
    """Actuator i driving joint i (every robot with one servo per joint) takes the whole-vector law
    (``servo``'s direct path, a unit gear skipped; one env's 1-D vectors too): MuJoCo's forces, with
    the ctrl clamp and the force clamp both met."""
    path = tmp_path / "servos.xml"
    path.write_text(ONE_SERVO_PER_JOINT.format(g0=gears[0], g1=gears[1]))
    lite = load_mjcf(str(path))
    d = physx_drives(lite.joints, lite.actuators, implicit_kv=True)
    model = mujoco.MjModel.from_xml_path(str(path))
    q, qd, ctrl = np.array([[0.4, -0.1], [0.0, 0.2]]), np.array([[0.3, 1.0], [-0.5, 0.0]]), np.array([[-1.0, 0.9],
                                                                                                      [0.1, 0.2]])
    assert d.whole_vectors and d._effort_terms[7] == (gears[0] != 1.0)  # whether geared
    got = d.servo(ctrl)(q, qd)
    assert abs(got[0, 0] - d.gear[0] ** 2 * 2 * qd[0, 0]) == 3.0 * gears[0]  # forcerange met (with the kv term)
    for i in range(2):
        np.testing.assert_allclose(got[i] - d.damping * qd[i], _mujoco_force(model, q[i], qd[i], ctrl[i]), atol=1e-9)
        assert np.array_equal(d.servo(ctrl[i])(q[i], qd[i]), got[i])  # one env's (nu,) vectors: the same bits


def test_dampratio_servos_carry_mujocos_kv_through_the_real_worker(tmp_path):
    """``<position dampratio>`` (read by both host and worker, ``ACCEPTED_FEATURES``): the reader derives
    MuJoCo's kv from the mass matrix at qpos0, and the worker's per-env drives carry it (its
    ``actuator_kd`` field == MuJoCo's compiled ``-biasprm[2]``), on the SDK stubs for both generations."""
    import os
    import sys
    from pathlib import Path

    from isaacsim_testing import USD_EXTRA
    from isaacsim_testing.stub_sdk import LAB_ENV
    from isaacsim_testing.stub_sdk_run import StubSdkIsaacSim

    from unisim_core import SceneCfg
    from unisim_isaacsim._runtime import PYTHON_ENV

    import_or_skip_outside_ci("physx_usd_schemas", USD_EXTRA)
    text = (Path(__file__).parent / "models" / "welded_arm.xml").read_text()
    old = '<position kp="80" kv="4" forcerange'
    assert old in text
    path = tmp_path / "welded_arm_dampratio.xml"
    path.write_text(text.replace(old, '<position kp="80" dampratio="0.9" forcerange'))
    m = mujoco.MjModel.from_xml_path(str(path))
    servos = [a for a in range(m.nu) if m.actuator_biasprm[a, 1] != 0]
    kv = -m.actuator_biasprm[servos, 2]
    assert len(servos) == 3 and (kv > 0).all()
    for lab in (2, 3):
        saved = {k: os.environ.get(k) for k in (LAB_ENV, PYTHON_ENV)}
        os.environ[LAB_ENV], os.environ[PYTHON_ENV] = str(lab), sys.executable
        try:
            b = StubSdkIsaacSim(SceneCfg(str(path), default_keyframe="home"), 2, 0.002, device="cuda:0",
                                init_timeout_s=120.0, call_timeout_s=60.0)
        finally:
            for k, v in saved.items():
                os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
        try:
            np.testing.assert_allclose(b.get_model_field("actuator_kd")[:, servos], np.tile(kv, (2, 1)), rtol=1e-9)
        finally:
            b.close()
