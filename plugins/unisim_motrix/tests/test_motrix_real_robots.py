"""Real robots (MuJoCo Menagerie corpus, ``../shared/corpus/menagerie``): every model is either
simulated as the file says or refused at construction by its MJCF feature name."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from motrix_testutil import ROOT

from unisim_core import SceneCfg
from unisim_core.errors import EngineError, UnsupportedCapabilityError
from unisim_motrix import MotrixBackend, MotrixModellingWarning
from unisim_motrix._features import REFUSED_FEATURES, check_layout

CORPUS = os.path.join(ROOT, "..", "shared", "corpus", "menagerie")
corpus = pytest.mark.skipif(not os.path.isdir(CORPUS), reason="the Menagerie corpus (../shared/corpus/menagerie) "
                            "is absent")


def _backend(path: str, num_envs: int = 2, **kw) -> MotrixBackend:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MotrixModellingWarning)
        return MotrixBackend(SceneCfg(path, **kw), num_envs, 0.002)


def _refused(path: str) -> UnsupportedCapabilityError:
    with pytest.raises(UnsupportedCapabilityError) as info:
        _backend(path)
    assert info.value.capability in REFUSED_FEATURES
    return info.value


@corpus
@pytest.mark.parametrize("robot, feature, element", [
    ("agility_cassie/scene.xml", "actuatorpos_sensor", "sensor 'left-hip-roll-input' of type <actuatorpos>"),
    ("bitcraze_crazyflie_2/scene.xml", "site_transmission", "actuator 'body_thrust' with a site transmission"),
    ("tetheria_aero_hand_open/left_hand.xml", "spatial_tendon", "tendon 'if_tendon0' of type <spatial>"),
    ("shadow_dexee/scene.xml", "plugin", "<plugin> (unnamed)"),
    ("iit_softfoot/scene.xml", "spatial_tendon", "softfoot.xml: tendon 'tendon_1' of type <spatial>"),
])
def test_corpus_robot_refused_by_feature_and_element(robot, feature, element):
    """Before: cassie failed naming the sensor only, the drones loaded with 0 actuators, the others
    raised engine text; iit_softfoot's spatial tendons are in its ``<model>`` asset's file."""
    err = _refused(os.path.join(CORPUS, robot))
    assert err.capability == feature
    assert f"{element} is not supported by motrix" in str(err)


def test_sensor_types_motrix_lacks_are_refused(tmp_path):
    xml = tmp_path / "force.xml"
    xml.write_text("""<mujoco><worldbody><body name="b"><freejoint/><geom type="sphere" size="0.1"/>
      <site name="s"/></body></worldbody><sensor><gyro name="g" site="s"/><force name="left_foot_force" site="s"/>
      </sensor></mujoco>""")
    err = _refused(str(xml))
    assert err.capability == "force_sensor"
    assert "sensor 'left_foot_force' of type <force> is not supported by motrix" in str(err)


@corpus
def test_layout_differences_from_the_file_are_errors():
    """The check behind every construction: MotrixSim alone builds the crazyflie with 0 actuators."""
    import motrixsim

    path = os.path.join(CORPUS, "bitcraze_crazyflie_2", "scene.xml")
    nu = motrixsim.load_model(path).num_actuators
    assert nu == 0
    with pytest.raises(EngineError, match=r"nu 0 \(the file: 4\)"):
        check_layout("motrix", path, {"nu": nu})


def test_jointless_model_steps_and_sets_state(tmp_path):
    """Before: ``set_state`` panicked (``assertion failed: chunk_size > 0``)."""
    xml = tmp_path / "static.xml"
    xml.write_text("""<mujoco><worldbody><geom type="plane" size="1 1 0.1"/>
      <body name="b" pos="0 0 0.1"><geom type="box" size="0.1 0.1 0.1"/></body></worldbody></mujoco>""")
    b = _backend(str(xml))
    b.set_state(np.arange(2), np.zeros((2, 0)), np.zeros((2, 0)))
    b.step(np.zeros((2, 0)), nsteps=2)
    np.testing.assert_allclose(b.get_body_pos_w(np.array([1]))[:, 0], [[0, 0, 0.1]] * 2, atol=1e-6)
    b.close()


def test_keyframes_as_mujoco_compiles_them(tmp_path):
    """A key with ctrl only holds qpos0 (before: ``IndexError``); a zero quaternion becomes the
    identity (before: pal_talos' ``[0, 0, 0, 0]`` base quaternion); an unnamed key is left out of the
    table as MuJoCo leaves it (before: listed under the name ``None``)."""
    xml = tmp_path / "keys.xml"
    xml.write_text("""<mujoco><worldbody><body name="b" pos="0 0 1"><freejoint/><geom type="sphere" size="0.1"/>
      <body name="c"><joint name="h" axis="1 0 0" ref="0"/><geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03"/>
      </body></body></worldbody><actuator><motor name="m" joint="h"/></actuator>
      <keyframe><key name="ctrl_only" ctrl="0.5"/><key qpos="0 0 2 1 0 0 0 0"/>
      <key name="zero_quat" qpos="0 0 0.5 0 0 0 0 0.2"/></keyframe>
      </mujoco>""")
    b = _backend(str(xml), num_envs=1, default_keyframe="zero_quat")
    assert list(b.model_info.keyframes) == ["ctrl_only", "zero_quat"]
    np.testing.assert_allclose(b.get_default_qpos(), [0, 0, 0.5, 1, 0, 0, 0, 0.2], atol=1e-7)
    np.testing.assert_allclose(b.get_keyframe_qpos("ctrl_only"), [0, 0, 1, 1, 0, 0, 0, 0], atol=1e-7)
    b.close()


def test_contact_time_constant_below_two_steps_warns(tmp_path):
    """MuJoCo raises solref[0] to 2 * timestep (refsafe); MotrixSim keeps 0.001 s (stiffness 1/tc^2 = 1e6)."""
    xml = tmp_path / "stiff.xml"
    xml.write_text("""<mujoco><worldbody><geom type="plane" size="1 1 0.1" solref="0.001 1"/>
      <body name="b" pos="0 0 0.1"><freejoint/><geom type="sphere" size="0.1"/></body></worldbody></mujoco>""")
    with pytest.warns(MotrixModellingWarning, match=r"1 collidable geom\(s\) have a solref time constant below"):
        b = MotrixBackend(SceneCfg(str(xml)), 1, 0.002)
    np.testing.assert_allclose(b.model.low.colliders[0].contact_force.coeff[0], 1e6, rtol=1e-5)
    b.close()


@corpus
def test_rewritten_for_motrixsim_as_mujoco_compiles_it():
    """Refused before, loaded now from a copy carrying MuJoCo's compiled values: arx_l5's mesh-fitted
    capsules get MuJoCo's fitted size and pose (MotrixSim alone: radius 0.162 m for MuJoCo's 0.024 m,
    and the arm panicked at step 81), i2rt_yam's ``inheritrange`` actuators MuJoCo's ctrlrange
    (MotrixSim's parser rejected ``inheritrange`` beside ``ctrlrange``), umi_gripper loads without
    its ``<visual>`` (the parser rejected ``shadowsize="0"``). MotrixSim's geoms and ranges are
    compared with ``mujoco.MjModel`` of the original file (float32)."""
    import mujoco

    path = os.path.join(CORPUS, "arx_l5", "scene.xml")
    m = mujoco.MjModel.from_xml_path(path)
    with _backend(path) as b:
        fitted = [g for g in range(m.ngeom) if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_CAPSULE]
        assert len(fitted) >= 7
        for g in fitted:
            mx = b.model.geoms[g]
            np.testing.assert_allclose(np.asarray(mx.size)[:2], m.geom_size[g][:2], rtol=1e-6)
            np.testing.assert_allclose(np.asarray(mx.local_pose)[:3], m.geom_pos[g], atol=1e-6)
        b.step(np.tile(m.key_ctrl[0] if m.nkey else np.zeros(m.nu), (2, 1)), 100)
        assert np.isfinite(b.get_qpos()).all()
    path = os.path.join(CORPUS, "i2rt_yam", "scene.xml")
    m = mujoco.MjModel.from_xml_path(path)
    with _backend(path) as b:
        np.testing.assert_allclose(b.get_actuator_ctrl_range(), m.actuator_ctrlrange, rtol=1e-6)
    with _backend(os.path.join(CORPUS, "umi_gripper", "scene.xml")) as b:
        assert b.num_bodies == mujoco.MjModel.from_xml_path(os.path.join(CORPUS, "umi_gripper", "scene.xml")).nbody


def test_inertia_unlike_mujocos_warns():
    """The guard after loading: a body whose mass or principal inertia differs from MuJoCo's by more
    than 1e-3 relative is named in a warning (every inertia MotrixSim loads is MuJoCo's now; this
    catches an engine reading an ``<inertial>`` unlike MuJoCo)."""
    from types import SimpleNamespace

    from unisim_motrix._features import warn_inertia

    m = SimpleNamespace(body_inertia=np.array([[0, 0, 0], [0.03, 0.03, 0.002]]), body_mass=np.array([0.0, 2.0]))
    link = SimpleNamespace(name="b", mass=2.0)
    with pytest.warns(MotrixModellingWarning, match="body 'b'"):
        warn_inertia("x.xml", [link], [np.array([0.03, 0.0375, 0.002])], m)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_inertia("x.xml", [link], [np.array([0.03, 0.03, 0.002])], m)
