"""mjcf_lite dissolves ``<frame>`` as MuJoCo's compiler does: bodies, joints, geoms (``fromto`` ones
too) and sites inside frames (nested, turned, with a ``childclass`` giving defaults) at MuJoCo's poses."""

from __future__ import annotations

import numpy as np
import pytest
from core_helpers import write_scene
from test_core_mjcf_lite import assert_like_mujoco

from unisim_core.plugin.mjcf_lite import load_mjcf

FRAMES = """
<default><default class="fc"><geom size="0.03" density="700"/><site size="0.01" pos="0 0.02 0"/>
  <joint damping="0.2"/></default></default>
<worldbody>
  <frame pos="0 0 0.5" euler="0 0 30">
    <geom name="wg" type="box" size="0.1 0.1 0.01"/>
    <body name="a" pos="0.2 0 0"><freejoint/><geom size="0.05"/>
      <frame pos="0.1 0 0" euler="20 0 0" childclass="fc">
        <geom name="fg"/><site name="fs"/>
        <geom name="fromto" type="box" fromto="0 0 0 0.1 0 0.05" size="0.01"/>
        <frame pos="0 0.05 0" quat="0 0 0 1"><geom name="nested" class="fc" pos="0.01 0 0"/></frame>
        <body name="b" pos="0 0 -0.1"><frame pos="0 0.1 0" euler="0 90 0"><joint name="j" axis="1 0 0"/></frame>
          <geom/><site name="bs"/></body>
      </frame>
    </body>
  </frame>
</worldbody>"""


def test_frames_dissolve_into_mujocos_poses(tmp_path):
    mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo's compiler")
    path = write_scene(tmp_path, FRAMES)
    assert_like_mujoco(path)  # bodies, joint anchor/axis, sites, masses and inertial frames, defaults
    lite, mj = load_mjcf(path), mujoco.MjModel.from_xml_path(str(path))
    for g, geom in enumerate(lite.geoms):
        q = geom["quat"]
        np.testing.assert_allclose(geom["pos"], mj.geom_pos[g], atol=1e-12, err_msg=mj.geom(g).name)
        same_sign = np.sign(q @ mj.geom_quat[g]) * q  # q and -q are one rotation
        np.testing.assert_allclose(same_sign, mj.geom_quat[g], atol=1e-12, err_msg=mj.geom(g).name)
        np.testing.assert_allclose(geom["size"], mj.geom_size[g], atol=1e-12, err_msg=mj.geom(g).name)
