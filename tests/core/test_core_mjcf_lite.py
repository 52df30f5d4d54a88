"""``unisim_core.mjcf_lite``, the public MJCF reader: what it reads (checked against MuJoCo's own
compiler where MuJoCo is installed), and the errors outside its subset, each naming the file, the
element and the scene feature a backend refuses."""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from core_helpers import SCENES, write_scene

import unisim_core
from unisim_core.errors import InvalidInputError
from unisim_core.mjcf_lite import OPTIONAL_FEATURES, MjcfLiteError, load_mjcf

BODY = '<body name="b" pos="0 0 1"><freejoint/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>{}</body>'
INERTIAL = '<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>'


def test_public_names_are_exported_from_the_package():
    assert unisim_core.load_mjcf is load_mjcf and unisim_core.MjcfLiteError is MjcfLiteError
    assert unisim_core.LiteModel is type(load_mjcf(SCENES["pendulum"]))


@pytest.mark.parametrize("name", sorted(SCENES))
def test_model_info_equals_mujocos_compiled_model(name):
    """Every ModelInfo table the reader builds equals the one MuJoCo's compiler builds from the same
    file (unisim_mujoco.build_model_info), to 1e-9: an independent reference."""
    mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo's compiler")
    model_info = pytest.importorskip("unisim_mujoco", reason="unisim-mujoco builds the reference")
    ours = load_mjcf(SCENES[name], accept=OPTIONAL_FEATURES).model_info()
    ref = model_info.build_model_info(mujoco.MjModel.from_xml_path(str(SCENES[name])))
    for f in attrs.fields(type(ours)):
        a, b = getattr(ours, f.name), getattr(ref, f.name)
        if f.name == "keyframes":
            assert a.keys() == b.keys()
            for key in a:
                np.testing.assert_allclose(a[key], b[key], atol=1e-9, err_msg=f"keyframes[{key!r}]")
        elif f.name == "geom_size":  # MuJoCo derives an hfield geom's size from the asset; we leave 0
            keep = [i for i, t in enumerate(ours.geom_types) if t != "hfield"]
            np.testing.assert_allclose(a[keep], b[keep], atol=1e-9, err_msg="geom_size")
        elif isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b, atol=1e-9, err_msg=f.name)
        else:
            assert a == b, f.name


@pytest.mark.parametrize(("xml", "element", "feature"), [
    ('<include file="other.xml"/>', "<include>", "include"),
    ('<asset><mesh name="m" file="m.stl"/></asset>', "<mesh name='m'>", "mesh"),
    ('<tendon><fixed name="t"/></tendon>', "<tendon>", "tendon"),
    ("<equality/>", "<equality>", "equality"),
    (f'<worldbody><body name="b"><joint name="j" type="ball"/>{INERTIAL}</body></worldbody>',
     "<joint name='j'> has type 'ball'", "ball_joint"),
    ('<worldbody><body name="b"><geom type="sphere" size="0.1"/></body></worldbody>',
     "<body name='b'> has no <inertial>", "geom_inertia"),
    (f'<worldbody><body name="b"><joint name="a"/><joint name="c"/>{INERTIAL}</body></worldbody>',
     "<body name='b'> has more than one joint", "multi_joint_body"),
    (f'<worldbody><body name="b"><joint name="j" stiffness="3"/>{INERTIAL}</body></worldbody>',
     "<joint name='j'> has stiffness=3", "joint_stiffness"),
    (f'<worldbody><body name="b"><joint name="j" frictionloss="0.1"/>{INERTIAL}</body></worldbody>',
     "<joint name='j'> has frictionloss=0.1", "frictionloss"),
    (f'<worldbody><body name="b"><joint name="j"/>{INERTIAL}</body>'
     '</worldbody><actuator><general name="g" joint="j"/></actuator>', "<general name='g'>", "general_actuator"),
    (f'<worldbody><body name="b"><joint name="j"/>{INERTIAL}</body>'
     '</worldbody><actuator><motor name="t" tendon="x"/></actuator>', "<motor name='t'> has no joint=",
     "actuator_transmission"),
    (f'<worldbody>{BODY.format("")}</worldbody><sensor><touch name="t" site="s"/></sensor>', "<touch name='t'>",
     "touch_sensor"),
    (f'<worldbody>{BODY.format("<composite/>")}</worldbody>', "<composite>", "composite"),
    ('<worldbody><body name="m" mocap="true"/></worldbody>', "<body name='m'> has mocap=", "mocap"),
    ('<worldbody><body name="b"><geom type="mesh" mesh="x" mass="0"/></body></worldbody>',
     "<geom> has type='mesh'", "mesh"),
    (f'<worldbody><body name="b" xyaxes="1 0 0 0 1 0">{INERTIAL}</body></worldbody>',
     "<body name='b'> uses orientation attribute 'xyaxes'", "orientation_xyaxes"),
    (f'<worldbody><body name="a">{INERTIAL}<body name="b"><freejoint/>{INERTIAL}</body></body></worldbody>',
     "<freejoint> is a free joint on a body that is not a world child", "nested_free_joint"),
])
def test_unsupported_elements_raise_naming_file_element_and_feature(tmp_path, xml, element, feature):
    path = write_scene(tmp_path, xml)
    with pytest.raises(MjcfLiteError) as info:
        load_mjcf(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and element in message, message
    assert "fake" not in message  # the reader serves every backend, not one
    assert isinstance(info.value, InvalidInputError) and info.value.feature == feature


@pytest.mark.parametrize("xml", ["<mujoco", "<robot/>"])
def test_malformed_files_raise_without_a_feature(tmp_path, xml):
    path = tmp_path / "bad.xml"
    path.write_text(xml)
    with pytest.raises(MjcfLiteError, match=str(path)) as info:
        load_mjcf(path)
    assert info.value.feature is None


def test_frictionloss_is_read_when_accepted(tmp_path):
    path = write_scene(tmp_path, f'<worldbody><body name="b"><joint name="j" frictionloss="0.1"/>{INERTIAL}'
                                 '</body></worldbody>')
    m = load_mjcf(path, accept={"frictionloss"})
    assert m.joints[0]["frictionloss"] == 0.1 and m.model_info().dof_frictionloss.tolist() == [0.1]
    with pytest.raises(InvalidInputError, match=r"accept: expected names from \['frictionloss'\], got \['tendon'\]"):
        load_mjcf(path, accept={"tendon"})


def test_collision_pairs_follow_mujocos_filter(tmp_path):
    geom = '<geom name="{}" type="sphere" size="0.1" contype="{}" conaffinity="{}" mass="0"/>'
    scene = f"""
      <worldbody>
        {geom.format("floor", 1, 1)}
        <body name="a" pos="0 0 1"><joint name="ja"/>{INERTIAL}{geom.format("ga", 1, 1)}
          <body name="b"><joint name="jb"/>{INERTIAL}{geom.format("gb", 1, 1)}</body>
          <body name="c">{INERTIAL}{geom.format("gc", 1, 1)}</body>
        </body>
        <body name="d" pos="1 0 1"><joint name="jd"/>{INERTIAL}{geom.format("gd", 2, 2)}</body>
      </worldbody>"""
    names = ["floor", "ga", "gb", "gc", "gd"]
    pairs = lambda m: {(names[i], names[j]) for i, j in m.collision_pairs()}  # noqa: E731
    m = load_mjcf(write_scene(tmp_path, scene))
    # a-b parent-child: filtered; c is welded to a: never; d's bitmask matches nothing; the world
    # collides with its children (a, and c welded to a) and with b.
    assert pairs(m) == {("floor", "ga"), ("floor", "gb"), ("floor", "gc")}
    extra = '<contact><exclude body1="world" body2="b"/><pair geom1="gd" geom2="ga"/></contact>'
    assert pairs(load_mjcf(write_scene(tmp_path, scene + extra, "x.xml"))) == {
        ("floor", "ga"), ("floor", "gc"), ("ga", "gd")}
    off = '<option><flag contact="disable"/></option>'
    assert load_mjcf(write_scene(tmp_path, off + scene, "off.xml")).collision_pairs() == []
    assert load_mjcf(SCENES["pendulum"]).collision_pairs() == []
    assert len(load_mjcf(SCENES["box_on_plane"]).collision_pairs()) == 1


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


def test_frame_offset_of_sites_inertial_frames_and_body_frames(tmp_path):
    m = load_mjcf(str(write_scene(tmp_path, """
      <worldbody><body name="b" pos="0 0 1"><freejoint/>
        <inertial pos="0.1 0 0" quat="0 0 0 1" mass="1" diaginertia="1 1 1"/>
        <site name="s" pos="0 0.2 0" quat="0 1 0 0"/>
      </body></worldbody>""")))
    body, pos, quat = m.frame_offset("site", 0)
    assert body == 1
    np.testing.assert_array_equal(pos, [0, 0.2, 0])
    np.testing.assert_array_equal(quat, [0, 1, 0, 0])
    body, pos, quat = m.frame_offset("body", 1)
    assert body == 1
    np.testing.assert_array_equal(pos, [0.1, 0, 0])
    np.testing.assert_array_equal(quat, [0, 0, 0, 1])
    body, pos, quat = m.frame_offset("xbody", 1)
    assert body == 1
    np.testing.assert_array_equal(pos, np.zeros(3))
    np.testing.assert_array_equal(quat, [1, 0, 0, 0])
