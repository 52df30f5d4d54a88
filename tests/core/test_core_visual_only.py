"""What only a renderer reads never refuses a model: ``<visual>``, skins, lights, material looks
(``mjcf_features.visual_only``/``drop_visual``, ``check_features``), and mjcf_lite reads such a model
as MuJoCo compiles it."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from core_helpers import write_scene
from test_core_mjcf_lite import assert_like_mujoco

from unisim_core.contract.errors import UnsupportedCapabilityError
from unisim_core.plugin.mjcf_features import check_features, drop_visual, features, scan_mjcf, visual_only
from unisim_core.plugin.mjcf_lite import read_tree

LOOKS = """
<visual><quality shadowsize="0"/><global azimuth="10"/></visual>
<asset><texture name="t" type="2d" builtin="checker" width="8" height="8"/>
  <material name="m" texture="t" emission="0.8" specular="0.3" rgba="1 0 0 1"/></asset>
<worldbody><light pos="0 0 3"/>
  <body name="b" pos="0 0 1"><freejoint/><geom size="0.1" material="m" rgba="0 1 0 1"/>
    <body name="c" pos="0 0 -0.3"><joint name="j"/><geom size="0.05"/></body></body></worldbody>
<deformable><skin name="s" vertex="0 0 0 0.1 0 0 0 0.1 0" face="0 1 2">
  <bone body="b" bindpos="0 0 0" bindquat="1 0 0 0" vertid="0 1 2" vertweight="1 1 1"/></skin></deformable>"""


def test_visual_only_features_are_named_and_never_refused(tmp_path):
    path = write_scene(tmp_path, LOOKS + '<tendon><fixed name="t"><joint joint="j" coef="1"/></fixed></tendon>')
    uses = scan_mjcf(path)
    assert "skin" in features(uses) and visual_only("skin")
    assert all(visual_only(f) for f in ("material_emission", "quality_shadowsize", "geom_rgba", "light"))
    assert not any(visual_only(f) for f in ("fixed_tendon", "mesh_fitted_primitive", "body_gravcomp", "geom_group"))
    refused = {"skin": "no skins", "material_emission": "rejected by the parser", "fixed_tendon": "no tendons"}
    with pytest.raises(UnsupportedCapabilityError) as info:  # the tendon, not the skin before it
        check_features("x", uses, refused=refused)
    assert info.value.capability == "fixed_tendon"
    check_features("x", [u for u in uses if u.feature != "fixed_tendon"], refused=refused)


def test_mjcf_lite_reads_a_model_with_looks_as_mujoco(tmp_path):
    """A skin, a light, a textured material with emission and <visual>: every table as MuJoCo's."""
    assert_like_mujoco(write_scene(tmp_path, LOOKS))


def test_drop_visual_leaves_the_physics(tmp_path):
    """drop_visual removes <visual>, the skin (and its emptied <deformable>), the light and the material's
    looks; the material stays (the geom names it) and MuJoCo compiles the same bodies, geoms and masses."""
    mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo's compiler")
    path = write_scene(tmp_path, LOOKS)
    root = drop_visual(read_tree(path))
    assert not [e.tag for e in root.iter() if e.tag in ("visual", "skin", "light", "deformable")]
    assert root.find("asset/material").attrib == {"name": "m", "texture": "t", "rgba": "1 0 0 1"}
    a, b = mujoco.MjModel.from_xml_path(str(path)), mujoco.MjModel.from_xml_string(ET.tostring(root, "unicode"))
    assert (b.nskin, b.nlight, a.nskin) == (0, 0, 1)
    assert (a.nbody, a.ngeom, a.nq, list(a.body_mass), a.geom_matid[0]) == (b.nbody, b.ngeom, b.nq, list(b.body_mass),
                                                                            b.geom_matid[0])
