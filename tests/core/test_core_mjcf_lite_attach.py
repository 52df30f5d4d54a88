"""mjcf_lite reads ``<asset><model>`` + ``<attach>`` (``model_asset``) as MuJoCo's compiler attaches a
model: the body subtree at the ``<attach>``'s place with its own defaults and compiler conventions,
names prefixed, the child's actuators/sensors/equalities that act on it, its keyframes; every table
equal to ``mujoco.MjModel``'s of the same file (iit_softfoot, Menagerie's attach scene, included)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_core_mjcf_lite import assert_like_mujoco

from unisim_core.plugin.mjcf_lite import MjcfLiteError, load_mjcf

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "menagerie"

CHILD = """<mujoco>
  <compiler angle="radian" eulerseq="zyx"/>
  <default><joint damping="0.7"/><default class="k"><geom size="0.05" density="500"/></default></default>
  <worldbody>
    <body name="other" pos="5 0 0"><frame pos="0 0 1"><joint name="oj"/></frame><geom size="0.1"/></body>
    <body name="top" pos="0.1 0 0" euler="0.1 0.2 0.3">
      <joint name="j1" range="-0.5 0.5" ref="0.2"/><geom class="k" name="g1"/><site name="s1"/>
      <body name="kid" pos="0 0 -0.2"><joint name="j2" type="slide" range="-0.1 0.1"/>
        <geom class="k" type="capsule" size="0.02 0.1"/></body>
    </body>
  </worldbody>
  <actuator><position name="m1" joint="j1" kp="3" ctrlrange="-1 1"/><motor name="m0" joint="oj"/></actuator>
  <sensor><jointpos name="p1" joint="j1"/><framepos name="f1" objtype="site" objname="s1"/></sensor>
  <keyframe><key name="home" qpos="0 0.1 0.02"/></keyframe>
</mujoco>"""

MAIN = """<mujoco>
  <default><geom density="2000"/><joint armature="0.1"/></default>
  <asset><model name="c" file="child.xml"/></asset>
  <worldbody>
    <body name="base" pos="0 0 1"><joint name="bj" type="slide" axis="0 0 1"/><geom size="0.1"/>
      <body name="before"><geom size="0.01"/></body>
      <attach model="c" body="top" prefix="x_"/>
      <body name="after"><geom size="0.01"/></body>
    </body>
  </worldbody>
  <actuator><motor name="mb" joint="bj"/></actuator>
  {keys}
</mujoco>"""


@pytest.mark.parametrize("keys", ["", '<keyframe><key name="pk" qpos="0.3"/></keyframe>',
                                  '<keyframe><key name="pk" qpos="0.3 0.4 0.05"/></keyframe>'])
def test_attached_subtree_equals_mujocos(tmp_path, keys):
    """Placed between its siblings; the child's defaults (damping 0.7, density 500) and not the parent's
    (armature, density 2000); radians and its eulerseq; hinge ref; actuators/sensors on the subtree
    kept (m0 on the other body left out); the child's key (laid out past the other body's joint, which
    sits in a frame) and a parent key of either length."""
    (tmp_path / "child.xml").write_text(CHILD)
    (tmp_path / "main.xml").write_text(MAIN.format(keys=keys))
    lite = load_mjcf(tmp_path / "main.xml")
    assert lite.body_names == ["world", "base", "before", "x_top", "x_kid", "after"]
    assert [a["name"] for a in lite.actuators] == ["mb", "x_m1"]
    assert [s["name"] for s in lite.sensors] == ["x_p1", "x_f1"]
    assert_like_mujoco(tmp_path / "main.xml")


def test_iit_softfoot_equals_mujocos(tmp_path):
    """Menagerie's iit_softfoot (a foot attached to a test rig, radians, 50 equalities), its spatial
    tendons taken out (outside the reader's subset): every table as MuJoCo compiles it, the rig's
    massless slider body framed as MuJoCo 4 frames a body without mass (its own pos/quat)."""
    src = CORPUS / "iit_softfoot"
    if not (src / "scene.xml").is_file():
        pytest.skip(f"the Menagerie corpus is not at {CORPUS}")
    foot = re.sub(r"<tendon>.*?</tendon>", "", (src / "softfoot.xml").read_text(), flags=re.S)
    (tmp_path / "softfoot.xml").write_text(foot.replace('meshdir="meshes"', f'meshdir="{src / "meshes"}"'))
    (tmp_path / "scene.xml").write_text((src / "scene.xml").read_text())
    accept = {"joint_equality", "connect_equality", "joint_stiffness", "multi_joint_body"}
    lite = load_mjcf(tmp_path / "scene.xml", accept=accept)
    assert lite.constraints == {"joint_equality": 45, "connect_equality": 5}
    assert_like_mujoco(tmp_path / "scene.xml")
    with pytest.raises(MjcfLiteError) as info:  # the file as it is: its tendons are refused by name
        load_mjcf(src / "scene.xml", accept=accept)
    assert info.value.feature == "spatial_tendon"


@pytest.mark.parametrize(("attach", "why"), [
    ('model="nope" body="top"', "model='nope', which is not an <asset><model>"),
    ('model="c" body="nope"', "body='nope', which is not a body of")])
def test_an_attach_naming_nothing_is_an_error(tmp_path, attach, why):
    (tmp_path / "child.xml").write_text(CHILD)
    (tmp_path / "main.xml").write_text(MAIN.format(keys="").replace('model="c" body="top"', attach))
    with pytest.raises(MjcfLiteError, match=re.escape(why)) as info:
        load_mjcf(tmp_path / "main.xml")
    assert info.value.feature is None
