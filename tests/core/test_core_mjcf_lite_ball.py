"""mjcf_lite reads ball joints when the backend accepts ``ball_joint``: qpos 4 (wxyz, identity at qpos0),
3 dofs, a limited range [0, max] in radians, damping/armature per dof, a normalised keyframe quaternion,
a position actuator's dampratio kv through the mass matrix: every table as ``mujoco.MjModel``'s."""

from __future__ import annotations

import numpy as np
import pytest
from core_helpers import write_scene
from test_core_mjcf_lite import assert_like_mujoco

from unisim_core.plugin.mjcf_lite import MjcfLiteError, load_mjcf

BALLS = """
<worldbody><body name="torso" pos="0 0 1"><freejoint/><geom size="0.2" mass="5"/>
  <body name="arm" pos="0.3 0 0"><joint name="shoulder" type="ball" range="0 60" damping="0.3" armature="0.02"/>
    <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04"/>
    <body name="fore" pos="0.3 0 0" euler="0 20 0"><joint name="elbow" axis="0 1 0" range="-90 10"/>
      <geom type="capsule" fromto="0 0 0 0.25 0 0" size="0.03"/>
      <body name="hand" pos="0.25 0 0"><joint name="wrist" type="ball" pos="0.01 0 0"/><geom size="0.05"/>
      </body></body></body></body></worldbody>
<actuator><position name="elbow" joint="elbow" kp="20" dampratio="1"/></actuator>
<keyframe><key name="pose" qpos="0 0 1 1 0 0 0 0 2 0 0 0.5 1 1 0 0"/></keyframe>"""


def test_ball_joints_are_read_as_mujoco_when_accepted(tmp_path):
    path = write_scene(tmp_path, BALLS)
    with pytest.raises(MjcfLiteError) as info:
        load_mjcf(path, accept={"dampratio"})
    assert info.value.feature == "ball_joint"
    m = load_mjcf(path, accept={"ball_joint", "dampratio"})
    assert (m.nq, m.nv) == (16, 13) and [j["type"] for j in m.joints] == ["free", "ball", "hinge", "ball"]
    np.testing.assert_array_equal(m.qpos0()[7:11], [1, 0, 0, 0])
    np.testing.assert_allclose(m.keyframes["pose"][7:11], [0, 1, 0, 0])  # (0, 2, 0, 0) normalised
    assert_like_mujoco(path)  # ranges, dofs, kv from dampratio, keyframes: MuJoCo's compiled model
