"""``unisim_core.plugin.mjcf_lite``, the public MJCF reader: what it reads (checked against MuJoCo's own
compiler where MuJoCo is installed), and the errors outside its subset, each naming the file, the
element and the scene feature a backend refuses."""

from __future__ import annotations

from pathlib import Path

import attrs
import numpy as np
import pytest
from core_helpers import SCENES, write_scene

import unisim_core
from unisim_core.contract.errors import InvalidInputError
from unisim_core.plugin.mjcf_lite import OPTIONAL_FEATURES, MjcfLiteError, load_mjcf

BODY = '<body name="b" pos="0 0 1"><freejoint/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>{}</body>'
INERTIAL = '<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>'


def test_public_names_are_exported_from_the_package():
    assert unisim_core.load_mjcf is load_mjcf and unisim_core.MjcfLiteError is MjcfLiteError
    assert unisim_core.LiteModel is type(load_mjcf(SCENES["pendulum"]))


def assert_like_mujoco(path, bodies_only: bool = False, rtol: float = 1e-9) -> None:
    """Every ModelInfo table the reader builds equals the one MuJoCo's compiler builds from the same
    file (unisim_mujoco.build_model_info), to 1e-9, and so do the body frames and inertial frames
    (``body_iquat`` up to sign, to 1e-6: the Jacobi iterations round differently); masses and
    inertial frames to ``rtol`` (mesh bodies: MuJoCo keeps the vertices in float32)."""
    mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo's compiler")
    model_info = pytest.importorskip("unisim_mujoco", reason="unisim-mujoco builds the reference")
    lite = load_mjcf(path, accept=OPTIONAL_FEATURES)
    mj = mujoco.MjModel.from_xml_path(str(path))
    for b in range(mj.nbody):
        frames = [(lite.body_pos[b], mj.body_pos[b], 1e-9), (lite.body_ipos[b], mj.body_ipos[b], rtol),
                  (lite.body_quat[b], mj.body_quat[b], 1e-9)]
        if rtol <= 1e-9:  # else the principal axes of nearly equal moments are ill-conditioned: the tensor below
            frames.append((lite.body_iquat[b], mj.body_iquat[b], 1e-6))
        else:  # the inertia tensor in the body frame, to 1e-3 of its largest moment (MuJoCo's float32 mesh frames)
            R, Rm = (unisim_core.contract.quat.matrix_from_quat(q) for q in (lite.body_iquat[b], mj.body_iquat[b]))
            np.testing.assert_allclose(R @ np.diag(lite.body_inertia[b]) @ R.T, Rm @ np.diag(mj.body_inertia[b]) @ Rm.T,
                                       atol=1e-12 + 1e-3 * np.max(mj.body_inertia[b]), err_msg=mj.body(b).name)
        for ours, ref, tol in frames:
            sign = -1.0 if len(ref) == 4 and np.dot(ours, ref) < 0 else 1.0
            np.testing.assert_allclose(sign * np.asarray(ours), ref, atol=tol, err_msg=f"body {mj.body(b).name!r}")
        np.testing.assert_allclose(lite.body_mass[b], mj.body_mass[b], rtol=rtol, err_msg=f"body {mj.body(b).name!r}")
        np.testing.assert_allclose(lite.body_inertia[b], mj.body_inertia[b], rtol=max(rtol, 1e-7), atol=1e-12,
                                   err_msg=f"body {mj.body(b).name!r}")
    if bodies_only:
        return
    ours, ref = lite.model_info(), model_info.build_model_info(mj)
    for f in attrs.fields(type(ours)):
        a, b = getattr(ours, f.name), getattr(ref, f.name)
        if f.name == "keyframes":
            assert a.keys() == b.keys()
            for key in a:
                np.testing.assert_allclose(a[key], b[key], atol=1e-9, err_msg=f"keyframes[{key!r}]")
        elif f.name == "geom_size":  # MuJoCo derives hfield and mesh geoms' sizes from the asset; we leave 0
            keep = [i for i, t in enumerate(ours.geom_types) if t not in ("hfield", "mesh")]
            np.testing.assert_allclose(a[keep], b[keep], atol=1e-9, err_msg="geom_size")
        elif f.name in ("body_mass", "body_inertia"):
            np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-12, err_msg=f.name)
        elif isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b, atol=1e-9, err_msg=f.name)
        else:
            assert a == b, f.name


#: Kit scenes with a sensor outside the reader's subset: refused by that sensor's feature name.
_REFUSED_SCENES = {"force_sensor": "force_sensor", "torque_sensor": "torque_sensor", "touch_sensor": "touch_sensor"}


@pytest.mark.parametrize("name", sorted(SCENES))
def test_model_info_equals_mujocos_compiled_model(name):
    if name in _REFUSED_SCENES:
        with pytest.raises(MjcfLiteError) as info:
            load_mjcf(SCENES[name], accept=OPTIONAL_FEATURES)
        assert info.value.feature == _REFUSED_SCENES[name]
        return
    assert_like_mujoco(SCENES[name])


@pytest.mark.parametrize(("xml", "element", "feature"), [
    ('<tendon><fixed name="t"/></tendon>', "<tendon>", "fixed_tendon"),
    ('<equality><weld body1="b"/></equality>', "<equality>", "weld_equality"),
    ('<extension><plugin plugin="x"/></extension>', "<extension>", "plugin"),
    (f'<worldbody><body name="b"><joint name="j" type="ball"/>{INERTIAL}</body></worldbody>',
     "<joint name='j'> has type 'ball'", "ball_joint"),
    (f'<worldbody><body name="b"><joint name="a"/><joint name="c"/>{INERTIAL}</body></worldbody>',
     "<body name='b'> has more than one joint", "multi_joint_body"),
    (f'<worldbody><body name="b"><joint name="j" stiffness="3"/>{INERTIAL}</body></worldbody>',
     "<joint name='j'> has stiffness=3", "joint_stiffness"),
    (f'<worldbody><body name="b"><joint name="j" frictionloss="0.1"/>{INERTIAL}</body></worldbody>',
     "<joint name='j'> has frictionloss=0.1", "frictionloss"),
    (f'<worldbody><body name="b"><joint name="j"/>{INERTIAL}</body>'
     '</worldbody><actuator><general name="g" joint="j" dyntype="integrator"/></actuator>',
     "<general name='g'> (dyntype='integrator'", "general_actuator"),
    (f'<worldbody><body name="b"><joint name="j"/>{INERTIAL}</body>'
     '</worldbody><actuator><motor name="t" tendon="x"/></actuator>', "<motor name='t'> has a tendon transmission",
     "tendon_transmission"),
    (f'<worldbody><body name="b"><joint name="j"/>{INERTIAL}<site name="s"/></body>'
     '</worldbody><actuator><motor name="t" site="s"/></actuator>', "<motor name='t'> has a site transmission",
     "site_transmission"),
    (f'<worldbody>{BODY.format("")}</worldbody><sensor><touch name="t" site="s"/></sensor>', "<touch name='t'>",
     "touch_sensor"),
    (f'<worldbody>{BODY.format("<composite/>")}</worldbody>', "<composite>", "composite"),
    ('<worldbody><body name="m" mocap="true"/></worldbody>', "<body name='m'> has mocap=", "mocap"),
    ('<worldbody><body name="b"><geom type="mesh" mesh="m"/></body></worldbody>',
     "<body name='b'> takes its inertia from geoms and a mesh geom with mass", "mesh_inertia"),
    ('<compiler boundmass="3"/>', "<compiler> sets boundmass", "compiler_boundmass"),
    ('<asset><mesh name="m" file="m.stl" inertia="convex"/></asset><worldbody><body name="b">'
     '<geom type="capsule" mesh="m"/></body></worldbody>', "<geom> is a capsule fitted to mesh 'm', whose fit is not "
     "derived: mesh 'm' has inertia='convex'", "mesh_fitted_primitive"),
    (f'<worldbody><body name="b"><joint name="j"/>{INERTIAL}</body></worldbody>'
     '<actuator><position name="p" joint="j" kp="50" dampratio="1"/></actuator>', "<position name='p'> has dampratio=1",
     "dampratio"),
    ('<compiler eulerseq="xyw"/>', "<compiler> has eulerseq='xyw'", None),
    (f'<worldbody><body name="a">{INERTIAL}<body name="b"><freejoint/>{INERTIAL}</body></body></worldbody>',
     "<freejoint> is a free joint on a body that is not a world child", "nested_free_joint"),
    (f'<worldbody><body name="b" gravcomp="0.5"><joint name="j"/>{INERTIAL}</body></worldbody>',
     "<body name='b'> has gravcomp=0.5", "body_gravcomp"),
])
def test_unsupported_elements_raise_naming_file_element_and_feature(tmp_path, xml, element, feature):
    path = write_scene(tmp_path, xml)
    with pytest.raises(MjcfLiteError) as info:
        load_mjcf(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and element in message, message
    assert "fake" not in message  # the reader serves every backend, not one
    assert isinstance(info.value, InvalidInputError) and info.value.feature == feature


def test_general_actuators_read_as_the_shortcut_they_equal(tmp_path):
    """<general> with MuJoCo's own gain/bias of motor, position or velocity reads as that actuator
    (kuka_iiwa_14, barkour, z1 write their PD servos this way); the tables equal MuJoCo's."""
    joints = "".join(f'<body name="b{i}"><joint name="j{i}"/>{INERTIAL}</body>' for i in range(3))
    path = write_scene(tmp_path, f'<worldbody>{joints}</worldbody><actuator>'
                                 '<general name="m" joint="j0" gear="2" ctrlrange="-1 1"/>'
                                 '<general name="p" joint="j1" biastype="affine" gainprm="50" biasprm="0 -50 -3"/>'
                                 '<general name="v" joint="j2" biastype="affine" gainprm="4" biasprm="0 0 -4"/>'
                                 '</actuator>')
    m = load_mjcf(path)
    assert [(a["kind"], a["kp"], a["kv"], a["gear"]) for a in m.actuators] == [
        ("motor", 0.0, 0.0, 2.0), ("position", 50.0, 3.0, 1.0), ("velocity", 0.0, 4.0, 1.0)]
    assert_like_mujoco(path)


def test_empty_sections_hold_nothing(tmp_path):
    """``<equality/>`` and ``<tendon/>`` (dynamixel_2r, robot_soccer_kit) are empty in MuJoCo too."""
    path = write_scene(tmp_path, f'<worldbody>{BODY.format("")}</worldbody><equality/><tendon></tendon>')
    assert load_mjcf(path).body_names == ["world", "b"]
    assert_like_mujoco(path)


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
    with pytest.raises(InvalidInputError, match=r"accept: expected names from \[.*'frictionloss'.*\], "
                                                r"got \['tendon'\]"):
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


CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "menagerie"  # never copied in


def _corpus(robot: str, scene: str = "scene.xml") -> Path:
    path = CORPUS / robot / scene
    if not path.is_file():
        pytest.skip(f"the Menagerie corpus is not at {CORPUS} (../shared/corpus/menagerie from the repo root)")
    return path


INERTIA_SCENE = """
<compiler inertiagrouprange="0 3"/>
<worldbody>
  <body name="box"><freejoint/><geom type="box" size="0.3 0.2 0.1" euler="0 0 30"/></body>
  <body name="capsule" pos="1 0 0"><freejoint/><geom type="capsule" fromto="0 0 0 0.3 0.2 0.1" size="0.05"/></body>
  <body name="two" pos="2 0 0"><freejoint/><geom type="sphere" size="0.1" pos="0.2 0 0"/>
    <geom type="box" size="0.1 0.05 0.02" pos="0 0.1 0" euler="10 20 30"/></body>
  <body name="shells" pos="3 0 0"><freejoint/><geom type="box" size="0.1 0.2 0.3" shellinertia="true"/>
    <geom type="capsule" size="0.1 0.2" pos="0 0 1" shellinertia="true"/>
    <geom type="cylinder" size="0.1 0.2" pos="0 1 0" shellinertia="true"/>
    <geom type="sphere" size="0.1" pos="1 0 0" shellinertia="true"/></body>
  <body name="mass_density" pos="4 0 0"><freejoint/><geom type="ellipsoid" size="0.1 0.2 0.3" mass="2"/>
    <geom type="cylinder" size="0.1 0.2" density="300" pos="0 0 0.5" zaxis="1 1 0"/></body>
  <body name="fromto_box" pos="5 0 0"><freejoint/><geom type="box" fromto="0 0 0 0.1 0.3 0.2" size="0.05"/>
    <geom type="ellipsoid" fromto="0 0 0 0.1 -0.3 0.2" size="0.05"/></body>
  <body name="xyaxes" xyaxes="0 1 0 -1 0 0.2" pos="6 0 0"><freejoint/>
    <geom type="capsule" size="0.02 0.1" pos="0 0 0.3" xyaxes="1 0 1 0 1 0" density="50"/></body>
  <body name="full" pos="7 0 0"><freejoint/>
    <inertial pos="0.1 0 0" mass="2" fullinertia="0.3 0.25 0.2 0.01 -0.02 0.03"/><geom size="0.1"/></body>
  <body name="groups" pos="8 0 0"><freejoint/><geom size="0.1" group="3"/><geom size="0.2" group="4"/>
    <geom type="box" size="0.1 0.1 0.1" group="2" pos="0 0 1"/><geom size="0.3" mass="0"/></body>
</worldbody>"""


def test_inertia_from_geoms_equals_mujocos(tmp_path):
    """MuJoCo's inertiafromgeom rule: volumes (or shell areas) of the primitives, mass or density,
    fromto/zaxis/xyaxes frames, inertiagrouprange, a one-geom body keeps the geom's frame, several
    are diagonalised (mju_eig3: decreasing moments); fullinertia too. Known answers: MuJoCo's."""
    assert_like_mujoco(write_scene(tmp_path, INERTIA_SCENE), bodies_only=True)
    m = load_mjcf(write_scene(tmp_path, INERTIA_SCENE, "again.xml"))
    box = m.body_names.index("box")
    assert m.body_mass[box] == pytest.approx(1000 * 0.6 * 0.4 * 0.2)  # density 1000 kg/m³ by default
    np.testing.assert_allclose(m.body_inertia[box], 48 / 12 * np.array([0.4**2 + 0.2**2, 0.6**2 + 0.2**2,
                                                                        0.6**2 + 0.4**2]))
    assert m.body_mass[m.body_names.index("groups")] == pytest.approx(1000 * (4 / 3 * np.pi * 0.001 + 0.008))


@pytest.mark.parametrize("seq", ["xyz", "XYZ", "zyx", "ZYX", "xYz"])
def test_euler_sequences_as_mujoco(tmp_path, seq):
    path = write_scene(tmp_path, f'<compiler eulerseq="{seq}"/><worldbody><body name="b" euler="10 -40 70">'
                                 '<geom type="box" size="0.1 0.2 0.3" euler="30 20 -50"/></body></worldbody>')
    assert_like_mujoco(path, bodies_only=True)


def test_inertiafromgeom_true_overrides_an_inertial_and_false_keeps_it(tmp_path):
    body = f'<worldbody><body name="b"><freejoint/>{INERTIAL}<geom size="0.1"/></body></worldbody>'
    for flag, mass in (("true", 1000 * 4 / 3 * np.pi * 0.001), ("false", 1.0), ("auto", 1.0)):
        path = write_scene(tmp_path, f'<compiler inertiafromgeom="{flag}"/>{body}', f"{flag}.xml")
        assert load_mjcf(path).body_mass[1] == pytest.approx(mass)
        assert_like_mujoco(path, bodies_only=True)


def test_includes_resolve_as_mujoco_does(tmp_path):
    """<include> takes the included file's children in place; a path is looked up relative to the
    main file's folder first, then to the including file's; a second include of a file is refused."""
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "deeper").mkdir()
    (tmp_path / "main.xml").write_text('<mujoco><include file="sub/robot.xml"/><worldbody>'
                                       '<body name="last"><freejoint/><geom size="0.1"/></body></worldbody></mujoco>')
    (tmp_path / "sub" / "robot.xml").write_text('<mujoco><include file="deeper/a.xml"/>'
                                                '<include file="deeper/b.xml"/></mujoco>')
    body = '<mujoco><worldbody><body name="{}"><freejoint/><geom size="0.1"/></body></worldbody></mujoco>'
    (tmp_path / "deeper" / "a.xml").write_text(body.format("a_beside_main"))  # wins: the main file's folder
    (tmp_path / "sub" / "deeper" / "a.xml").write_text(body.format("a_beside_includer"))
    (tmp_path / "sub" / "deeper" / "b.xml").write_text(body.format("b_beside_includer"))  # only here
    m = load_mjcf(tmp_path / "main.xml")
    assert m.body_names == ["world", "a_beside_main", "b_beside_includer", "last"]
    assert_like_mujoco(tmp_path / "main.xml")
    (tmp_path / "twice.xml").write_text('<mujoco><include file="deeper/a.xml"/><include file="deeper/a.xml"/></mujoco>')
    with pytest.raises(MjcfLiteError, match="includes .*a.xml' a second time"):
        load_mjcf(tmp_path / "twice.xml")
    (tmp_path / "missing.xml").write_text('<mujoco><include file="nope.xml"/></mujoco>')
    with pytest.raises(MjcfLiteError, match="<include file='nope.xml'>: no such file"):
        load_mjcf(tmp_path / "missing.xml")


def test_unnamed_joints_and_keyframe_quaternions_as_mujoco(tmp_path):
    """An unnamed <freejoint/> and <joint/> are joints named ""; keyframe quaternions are normalised
    (a zero one becomes the identity) and hinge refs set qpos0, as MuJoCo's compiler does; an unnamed
    key is left out of the keyframe table, as MuJoCo's (no name to ask for it by)."""
    path = write_scene(tmp_path, """
      <worldbody><body name="a" pos="0 0 1"><freejoint/><geom size="0.1"/>
        <body name="b"><joint axis="0 1 0" ref="30"/><geom size="0.05" pos="0 0 -0.2"/></body></body></worldbody>
      <keyframe><key qpos="0 0 2 1 0 0 0 0"/><key name="zero" qpos="0 0 1 0 0 0 0 0.2"/>
        <key name="scaled" qpos="1 2 3 0 2 0 0 -0.1"/></keyframe>""")
    m = load_mjcf(path)
    assert list(m.keyframes) == ["zero", "scaled"]
    assert [(j["name"], j["type"]) for j in m.joints] == [("", "free"), ("", "hinge")] and (m.nq, m.nv) == (8, 7)
    np.testing.assert_array_equal(m.keyframes["zero"][3:7], [1, 0, 0, 0])
    np.testing.assert_array_equal(m.keyframes["scaled"][3:7], [0, 1, 0, 0])
    assert m.qpos0()[7] == pytest.approx(np.pi / 6)
    assert_like_mujoco(path)


def test_nested_default_classes_and_childclass_as_mujoco(tmp_path):
    path = write_scene(tmp_path, """
      <default><joint damping="1"/><geom contype="2"/>
        <default class="leg"><joint damping="2" range="-10 10"/>
          <default class="knee"><joint armature="0.5"/><geom type="capsule" size="0.02 0.1"/></default></default>
      </default>
      <worldbody><body name="a" childclass="leg"><joint name="hip"/><geom size="0.1"/>
        <body name="b"><joint name="knee" class="knee"/><geom class="knee"/>
          <body name="c" childclass="knee"><joint name="ankle" damping="7"/><geom/></body></body></body>
        <body name="d"><joint name="plain"/><geom size="0.1"/></body></worldbody>""")
    info = load_mjcf(path).model_info()
    np.testing.assert_array_equal(info.dof_damping, [2, 2, 7, 1])
    np.testing.assert_array_equal(info.dof_armature, [0, 0.5, 0.5, 0])
    assert info.geom_types == ("sphere", "capsule", "capsule", "sphere") and set(info.geom_contype) == {2}
    assert_like_mujoco(path)


@pytest.mark.parametrize("robot", ["unitree_go1", "booster_t1", "kinova_gen3", "kuka_iiwa_14", "unitree_z1"])
def test_menagerie_scenes_equal_mujocos_compiled_model(robot):
    """Menagerie scene.xml files (an <include> of the robot, default classes, meshes with explicit
    <inertial>s, keyframes): every ModelInfo table as MuJoCo compiles it."""
    assert_like_mujoco(_corpus(robot))


def test_gymnasium_ant_equals_mujocos_compiled_model():
    """gymnasium's ant.xml: inertia from geoms (fromto capsules) and an unnamed-class default."""
    gym = Path(pytest.importorskip("gymnasium", reason="gymnasium ships the MuJoCo assets").__file__).parent
    assert_like_mujoco(gym / "envs" / "mujoco" / "assets" / "ant.xml")


def _l_prism() -> tuple[np.ndarray, list[list[int]]]:
    """A closed, outward-facing L-shaped prism (not convex: MuJoCo's legacy and exact inertias differ):
    vertices (12, 3) and polygon faces (0-based; caps as one hexagon each, sides as quads)."""
    ring = np.array([[0, 0], [4, 0], [4, 1], [1, 1], [1, 4], [0, 4]], dtype=float) * 0.05  # arms 0.2 m long
    verts = np.vstack([np.c_[ring, np.zeros(6)], np.c_[ring, np.full(6, 0.05)]])
    faces = [[0, 5, 4, 3, 2, 1], [6, 7, 8, 9, 10, 11]] + [[i, (i + 1) % 6, (i + 1) % 6 + 6, i + 6] for i in range(6)]
    return verts, faces


def _write_meshes(tmp_path: Path) -> None:
    verts, faces = _l_prism()
    obj = [f"v {x} {y} {z}" for x, y, z in verts] + ["vt 0 0"]
    obj += ["f " + " ".join(f"{i + 1}/1" for i in f) for f in faces[:4]]  # v/vt, 1-based
    obj += ["f " + " ".join(str(i - len(verts)) for i in f) for f in faces[4:]]  # negative (relative) indices
    (tmp_path / "meshes").mkdir()
    (tmp_path / "meshes" / "l.obj").write_text("\n".join(obj) + "\n")
    tris = np.array([verts[[f[0], f[k], f[k + 1]]] for f in faces for k in range(1, len(f) - 1)], dtype="<f4")
    rec = np.zeros(len(tris), dtype=[("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")])
    rec["v"] = tris
    (tmp_path / "meshes" / "l.stl").write_bytes(b"solid binary header".ljust(80) + np.uint32(len(tris)).tobytes()
                                                 + rec.tobytes())
    (tmp_path / "meshes" / "ascii.stl").write_text("solid a\nendsolid a\n")


MESH_SCENE = """
<compiler meshdir="meshes"/>
<default><mesh scale="1 1 1"/><default class="big"><mesh scale="2 1 0.5"/></default></default>
<asset>
  <mesh name="legacy" file="l.obj"/>
  <mesh name="exact" file="l.obj" inertia="exact"/>
  <mesh name="shell" file="l.stl" inertia="shell"/>
  <mesh name="scaled" class="big" file="l.stl" refpos="0.05 0.02 0" refquat="0.9 0.1 0.3 0.2"/>
  <mesh name="tet" vertex="0 0 0 0.1 0 0 0 0.2 0 0 0 0.3" face="0 2 1 0 1 3 0 3 2 1 2 3"/>
  <mesh file="l.stl" scale="0.5 0.5 0.5"/>
</asset>
<worldbody>
  <body name="legacy"><freejoint/><geom type="mesh" mesh="legacy" pos="0.1 0 0" euler="10 20 30"/></body>
  <body name="exact" pos="1 0 0"><freejoint/><geom type="mesh" mesh="exact" density="500"/></body>
  <body name="shell" pos="2 0 0"><freejoint/><geom type="mesh" mesh="shell" mass="0.3"/></body>
  <body name="scaled" pos="3 0 0"><freejoint/><geom type="mesh" mesh="scaled"/>
    <geom type="mesh" mesh="tet" pos="0 0 0.2"/><geom type="box" size="0.01 0.02 0.03"/></body>
  <body name="unnamed" pos="4 0 0"><freejoint/><geom type="mesh" mesh="l" quat="0 1 0 0"/></body>
</worldbody>"""


def test_mesh_inertia_equals_mujocos(tmp_path):
    """MuJoCo's mesh inertia: OBJ (polygons, v/vt and negative indices), binary STL and inline
    vertex/face meshes, a mesh named after its file; inertia legacy (the default) / exact / shell, mesh scale (from a
    default class), refpos/refquat, the geom's pose, mass and density, mesh and primitive geoms on
    one body. Known answers: MuJoCo's compiler; and the L prism's exact volume by hand."""
    _write_meshes(tmp_path)
    assert_like_mujoco(write_scene(tmp_path, MESH_SCENE), bodies_only=True, rtol=1e-6)
    m = load_mjcf(tmp_path / "scene.xml")
    exact = m.body_names.index("exact")
    assert m.body_mass[exact] == pytest.approx(500 * 7 * 0.05 ** 3)  # an L of 7 squares of 5 cm, 5 cm thick
    assert m.body_mass[m.body_names.index("legacy")] > 1000 * 7 * 0.05 ** 3  # abs volumes: legacy over-counts


@pytest.mark.parametrize(("xml", "why"), [
    ('<asset><mesh name="m" file="m.msh"/></asset>', "mesh files '.msh' are not read"),
    ('<asset><mesh name="m" file="meshes/l.obj" inertia="convex"/></asset>', "has inertia='convex'"),
    ('<asset><mesh name="m" vertex="0 0 0 1 0 0 0 1 0 0 0 1"/></asset>', "has no file and no vertex+face"),
])
def test_mesh_inertia_outside_the_subset_is_refused_by_name(tmp_path, xml, why):
    _write_meshes(tmp_path)
    path = write_scene(tmp_path, xml + '<worldbody><body name="b"><geom type="mesh" mesh="m"/></body></worldbody>')
    with pytest.raises(MjcfLiteError, match="mesh") as info:
        load_mjcf(path)
    assert info.value.feature == "mesh_inertia" and why in str(info.value), str(info.value)


@pytest.mark.parametrize(("robot", "scene"), [("low_cost_robot_arm", "scene.xml"), ("wonik_allegro", "scene_left.xml")])
def test_menagerie_mesh_inertia_equals_mujocos(robot, scene):
    """Menagerie robots whose bodies take their inertia from STL meshes: masses, inertias and
    inertial frames as MuJoCo compiles them."""
    assert_like_mujoco(_corpus(robot, scene), bodies_only=True, rtol=1e-6)


MULTI_JOINT = """
<compiler settotalmass="7"/>
<worldbody><body name="torso" pos="0 0 1.25">
  <joint name="rootx" type="slide" axis="1 0 0" pos="0 0 -1.25"/>
  <joint name="rootz" type="slide" axis="0 0 1" stiffness="3" springref="0.2"/>
  <joint name="rooty" axis="0 1 0" damping="0.5" range="-30 60"/>
  <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.05"/>
  <body name="leg" pos="0 0 -0.4"><joint name="knee" axis="0 1 0"/><geom size="0.1" mass="3"/></body>
</body></worldbody>
<actuator><motor name="knee" joint="knee"/></actuator>"""


def test_multi_joint_bodies_and_settotalmass_as_mujoco(tmp_path):
    """Several hinge/slide joints on one body (gymnasium's rootx/rootz/rooty) when the backend accepts
    them, joint stiffness/springref, and settotalmass (one factor on every mass and inertia)."""
    path = write_scene(tmp_path, MULTI_JOINT)
    with pytest.raises(MjcfLiteError) as info:
        load_mjcf(path)
    assert info.value.feature == "multi_joint_body"
    assert_like_mujoco(path)
    m = load_mjcf(path, accept={"multi_joint_body", "joint_stiffness"})
    assert [j["qposadr"] for j in m.joints] == [0, 1, 2, 3] and m.body_joint == [-1, 0, 3]
    assert sum(m.body_mass) == pytest.approx(7) and m.joints[1]["stiffness"] == 3.0
    assert m.mass_scale == pytest.approx(7 / (3 + 1000 * np.pi * 0.05 ** 2 * (0.4 + 4 / 3 * 0.05)))


def test_accepted_equalities_and_tendons_are_counted(tmp_path):
    """A backend that simulates equality constraints and fixed tendons itself accepts them: the reader
    counts them per feature (inactive ones apart) and refuses a section holding one it did not accept,
    by that one's name."""
    path = write_scene(tmp_path, f'<worldbody><body name="b"><joint name="j"/>{INERTIAL}<body name="c">'
                                 f'<joint name="k"/>{INERTIAL}</body></body></worldbody>'
                                 '<equality><joint joint1="j" joint2="k"/><weld body1="c" active="false"/></equality>'
                                 '<tendon><fixed name="t"><joint joint="j" coef="1"/></fixed></tendon>')
    m = load_mjcf(path, accept={"joint_equality", "weld_equality", "fixed_tendon"})
    assert m.constraints == {"joint_equality": 1, "weld_equality_inactive": 1, "fixed_tendon": 1} and m.nq == 2
    with pytest.raises(MjcfLiteError) as info:
        load_mjcf(path, accept={"joint_equality", "fixed_tendon"})
    assert info.value.feature == "weld_equality"  # the first element not accepted names it


def test_joint_actuatorfrcrange_folds_into_its_actuators_forcerange_as_mujoco_clamps(tmp_path):
    """MuJoCo clamps the force a joint receives from its actuators to ``actuatorfrcrange``; with one
    actuator of gear g the reader's forcerange is the file's intersected with that range / g, so an
    engine clamping the actuator alone applies MuJoCo's joint force. Several actuators are refused."""
    mujoco = pytest.importorskip("mujoco")
    body = ('<worldbody><body name="b"><joint name="j" actuatorfrcrange="-3 5"/>' f'{INERTIAL}</body>'
            '</worldbody><actuator><motor name="m" joint="j" gear="-2" forcerange="-2 4"/>{extra}</actuator>')
    path = write_scene(tmp_path, body.format(extra=""))
    act = load_mjcf(path).actuators[0]
    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    for ctrl in (-100.0, 100.0):  # both saturated ends: qfrc = gear * clamp(ctrl, forcerange) in the reader's terms
        data.ctrl[:] = ctrl
        mujoco.mj_forward(model, data)
        assert act["gear"] * np.clip(ctrl, *act["forcerange"]) == pytest.approx(data.qfrc_actuator[0])
    assert act["forcerange"].tolist() == [-2.0, 1.5]
    with pytest.raises(MjcfLiteError) as info:
        load_mjcf(write_scene(tmp_path, body.format(extra='<motor joint="j"/>'), "two.xml"))
    assert info.value.feature == "joint_actuatorfrcrange"


GRAVCOMP = f"""<default><joint actuatorgravcomp="true"/></default>
  <worldbody><body name="up"><joint name="shoulder"/>{INERTIAL}
    <body name="mid"><joint name="elbow" actuatorgravcomp="false"/>{INERTIAL}
      <body name="low" gravcomp="{{low}}"><joint name="wrist"/>{INERTIAL}
        <body name="tip"><joint name="tip"/>{INERTIAL}</body></body></body></body></worldbody>
  <actuator><motor name="m" joint="shoulder"/></actuator>"""


def test_gravcomp_is_read_when_accepted_and_actuatorgravcomp_where_it_acts(tmp_path):
    """``gravcomp`` per body and ``actuatorgravcomp`` per joint (through defaults) equal MuJoCo's
    ``body_gravcomp`` / ``jnt_actgravcomp``; without ``accept`` a body with gravcomp is refused as
    ``body_gravcomp``; a joint with actuatorgravcomp at or above such a body (shoulder, wrist; not tip,
    below it) as ``joint_actuatorgravcomp``; with gravcomp 0 nowhere the attribute changes nothing."""
    mujoco = pytest.importorskip("mujoco")
    path = write_scene(tmp_path, GRAVCOMP.format(low="0.5"))
    m = load_mjcf(path, accept={"body_gravcomp", "joint_actuatorgravcomp"})
    mj = mujoco.MjModel.from_xml_path(str(path))
    assert m.body_gravcomp == [0.0, 0.0, 0.0, 0.5, 0.0] == mj.body_gravcomp.tolist()
    assert [j["actuatorgravcomp"] for j in m.joints] == [True, False, True, True] == mj.jnt_actgravcomp.tolist()
    with pytest.raises(MjcfLiteError) as info:
        load_mjcf(path)
    assert info.value.feature == "body_gravcomp" and "<body name='low'> has gravcomp=0.5" in str(info.value)
    with pytest.raises(MjcfLiteError) as info:
        load_mjcf(path, accept={"body_gravcomp"})
    assert info.value.feature == "joint_actuatorgravcomp" and "<joint name='shoulder'>" in str(info.value)
    assert load_mjcf(write_scene(tmp_path, GRAVCOMP.format(low="0"), "none.xml")).body_gravcomp == [0.0] * 5
    below = GRAVCOMP.format(low="0.5").replace('actuatorgravcomp="true"', 'actuatorgravcomp="false"').replace(
        '<joint name="tip"/>', '<joint name="tip" actuatorgravcomp="true"/>')  # tip's subtree holds no gravcomp
    assert [j["actuatorgravcomp"] for j in load_mjcf(write_scene(tmp_path, below, "below.xml"),
                                                     accept={"body_gravcomp"}).joints] == [False, False, False, True]


def test_mocap_bodies_are_read_when_accepted_and_static_to_mujocos_filter(tmp_path):
    """``accept={"mocap"}``: the mocap bodies are listed (ModelInfo.mocap_body_names) and MuJoCo's collision
    filter holds for them (measured in MuJoCo: a mocap box penetrating the floor makes no contact, it does
    with a free ball; its welded child is its weld); a mocap body with a joint is refused as MuJoCo's
    compiler refuses it."""
    scene = """<worldbody><geom name="floor" type="plane" size="2 2 .1"/>
      <body name="m" mocap="true" pos="0 0 0.05"><geom name="mg" type="box" size=".1 .1 .1"/>
        <body name="child" pos="0 0 0.3"><geom name="cg" type="sphere" size="0.1"/></body></body>
      <body name="ball" pos="0 0 0.25"><freejoint/><geom name="bg" type="sphere" size="0.1"/></body></worldbody>"""
    path = write_scene(tmp_path, scene)
    with pytest.raises(MjcfLiteError) as info:
        load_mjcf(path)
    assert info.value.feature == "mocap"
    m = load_mjcf(path, accept={"mocap"})
    assert m.model_info().mocap_body_names == ("m",) and m.body_mocap == [False, True, False, False]
    names = [g["name"] for g in m.geoms]
    assert {(names[i], names[j]) for i, j in m.collision_pairs()} == {("mg", "bg"), ("cg", "bg"), ("floor", "bg")}
    jointed = write_scene(tmp_path, '<worldbody><body name="m" mocap="true"><joint/>'
                                    '<geom size=".1" mass="1"/></body></worldbody>', "j.xml")
    with pytest.raises(MjcfLiteError, match="not a fixed child of the world"):
        load_mjcf(jointed, accept={"mocap"})
