"""MJCF actuators as implicit PhysX drives, checked against the forces real MuJoCo computes."""

from __future__ import annotations

import numpy as np
import pytest

from unisim_core.mjcf_lite import load_mjcf
from unisim_isaacsim._drives import joint_drives
from unisim_isaacsim.testing import import_or_skip_outside_ci

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
    return mujoco.MjModel.from_xml_path(str(path)), joint_drives(lite.joints, lite.actuators)


def _mujoco_force(model, q, qd, ctrl):
    data = mujoco.MjData(model)
    data.qpos[:], data.qvel[:], data.ctrl[:] = q, qd, ctrl
    mujoco.mj_forward(model, data)
    return data.qfrc_actuator + data.qfrc_passive


def _drive_force(d, q, qd, ctrl):
    """What the implicit drives apply: PD toward the targets, clamped, plus the motor efforts."""
    pos_t, eff = d.targets(ctrl[None, :])
    target = np.zeros(len(d.joints))
    target[d.act_joint[d.is_position]] = pos_t[0]
    stiff = d.stiffness
    force = np.clip(stiff * (target - q) - d.damping * qd, -d.effort_limit, d.effort_limit)
    force[d.act_joint[~d.is_position]] += eff[0]
    return force


def test_gains_follow_gear_kp_kv_and_joint_damping(tmp_path):
    _, d = _models(tmp_path)
    assert d.joints == ("j_pos", "j_motor", "j_free_spin")
    np.testing.assert_allclose(d.stiffness, [4 * 50, 0, 0])
    np.testing.assert_allclose(d.damping, [4 * 3 + 0.5, 0, 0.25])
    np.testing.assert_allclose(d.effort_limit, [2 * 40, np.inf, np.inf])
    np.testing.assert_allclose(d.armature, [0.01, 0, 0])


@pytest.mark.parametrize("q, qd, ctrl", [
    ([0.1, 0.02, 0.3], [0.4, -0.2, 1.0], [0.3, 0.5]),
    ([-0.2, 0.0, 0.0], [0.0, 0.3, -2.0], [-0.1, 5.0]),  # motor saturates at forcerange
])
def test_drive_forces_equal_mujoco_actuator_and_damping_forces(tmp_path, q, qd, ctrl):
    model, d = _models(tmp_path)
    q, qd, ctrl = map(np.array, (q, qd, ctrl))
    np.testing.assert_allclose(_drive_force(d, q, qd, ctrl), _mujoco_force(model, q, qd, ctrl), atol=1e-9)


def test_position_actuator_saturates_like_mujoco(tmp_path):
    model, d = _models(tmp_path, damping=0.0, flim=1.5)
    q, qd, ctrl = np.array([0.5, 0, 0]), np.zeros(3), np.array([2.0, 0.0])
    mj = _mujoco_force(model, q, qd, ctrl)
    assert abs(mj[0]) == pytest.approx(3.0)  # |gear| * forcerange
    np.testing.assert_allclose(_drive_force(d, q, qd, ctrl)[0], mj[0], atol=1e-12)


def _act(**kw):
    base = {"name": "a", "kind": "position", "joint": 0, "gear": 1.0, "forcerange": (-np.inf, np.inf),
            "kp": 1.0, "kv": 0.0}
    return {**base, **kw}


HINGE = [{"name": "j", "type": "hinge", "damping": 0, "armature": 0}]


@pytest.mark.parametrize("joints, actuators, match", [
    (HINGE, [_act(forcerange=(-1.0, 2.0))], "not symmetric"),
    (HINGE, [_act(gear=0.0)], "gear must be finite and non-zero"),
    (HINGE, [_act(), _act(name="b")], "already has an actuator"),
    ([{"name": "r", "type": "free", "damping": 0, "armature": 0}], [_act()], "'r' is not a hinge/slide joint"),
])
def test_unmappable_actuators_fail_closed(joints, actuators, match):
    with pytest.raises(ValueError, match=match):
        joint_drives(joints, actuators)


def test_joint_damping_shares_the_drive_limit_while_saturated(tmp_path):
    """The documented difference: PhysX has no passive joint damping, so it rides on the drive and is
    capped with it; MuJoCo caps only the actuator force (here 3.0 vs 2.8 = 3.0 - 0.5 * 0.4)."""
    model, d = _models(tmp_path, damping=0.5, flim=1.5)
    q, qd, ctrl = np.array([0.5, 0, 0]), np.array([0.4, 0, 0]), np.array([2.0, 0.0])
    assert _mujoco_force(model, q, qd, ctrl)[0] == pytest.approx(3.0 - 0.5 * 0.4)
    assert _drive_force(d, q, qd, ctrl)[0] == pytest.approx(3.0)
