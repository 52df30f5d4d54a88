"""Grippers and linkages on PhysX (SAPIEN 3, CPU) against MuJoCo: actuators on fixed tendons, ``<general>``
servos with their own ctrl gain, and connect equalities closing a loop.

Each test has a known answer: MuJoCo's trajectory of the same file, a closed-form steady state, or an
anchor that must stay put.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from unisim_core import SceneCfg, UnsupportedCapabilityError, create_backend
from unisim_core.contract import quat as Q

pytest.importorskip("mujoco", reason="the reference trajectories come from MuJoCo (pip install mujoco)")

CORPUS = Path(__file__).resolve().parents[3].parent / "shared" / "corpus" / "menagerie"  # never copied in

#: Two fingers sliding apart from a fixed palm, both driven through one fixed tendon (a gripper's "split").
FINGERS = """<mujoco><option timestep="0.002" integrator="implicitfast"/><worldbody>
  <body name="palm" pos="0 0 0.2">
    <body name="left" pos="0 0.03 0"><joint name="yl" type="slide" axis="0 1 0"/>
      <geom type="box" size="0.005 0.005 0.02" mass="{ml}" contype="0" conaffinity="0"/></body>
    <body name="right" pos="0 -0.03 0"><joint name="yr" type="slide" axis="0 -1 0"/>
      <geom type="box" size="0.005 0.005 0.02" mass="{mr}" contype="0" conaffinity="0"/></body></body></worldbody>
  <tendon><fixed name="split"><joint joint="yl" coef="0.5"/><joint joint="yr" coef="0.5"/></fixed></tendon>
  <actuator><position name="grip" tendon="split" kp="100" kv="{kv}" ctrlrange="-0.02 0.05"/></actuator></mujoco>"""

#: A four-bar linkage in the x-z plane: crank (motor) and coupler in one chain, the rocker a second world
#: child; the connect equality pins the coupler's end to the rocker's.
FOURBAR = """<mujoco><option timestep="0.002" integrator="implicitfast"/><worldbody>
  <body name="crank"><joint name="a" type="hinge" axis="0 1 0" damping="0.05"/>
    <geom type="capsule" fromto="0 0 0 0.1 0 0" size="0.01" mass="0.2" contype="0" conaffinity="0"/>
    <body name="coupler" pos="0.1 0 0"><joint name="b" type="hinge" axis="0 1 0" damping="0.05"/>
      <geom type="capsule" fromto="0 0 0 0 0 0.3" size="0.01" mass="0.3" contype="0" conaffinity="0"/></body></body>
  <body name="rocker" pos="0.3 0 0"><joint name="c" type="hinge" axis="0 1 0" damping="0.05"/>
    <geom type="capsule" fromto="0 0 0 -0.2 0 0.3" size="0.01" mass="0.2" contype="0" conaffinity="0"/></body>
  </worldbody>
  <equality><connect body1="coupler" body2="rocker" anchor="0 0 0.3" solref="0.004 1" active="{active}"/></equality>
  <actuator><motor name="m" joint="a" gear="1"/></actuator></mujoco>"""

#: A hinge held by ``<general>``: ``0.5 u - 10 q - 1 qd`` (neither a position nor a velocity shortcut).
GENERAL = """<mujoco><option timestep="0.002" integrator="implicitfast" gravity="0 0 0"/><worldbody>
  <body name="arm"><joint name="j" type="hinge" axis="0 1 0"/>
    <inertial pos="0 0 -0.25" mass="1" diaginertia="0.02 0.02 0.001"/></body></worldbody>
  <actuator><general name="g" joint="j" gainprm="0.5" biasprm="0 -10 -1" biastype="affine"/></actuator></mujoco>"""


def _runs(path, u: float, steps: int, backend: str, record=None) -> np.ndarray:
    """qpos after each of ``steps`` steps holding ctrl ``u`` (and ``record(b)`` per step when given)."""
    b = create_backend(backend, SceneCfg(model_file=str(path)), 1, 0.002)
    out = []
    for _ in range(steps):
        b.step(np.full((1, b.num_actuators), u, dtype=b.np_dtype), 1)
        out.append(record(b) if record else b.get_qpos()[0].astype(np.float64))
    b.close()
    return np.array(out)


@pytest.mark.parametrize("kv, masses, tol", [(0.0, (0.1, 0.1), 1e-6), (300.0, (0.1, 0.1), 3e-5),
                                             (300.0, (0.1, 0.3), 1e-3)])
def test_a_tendon_servo_follows_mujoco(tmp_path, kv, masses, tol):
    """A position servo on a fixed tendon (length 0.5 yl + 0.5 yr) pulls both fingers, as in MuJoCo. Its kv
    (300: gear² kv dt / m = 3 on the tendon's 0.2 kg, explicitly unstable) is MuJoCo's implicit step: within
    3e-5 m over 0.6 s when the fingers move together (measured 1.0e-5); with unequal fingers the armature
    along the tendon damps their antisymmetric motion too (measured 4.7e-4 m of a 7 mm travel)."""
    path = tmp_path / "fingers.xml"
    path.write_text(FINGERS.format(kv=kv, ml=masses[0], mr=masses[1]))
    want, got = _runs(path, 0.03, 300, "mujoco"), _runs(path, 0.03, 300, "sapien")
    assert np.abs(want).max() > 3e-3  # the fingers travel
    assert np.abs(got - want).max() < tol


def test_a_general_servo_keeps_its_own_ctrl_gain(tmp_path):
    """``gain 0.5, bias 0 -10 -1``: q settles at 0.5 u / 10 (0.05 rad for u = 1), MuJoCo's trajectory within 1e-6."""
    path = tmp_path / "general.xml"
    path.write_text(GENERAL)
    want, got = _runs(path, 1.0, 600, "mujoco")[:, 0], _runs(path, 1.0, 600, "sapien")[:, 0]
    assert abs(want[-1] - 0.05) < 5e-4
    assert np.abs(got - want).max() < 1e-6


def test_a_connect_equality_closes_a_four_bar_loop(tmp_path):
    """The crank driven at 0.3 N m turns 2.25 rad in 0.6 s and the rocker, a separate world child, follows it
    through the connect equality: PhysX keeps the two anchors within 1e-4 m and every joint within 2e-3 rad
    of MuJoCo's (measured 7e-4); with the equality inactive the rocker swings on its own, as in MuJoCo."""
    path = tmp_path / "fourbar.xml"
    path.write_text(FOURBAR.format(active="true"))

    def gap(b):
        ids = np.array([2, 3])  # coupler, rocker
        pos, quat = b.get_body_pos_w(ids)[0], b.get_body_quat_w(ids)[0]
        world = pos + Q.quat_apply(quat, np.array([[0.0, 0.0, 0.3], [-0.2, 0.0, 0.3]]))
        return np.linalg.norm(world[0] - world[1])

    want, got = _runs(path, 0.3, 300, "mujoco"), _runs(path, 0.3, 300, "sapien")
    assert want[-1, 0] > 2.0 and abs(want[-1, 2]) > 0.3
    assert np.abs(got - want).max() < 2e-3
    assert _runs(path, 0.3, 300, "sapien", record=gap).max() < 1e-4
    path.write_text(FOURBAR.format(active="false"))
    free = _runs(path, 0.3, 300, "sapien")
    assert np.abs(free[:, 2] - want[:, 2]).max() > 0.1  # the loop is what moves the rocker so
    assert np.abs(free - _runs(path, 0.3, 300, "mujoco")).max() < 1e-4


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the Menagerie corpus (../shared/corpus/menagerie) is absent")
def test_menagerie_grippers_close_as_in_mujoco():
    """Real grippers closing from open: umi_gripper (a position servo on the fingers' fixed tendon) within
    2e-4 m of MuJoCo over 300 steps (measured 1e-4); ufactory_xarm7's hand (a <general> servo on a tendon, a
    joint equality and two connect equalities closing its four-bar fingers) ends within 0.02 rad of
    MuJoCo's closed pose (measured 0.009: MuJoCo's soft frictionloss creeps on)."""
    from unisim_core.tools.compare import hold_position_ctrl

    for robot, actuator, u, joints, tol in (("umi_gripper", "fingers_actuator", 0.04, "finger", 2e-4),
                                            ("ufactory_xarm7", "gripper", 255.0, "right_", 0.02)):
        finals = []
        for name in ("mujoco", "sapien"):
            b = create_backend(name, SceneCfg(model_file=str(CORPUS / robot / "scene.xml")), 1, 0.002)
            info = b.model_info
            cols = [info.joint_qposadr[j] for j, n in enumerate(info.joint_names) if joints in n]
            ctrl = hold_position_ctrl(b).copy()
            ctrl[:, list(b.get_actuator_names()).index(actuator)] = u
            b.step(ctrl, 300)
            finals.append(b.get_qpos()[0, cols].astype(np.float64))
            b.close()
        assert np.abs(finals[0]).max() > 0.03  # it closed
        assert np.abs(finals[1] - finals[0]).max() < tol, robot


@pytest.mark.parametrize(("scene", "feature", "reason"), [
    ('<worldbody><body name="a"><joint name="j" type="ball"/><geom size="0.1" mass="1"/></body></worldbody>',
     "ball_joint", "no spherical joint"),
    ('<worldbody><body name="a" gravcomp="1"><joint name="j" axis="0 1 0" actuatorgravcomp="true"/>'
     '<geom size="0.1" mass="1"/></body></worldbody><actuator><motor joint="j"/></actuator>',
     "joint_actuatorgravcomp", "PhysX compensates gravity per link"),
])
def test_a_refusal_names_sapiens_limit(tmp_path, scene, feature, reason):
    """What SAPIEN's PhysX has no counterpart for is refused by its MJCF feature name with the engine's reason."""
    path = tmp_path / "scene.xml"
    path.write_text(f"<mujoco>{scene}</mujoco>")
    with pytest.raises(UnsupportedCapabilityError) as info:
        create_backend("sapien", SceneCfg(model_file=str(path)), 1, 0.002)
    assert info.value.capability == feature and reason in str(info.value)
