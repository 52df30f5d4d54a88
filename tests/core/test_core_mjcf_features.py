"""``unisim_core.plugin.mjcf_features``: the MJCF feature vocabulary, the scanner and the refusal."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from unisim_core.contract.errors import EngineError, InvalidInputError, UnsupportedCapabilityError
from unisim_core.plugin.mjcf_features import (
    check_features,
    check_layout,
    feature_name,
    features,
    mj_enum_tag,
    normalize_key_quats,
    scan_mjcf,
    use,
)

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "menagerie"

ROBOT = """<mujoco>
  <default>
    <geom type="capsule"/>
    <default class="visual"><geom type="mesh"/></default>
    <default class="slider"><joint type="slide"/></default>
  </default>
  <asset><mesh name="m" vertex="0 0 0 1 0 0 0 1 0 0 0 1"/></asset>
  <include file="parts/arm.xml"/>
  <tendon><fixed name="t"><joint joint="j1" coef="1"/></fixed></tendon>
  <equality><weld name="w" body1="b1"/><joint joint1="j1" joint2="j2"/></equality>
  <actuator>
    <motor name="m1" joint="j1"/>
    <general name="thrust" site="s"/>
    <position name="crank" cranksite="s" slidersite="s"/>
  </actuator>
  <sensor><force name="left_foot_force" site="s"/><jointpos joint="j1"/></sensor>
</mujoco>
"""
ARM = """<mujoco>
  <worldbody>
    <body name="b1" childclass="slider">
      <freejoint name="root"/>
      <geom name="g_default" size="0.1 0.1"/>
      <geom name="g_visual" class="visual" mesh="m"/>
      <site name="s"/>
      <body name="b2"><joint name="j1"/><joint name="j2" type="ball"/><geom type="box" size="1 1 1"/></body>
    </body>
    <body name="target" mocap="true"/>
  </worldbody>
  <include file="extra.xml"/>
</mujoco>
"""
EXTRA = '<mujoco><sensor><magnetometer name="mag" site="s"/></sensor></mujoco>'



@pytest.fixture
def robot(tmp_path: Path) -> Path:
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "arm.xml").write_text(ARM)
    (tmp_path / "parts" / "extra.xml").write_text(EXTRA)  # found next to the including file (MuJoCo's fallback)
    (tmp_path / "robot.xml").write_text(ROBOT)
    return tmp_path / "robot.xml"


def test_scan_names_every_feature_with_defaults_and_includes(robot: Path) -> None:
    uses = scan_mjcf(robot)
    by_name = {(u.kind, u.name): u.feature for u in uses}
    assert by_name[("joint", "root")] == "free_joint"
    assert by_name[("joint", "j1")] == "slide_joint"  # the body's childclass applies below it
    assert by_name[("joint", "j2")] == "ball_joint"
    assert by_name[("geom", "g_default")] == "capsule"  # main default
    assert by_name[("geom", "g_visual")] == "mesh"  # class="visual"
    assert by_name[("sensor", "left_foot_force")] == "force_sensor"
    assert by_name[("transmission", "m1")] == "joint_transmission"
    assert by_name[("transmission", "thrust")] == "site_transmission"
    assert by_name[("transmission", "crank")] == "slidercrank_transmission"
    assert by_name[("actuator", "thrust")] == "general_actuator"
    assert by_name[("tendon", "t")] == "fixed_tendon"
    assert by_name[("equality", "w")] == "weld_equality"
    assert by_name[("model", "target")] == "mocap"
    assert {"joint_equality", "jointpos_sensor", "box", "magnetometer_sensor"} <= features(uses)
    # the included file is named where its elements are
    assert next(u for u in uses if u.name == "root").file.endswith("arm.xml")


def test_check_features_refuses_by_feature_and_element(robot: Path) -> None:
    uses = scan_mjcf(robot)
    with pytest.raises(UnsupportedCapabilityError) as info:
        check_features("motrix", uses, supported={"sensor": {"jointpos_sensor", "magnetometer_sensor"}})
    assert info.value.capability == "force_sensor"
    assert "sensor 'left_foot_force' of type <force> is not supported by motrix" in str(info.value)
    with pytest.raises(UnsupportedCapabilityError) as info:
        check_features("motrix", uses, refused={"site_transmission": "no site actuators"})
    assert info.value.capability == "site_transmission"
    assert "actuator 'thrust' with a site transmission is not supported by motrix: no site actuators" \
        in str(info.value)
    check_features("motrix", uses, refused={"flex": "no"}, supported={"tendon": {"fixed_tendon"}})  # all honoured


def test_vocabulary_for_compiled_models() -> None:
    assert mj_enum_tag("mjSENS_FORCE") == "force"
    assert mj_enum_tag("mjSENS_GEOMDIST") == "distance"
    assert mj_enum_tag("mjTRN_SLIDERCRANK") == "slidercrank"
    assert mj_enum_tag("mjSENS_JOINTACTFRC") == "jointactuatorfrc"
    assert mj_enum_tag("mjSENS_E_POTENTIAL") == "e_potential"
    assert use("sensor", mj_enum_tag("mjSENS_MAGNETOMETER"), "mag").feature == "magnetometer_sensor"
    assert feature_name("equality", "connect") == "connect_equality"
    attr = use("attribute", "material@emission", "green")
    assert attr.feature == "material_emission" and attr.describe() == "attribute 'emission' of <material> 'green'"
    with pytest.raises(InvalidInputError, match="kind: expected one of"):
        feature_name("sensors", "force")


def test_scan_names_gravcomp_and_the_actuatorgravcomp_it_reaches(tmp_path: Path) -> None:
    """``body_gravcomp`` for each body with non-zero gravcomp; ``joint_actuatorgravcomp`` for a joint whose
    ``actuatorgravcomp="true"`` (a default class here) reaches one: on that body or above it, not below."""
    path = tmp_path / "arm.xml"
    path.write_text("""<mujoco><default><default class="agc"><joint actuatorgravcomp="true"/></default></default>
      <worldbody><body name="up"><joint name="shoulder" class="agc"/>
        <frame><body name="low" gravcomp="1"><joint name="wrist" class="agc"/><joint name="plain"/>
          <body name="tip" gravcomp="0"><joint name="tip" class="agc"/></body></body></frame></body>
      <body name="other"><joint name="other" class="agc"/></body></worldbody></mujoco>""")
    got = [(u.feature, u.name) for u in scan_mjcf(path) if u.kind == "attribute"]
    assert got == [("joint_actuatorgravcomp", "shoulder"), ("body_gravcomp", "low"),
                   ("joint_actuatorgravcomp", "wrist")]
    u = next(u for u in scan_mjcf(path) if u.feature == "body_gravcomp")
    assert u.describe() == "attribute 'gravcomp' of <body> 'low'"


def test_check_layout_names_every_difference() -> None:
    check_layout("motrix", "x.xml", {"nq": 7, "nu": 4}, {"nq": 7, "nu": 4, "extra": 1})
    with pytest.raises(EngineError, match=r"nu 0 \(the file: 4\)"):
        check_layout("motrix", "x.xml", {"nq": 7, "nu": 4}, {"nq": 7, "nu": 0})


def test_scan_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody>")
    with pytest.raises(InvalidInputError, match="not well-formed"):
        scan_mjcf(bad)
    loop = tmp_path / "loop.xml"
    loop.write_text('<mujoco><include file="loop.xml"/></mujoco>')
    with pytest.raises(InvalidInputError, match="included recursively"):
        scan_mjcf(loop)
    with pytest.raises(InvalidInputError, match="cannot be read"):
        scan_mjcf(tmp_path / "missing.xml")


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the Menagerie corpus (../shared/corpus/menagerie) is absent")
def test_scan_real_robots() -> None:
    crazyflie = features(scan_mjcf(CORPUS / "bitcraze_crazyflie_2" / "scene.xml"))
    assert {"site_transmission", "free_joint", "mesh", "gyro_sensor"} <= crazyflie
    cassie = features(scan_mjcf(CORPUS / "agility_cassie" / "scene.xml"))
    assert {"magnetometer_sensor", "actuatorpos_sensor", "connect_equality", "ball_joint"} <= cassie


def test_normalize_key_quats_as_mujoco() -> None:
    # free joint (qpos 0..6) with a zero quaternion, hinge (7), ball (8..11) scaled by 2
    key = np.array([[0.0, 0, 1, 0, 0, 0, 0, 0.3, 2, 0, 0, 0]])
    out = normalize_key_quats(key, ["free", "hinge", "ball"], [0, 7, 8])
    np.testing.assert_array_equal(out[0, 3:7], [1, 0, 0, 0])  # zero -> identity
    np.testing.assert_array_equal(out[0, 8:12], [1, 0, 0, 0])
    assert out[0, 7] == 0.3 and key[0, 3] == 0.0  # other coordinates kept; the input is not modified
