"""The fake backend's MJCF subset: what it reads, and the clear errors outside the subset."""

from __future__ import annotations

import numpy as np
import pytest
from core_helpers import SCENES, make, write_scene

from unisim_core.errors import InvalidInputError
from unisim_core.mjcf_lite import MjcfLiteError, load_mjcf

BODY = '<body name="b" pos="0 0 1"><freejoint/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>{}</body>'


@pytest.mark.parametrize("name", sorted(SCENES))
def test_shipped_scenes_load_and_step_finitely(name):
    b = make(name, 2)
    b.step(np.zeros((2, b.num_actuators)), 3)
    assert np.isfinite(b.get_physics_state()).all()


@pytest.mark.parametrize(("xml", "element"), [
    ('<include file="other.xml"/>', "<include>"),
    ('<asset><mesh name="m" file="m.stl"/></asset>', "<mesh name='m'>"),
    ('<tendon><fixed name="t"/></tendon>', "<tendon>"),
    ("<equality/>", "<equality>"),
    ('<worldbody><body name="b"><joint name="j" type="ball"/>'
     '<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/></body></worldbody>', "<joint name='j'> has type 'ball'"),
    ('<worldbody><body name="b"><geom type="sphere" size="0.1"/></body></worldbody>',
     "<body name='b'> has no <inertial>"),
    ('<worldbody><body name="b"><joint name="a"/><joint name="c"/>'
     '<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/></body></worldbody>', "more than one joint"),
    ('<worldbody><body name="b"><joint name="j" stiffness="3"/>'
     '<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/></body></worldbody>', "has stiffness"),
    ('<worldbody><body name="b"><joint name="j"/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/></body>'
     '</worldbody><actuator><general name="g" joint="j"/></actuator>', "<general name='g'>"),
    (f'<worldbody>{BODY.format("")}</worldbody><sensor><touch name="t" site="s"/></sensor>', "<touch name='t'>"),
    (f'<worldbody>{BODY.format("<composite/>")}</worldbody>', "<composite>"),
    ('<worldbody><body name="m" mocap="true"/></worldbody>', "mocap"),
    ('<worldbody><body name="b"><geom type="mesh" mesh="x" mass="0"/></body></worldbody>', "mesh geom"),
])
def test_unsupported_elements_raise_naming_the_element(tmp_path, xml, element):
    path = write_scene(tmp_path, xml)
    with pytest.raises(MjcfLiteError, match=element.replace("(", r"\(")) as info:
        load_mjcf(str(path))
    assert isinstance(info.value, InvalidInputError) and str(path) in str(info.value)


def test_degrees_by_default_and_euler(tmp_path):
    path = write_scene(tmp_path, '''
      <worldbody>
        <body name="b" euler="0 0 90">
          <joint name="j" type="hinge" range="-90 45"/>
          <inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>
        </body>
        <body name="c" pos="1 0 0" axisangle="1 0 0 180">
          <joint name="s" type="slide" range="-1 2" axis="0 0 2"/>
          <inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>
        </body>
      </worldbody>''')
    m = load_mjcf(str(path))
    np.testing.assert_allclose(m.body_quat[1], [np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)], atol=1e-15)
    np.testing.assert_allclose(m.body_quat[2], [0, 1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(m.joints[0]["range"], [-np.pi / 2, np.pi / 4])
    np.testing.assert_array_equal(m.joints[1]["range"], [-1, 2])  # slide ranges are lengths
    np.testing.assert_array_equal(m.joints[1]["axis"], [0, 0, 1])  # normalized


def test_defaults_classes_and_limits():
    m = load_mjcf(str(SCENES["quadruped"]))
    info = m.model_info()
    calf = info.joint_names.index("FL_calf_joint")
    np.testing.assert_array_equal(info.joint_range[calf], [-2.7, -0.9])  # nested class "knee"
    assert m.joints[calf]["damping"] == 0.5 and m.joints[calf]["armature"] == 0.01
    assert m.actuators[2]["forcerange"].tolist() == [-33.5, 33.5] and m.actuators[2]["kp"] == 60.0
    foot = info.geom_names.index("FL_foot_geom")
    assert info.geom_types[foot] == "sphere" and info.geom_contype[foot] == 1
    thigh = info.geom_names.index("FL_thigh_geom")
    np.testing.assert_allclose(info.geom_size[thigh], [0.022, 0.1065, 0])  # fromto half-length
    pend = load_mjcf(str(SCENES["pendulum"])).model_info()
    np.testing.assert_array_equal(pend.joint_range, [[-np.inf, np.inf]])  # limited="false"
    assert load_mjcf(str(SCENES["free_body"])).model_info().qpos0.tolist() == [0, 0, 1, 1, 0, 0, 0]


def test_gravity_flag_and_unknown_class(tmp_path):
    path = write_scene(tmp_path, f'<option gravity="0 0 -3"><flag gravity="disable"/></option>'
                                 f'<worldbody>{BODY.format("")}</worldbody>')
    np.testing.assert_array_equal(load_mjcf(str(path)).gravity, 0.0)
    site = "<site class='nope'/>"
    path = write_scene(tmp_path, f"<worldbody>{BODY.format(site)}</worldbody>", "b.xml")
    with pytest.raises(MjcfLiteError, match="unknown default class 'nope'"):
        load_mjcf(str(path))
