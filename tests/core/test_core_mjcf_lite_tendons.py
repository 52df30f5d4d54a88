"""``mjcf_lite`` on grippers and classic RL models: actuators on fixed tendons (``tendon_transmission``),
``<general>`` servos with their own ctrl gain (``general_actuator``), ``<option><flag>`` at MuJoCo's defaults and
asset skins, checked against ``mujoco.MjModel`` of the same file."""

from __future__ import annotations

import numpy as np
import pytest
from core_helpers import write_scene

from unisim_core.plugin.mjcf_lite import MjcfLiteError, load_mjcf

#: two fingers on a turned palm: a tendon over both (coefficients 0.5 and 0.7: a lever) driven by a
#: position servo whose kv comes from dampratio, and a general servo (gain 0.3, bias 0 -40 -2) on one finger
GRIPPER = """<worldbody><body name="palm" pos="0 0 0.3" euler="0.3 0 0.2">
  <body name="l" pos="0 0.03 0"><joint name="yl" type="slide" axis="0 1 0" armature="0.01"/>
    <geom type="box" size="0.005 0.005 0.02" mass="0.1"/></body>
  <body name="r" pos="0 -0.03 0"><joint name="hr" axis="1 0 0"/>
    <geom type="capsule" fromto="0 0 0 0 0 -0.05" size="0.005" mass="0.2"/></body></body></worldbody>
<tendon><fixed name="split"><joint joint="yl" coef="0.5"/><joint joint="hr" coef="0.7"/></fixed></tendon>
<actuator>
  <position name="grip" tendon="split" kp="100" dampratio="1" gear="2" ctrlrange="0 0.05"/>
  <general name="g" joint="hr" gainprm="0.3" biasprm="0 -40 -2" biastype="affine"/>
</actuator>"""
ACCEPT = {"fixed_tendon", "tendon_transmission", "general_actuator", "dampratio"}


def test_a_tendon_servo_and_a_general_servo_read_as_mujoco_compiles_them(tmp_path):
    """The tendon's joints and coefficients, the servo's kv from dampratio through the tendon's moment (MuJoCo's
    effective inertia at qpos0), the general servo as ``gain u - kp q - kv qd``; ``actuator_joint`` -1 for
    the tendon servo, as MuJoCo's ``actuator_trnid`` for a joint transmission only."""
    mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo's compiler")
    path = write_scene(tmp_path, GRIPPER)
    lite = load_mjcf(str(path), accept=ACCEPT)
    m = mujoco.MjModel.from_xml_path(str(path))
    assert lite.tendons == [{"name": "split", "type": "fixed", "joints": [0, 1], "coef": [0.5, 0.7]}]
    grip, general = lite.actuators
    assert (grip["joint"], grip["tendon"], grip["gear"]) == (-1, 0, 2.0)
    assert grip["kv"] == pytest.approx(-m.actuator_biasprm[0, 2], rel=1e-10)
    assert grip["kv"] > 0
    assert (general["kind"], general["gain"], general["kp"], general["kv"]) == ("position", 0.3, 40.0, 2.0)
    assert lite.model_info().actuator_joint.tolist() == [-1, 1]


def test_tendon_servos_and_general_servos_are_refused_unless_accepted(tmp_path):
    path = str(write_scene(tmp_path, GRIPPER))
    with pytest.raises(MjcfLiteError) as info:
        load_mjcf(path, accept={"fixed_tendon", "dampratio"})
    assert info.value.feature == "tendon_transmission" and "grip" in str(info.value)
    with pytest.raises(MjcfLiteError) as info:
        load_mjcf(path, accept={"fixed_tendon", "tendon_transmission", "dampratio"})
    assert info.value.feature == "general_actuator" and "biasprm" in str(info.value)


def test_flags_at_mujocos_defaults_are_read_and_others_refused(tmp_path):
    """``multiccd="enable"`` is MuJoCo 4's default (umi_gripper writes it): nothing changes, so every reader
    takes it; ``warmstart="disable"`` changes MuJoCo's solver and is refused naming it."""
    body = '<worldbody><body><freejoint/><geom size="0.1"/></body></worldbody>'
    ok = write_scene(tmp_path, f'<option><flag multiccd="enable" gravity="disable"/></option>{body}')
    np.testing.assert_array_equal(load_mjcf(str(ok)).gravity, 0.0)
    off = write_scene(tmp_path, f'<option><flag warmstart="disable"/></option>{body}', "off.xml")
    with pytest.raises(MjcfLiteError, match="warmstart") as info:
        load_mjcf(str(off))
    assert info.value.feature == "option_flag"


def test_an_asset_skin_is_drawn_not_simulated(tmp_path):
    """``<asset><skin>`` (dm_control's dog) only dresses bodies for the renderer: read, the model unchanged."""
    skin = ('<asset><skin name="s" vertex="0 0 0 1 0 0 0 1 0" face="0 1 2"><bone body="a" bindpos="0 0 0" '
            'bindquat="1 0 0 0" vertid="0 1 2" vertweight="1 1 1"/></skin></asset>')
    body = ('<worldbody><body name="a" pos="0 0 1"><joint name="j" axis="0 1 0"/><geom size="0.1" mass="1"/></body>'
            '</worldbody>')
    with_skin = load_mjcf(str(write_scene(tmp_path, skin + body)))
    without = load_mjcf(str(write_scene(tmp_path, body, "plain.xml")))
    assert with_skin.body_names == without.body_names and with_skin.body_mass == without.body_mass


def test_constraints_off_is_contacts_off_unless_a_limit_would_be_dropped(tmp_path):
    """dm_control's ``<flag constraint="disable" energy="enable"/>``: with nothing but contacts to drop, read as
    contacts off (``energy`` changes nothing in the dynamics); with a limited joint, refused naming its range."""
    flag = '<option><flag constraint="disable" energy="enable"/></option>'
    body = '<worldbody><body><joint name="j" axis="0 1 0"{}/><geom size="0.1" mass="1"/></body></worldbody>'
    assert load_mjcf(str(write_scene(tmp_path, flag + body.format("")))).contact is False
    with pytest.raises(MjcfLiteError, match="joint 'j' range") as info:
        load_mjcf(str(write_scene(tmp_path, flag + body.format(' range="-1 1"'), "limited.xml")))
    assert info.value.feature == "option_flag"
