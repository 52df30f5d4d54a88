"""``<position dampratio>`` in ``mjcf_lite``: kv from the mass matrix at qpos0, as MuJoCo's compiler
(``kv = dampratio * 2 * sqrt(kp / (gear^2 (M^-1)_dd))``), checked against ``mujoco.MjModel``."""

from __future__ import annotations

import numpy as np
import pytest
from core_helpers import write_scene

from unisim_core.plugin.mjcf_lite import MjcfLiteError, load_mjcf
from unisim_core.plugin.mjcf_lite._dampratio import mass_matrix0

#: a free base with a tilted inertial frame, a hinge + slide body (armature, a ref, a tilted axis) and a
#: hinge on a turned body: every dof couples with the others
SCENE = """<compiler angle="radian"/><worldbody>
  <body name="base" pos="0.1 0 0.8" quat="0.9 0.1 0.3 0.2"><freejoint/>
    <inertial pos="0.05 -0.02 0.01" quat="0.8 0.2 0.4 0.1" mass="3" diaginertia="0.1 0.08 0.05"/>
    <body name="arm" pos="0.2 0.05 0">
      <joint name="h1" axis="0 1 0.2" pos="0 0 0.03" armature="0.02" ref="0.3"/>
      <joint name="s1" type="slide" axis="1 0 0" armature="0.5"/>
      <inertial pos="0.1 0 -0.02" mass="0.7" diaginertia="0.004 0.003 0.002"/>
      <body name="hand" pos="0.3 0 0" euler="0.4 0 0.7">
        <joint name="h2" axis="0 0 1"/><inertial pos="0.05 0.01 0" mass="0.2" diaginertia="0.001 0.001 0.0005"/>
      </body>
    </body>
  </body></worldbody>
<actuator>
  <position name="p1" joint="h1" kp="40" dampratio="1"/>
  <position name="p2" joint="s1" kp="300" dampratio="0.7" gear="2"/>
  <position name="p3" joint="h2" kp="5" dampratio="1.5"/>
  <position name="p4" joint="h2" kp="5" kv="0.3"/>
</actuator>"""


def test_kv_and_mass_matrix_are_mujocos(tmp_path):
    mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo's compiler")
    path = write_scene(tmp_path, SCENE)
    lite = load_mjcf(path, accept={"dampratio", "multi_joint_body"})
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    full = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, full)
    np.testing.assert_allclose(mass_matrix0(lite), full, atol=1e-12)
    np.testing.assert_allclose(lite.model_info().actuator_kd, -m.actuator_biasprm[:, 2], rtol=1e-10)
    assert lite.model_info().actuator_kd[3] == 0.3


def test_dampratio_is_refused_unless_accepted(tmp_path):
    with pytest.raises(MjcfLiteError) as info:
        load_mjcf(write_scene(tmp_path, SCENE), accept={"multi_joint_body"})
    assert info.value.feature == "dampratio" and "p1" in str(info.value)
