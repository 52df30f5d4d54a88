"""``subtreecom``/``subtreelinvel`` sensors (the core's ``contract.subtree``, from each engine's body state),
frame sensors of geoms (``LiteModel.frame_offset``), frame axes (``framexaxis``...) and frame sensors measured in
another frame (``reftype``/``refname``: mjlab's projected-gravity ``framezaxis`` of the world in the IMU's frame), on
the engines that read sensors through ``mjcf_lite``, against MuJoCo's ``sensordata`` at the engine's own state."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from core_helpers import write_scene

from unisim_core import SceneCfg, create_backend
from unisim_core.plugin.mjcf_lite import MjcfLiteError, load_mjcf

#: A free torso with a two-link leg (the shin's geom turned and off its body's origin, the foot's box off its
#: own), driven by two motors: every subtree and geom frame moves.
SCENE = """<option timestep="0.002"/><worldbody><geom name="floor" type="plane" size="5 5 0.1"/>
  <body name="torso" pos="0 0 1"><freejoint/>
    <geom name="tg" type="capsule" fromto="-0.2 0 0 0.2 0 0" size="0.05" mass="3"/>
    <body name="leg" pos="0.2 0 0"><joint name="hip" axis="0 1 0" damping="0.1"/>
      <geom name="lg" type="capsule" size="0.04 0.2" mass="1" pos="0 0.01 -0.2" euler="0 10 0"/>
      <body name="foot" pos="0 0 -0.4"><joint name="knee" axis="0 1 0"/>
        <geom name="fg" type="box" size="0.1 0.05 0.02" pos="0.05 0 0" mass="0.5"/></body></body></body></worldbody>
<actuator><motor joint="hip"/><motor joint="knee"/></actuator>
<sensor><subtreecom name="com" body="torso"/><subtreelinvel name="vel" body="torso"/>
  <subtreeangmom name="angmom" body="torso"/><subtreeangmom name="leg_angmom" body="leg"/>
  <subtreecom name="leg_com" body="leg"/><subtreelinvel name="leg_vel" body="leg"/>
  <framepos name="foot_pos" objtype="geom" objname="fg"/><framequat name="shin_quat" objtype="geom" objname="lg"/>
  <framelinvel name="foot_vel" objtype="geom" objname="fg"/><framexaxis name="foot_x" objtype="geom" objname="fg"/>
  <framezaxis name="shin_z" objtype="body" objname="leg"/>
  <framezaxis name="up" objtype="body" objname="world" reftype="geom" refname="tg"/>
  <framepos name="foot_in_torso" objtype="geom" objname="fg" reftype="xbody" refname="torso"/>
  <framequat name="foot_in_leg" objtype="body" objname="foot" reftype="body" refname="leg"/></sensor>"""

#: The engines whose sensors ``mjcf_lite`` defines; one not installed is skipped (the numpy 1.26 subset of
#: .ci/run has none); Genesis' own test is in plugins/unisim_genesis (the heavy extra).
BACKENDS = [pytest.param(name, marks=pytest.mark.skipif(importlib.util.find_spec(f"unisim_{name}") is None,
                                                        reason=f"unisim-{name} is not installed"))
            for name in ("sapien", "newton")]


def test_a_velocity_in_a_reference_frame_is_refused_by_name(tmp_path):
    """``framelinvel`` with ``reftype``: MuJoCo's relative velocity in a moving frame is not evaluated: refused,
    never read in the world frame."""
    path = write_scene(tmp_path, SCENE.replace('<framelinvel name="foot_vel" objtype="geom" objname="fg"/>',
                                               '<framelinvel name="foot_vel" objtype="geom" objname="fg" '
                                               'reftype="site" refname="nope"/>'))
    with pytest.raises(MjcfLiteError) as info:
        load_mjcf(str(path), accept={"subtreecom_sensor", "subtreelinvel_sensor", "subtreeangmom_sensor",
                                     "framexaxis_sensor", "framezaxis_sensor"})
    assert info.value.feature == "frame_sensor_reftype" and "foot_vel" in str(info.value)


def test_subtree_sensors_are_gated_and_geom_frames_read(tmp_path):
    path = write_scene(tmp_path, SCENE)
    with pytest.raises(MjcfLiteError) as info:
        load_mjcf(str(path))
    assert info.value.feature == "subtreecom_sensor"
    lite = load_mjcf(str(path), accept={"subtreecom_sensor", "subtreelinvel_sensor", "subtreeangmom_sensor",
                                        "framexaxis_sensor", "framezaxis_sensor"})
    assert [(s["objtype"], s["obj"]) for s in lite.sensors[:2]] == [("subtree", 1), ("subtree", 1)]
    foot = next(s for s in lite.sensors if s["name"] == "foot_pos")
    body, pos, _ = lite.frame_offset(foot["objtype"], foot["obj"])
    assert body == 3 and np.allclose(pos, [0.05, 0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_subtree_and_geom_frame_sensors_are_mujocos(tmp_path, backend):
    """After 60 steps of the two motors (the torso falls and kicks), every sensor equals MuJoCo's ``sensordata``
    of the same state (measured: 1.8e-7 PhysX, 3.1e-8 Newton, float32 engines)."""
    mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo")
    path = write_scene(tmp_path, SCENE)
    b = create_backend(backend, SceneCfg(str(path)), 2, 0.002)
    ctrl = np.array([[0.5, -0.3], [-0.2, 0.4]], dtype=b.np_dtype)
    b.step(ctrl, 60)
    m = mujoco.MjModel.from_xml_path(str(path))
    names = b.model_info.sensor_names
    got = b.get_sensor_data_batch(names)
    for i in range(2):
        d = mujoco.MjData(m)
        d.qpos[:], d.qvel[:], d.ctrl[:] = b.get_qpos()[i], b.get_qvel()[i], ctrl[i]
        mujoco.mj_forward(m, d)
        assert np.abs(d.sensordata[3:6]).max() > 0.1  # the subtree moves
        np.testing.assert_allclose(got[i], d.sensordata, atol=1e-6)
