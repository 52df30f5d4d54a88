"""Real robots (MuJoCo Menagerie corpus, ``../shared/corpus/menagerie``): every model is either
simulated as the file says or refused at construction by its MJCF feature name."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from motrix_testutil import ROOT

from unisim_core import SceneCfg
from unisim_core.contract.errors import EngineError, UnsupportedCapabilityError
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
    ("tetheria_aero_hand_open/left_hand.xml", "spatial_tendon", "tendon 'if_tendon0' of type <spatial>"),
    ("shadow_dexee/scene.xml", "plugin", "<plugin> (unnamed)"),
    ("iit_softfoot/scene.xml", "spatial_tendon", "softfoot.xml: tendon 'tendon_1' of type <spatial>"),
])
def test_corpus_robot_refused_by_feature_and_element(robot, feature, element):
    """Before: the others raised engine text; iit_softfoot's spatial tendons are in its ``<model>``
    asset's file."""
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
@pytest.mark.parametrize("robot, ctrl", [("bitcraze_crazyflie_2", [0.30, 0.4, -0.3, 0.2]),
                                         ("skydio_x2", [4.0, 3.0, 3.5, 2.5])])
def test_site_actuators_fly_like_mujoco(robot, ctrl):
    """Thrusters (site transmissions, which MotrixSim drops: the crazyflie loaded with 0 actuators) as
    the site's wrench: from the keyframe, 0.3 s under an unbalanced ctrl (climbing, rolling, yawing),
    the free root follows MuJoCo within 1e-4 m / rad (float32; MuJoCo moves it by > 1e-2). MuJoCo's
    fluid drag (the models' ``density``/``viscosity``) and the crazyflie's RK4, which MotrixSim ignores
    (it warns), are switched off in the reference: with them the crazyflie climbs 0.58 mm less in 0.3 s
    (0.39 mm of it RK4's exact ½ a t² against semi-implicit Euler's ½ a dt t more)."""
    import mujoco

    path = os.path.join(CORPUS, robot, "scene.xml")
    m = mujoco.MjModel.from_xml_path(path)
    m.opt.density = m.opt.viscosity = 0.0
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, 0)
    q0 = d.qpos.copy()
    steps = int(round(0.3 / m.opt.timestep))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MotrixModellingWarning)
        b = MotrixBackend(SceneCfg(path), 2, float(m.opt.timestep), np_dtype=np.float64)
    with b:
        assert b.num_actuators == m.nu and list(b.get_actuator_names()) == [m.actuator(i).name for i in range(m.nu)]
        b.set_state(np.arange(2), np.tile(q0, (2, 1)), np.zeros((2, m.nv)))
        b.step(np.array([ctrl, m.key_ctrl[0]], np.float64), steps)  # env 1 hovers
        d.ctrl[:] = ctrl
        mujoco.mj_step(m, d, steps)
        assert np.abs(d.qpos - q0).max() > 1e-2
        np.testing.assert_allclose(b.get_qpos()[0], d.qpos, atol=1e-4)
        np.testing.assert_allclose(b.get_qpos()[1], q0, atol=1e-4)


@corpus
def test_cassies_derived_sensors_are_mujocos():
    """agility_cassie's actuatorpos sensors (gear * joint position) and magnetometer (the field in the
    site frame), which MotrixSim's loader drops, equal MuJoCo's sensordata at a turned, bent state."""
    import mujoco

    path = os.path.join(CORPUS, "agility_cassie", "scene.xml")
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, 0)
    rng = np.random.default_rng(1)
    d.qpos[3:7] = [0.9, 0.2, -0.1, 0.3]
    d.qpos[3:7] /= np.linalg.norm(d.qpos[3:7])
    d.qpos[7:] += rng.uniform(-0.05, 0.05, m.nq - 7)
    mujoco.mj_forward(m, d)
    with _backend(path, 1) as b:
        b.set_state(np.array([0]), d.qpos[None], np.zeros((1, m.nv)))
        kinds = (int(mujoco.mjtSensor.mjSENS_ACTUATORPOS), int(mujoco.mjtSensor.mjSENS_MAGNETOMETER))
        names = [m.sensor(i).name for i in range(m.nsensor) if int(m.sensor_type[i]) in kinds]
        assert len(names) == 11
        for name in names:
            s = m.sensor(name)
            np.testing.assert_allclose(b.get_sensor_data(name)[0], d.sensordata[s.adr[0]:s.adr[0] + s.dim[0]],
                                       atol=2e-6, err_msg=name)


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


@corpus
def test_pal_talos_stands_like_mujoco_with_mujocos_contact_mix():
    """pal_talos from its keyframe (feet 2 mm into the floor; feet solref 0.001, floor 0.02): with the
    feet-floor pairs at MuJoCo's mixed time constant (0.0105 s) MotrixSim keeps the base within 2 mm of
    MuJoCo's over 100 steps (MotrixSim's own mix, 55x stiffer, popped it 23 mm up: docs/motrix.md)."""
    import mujoco

    path = os.path.join(CORPUS, "pal_talos", "scene_motor.xml")
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, 0)
    q0 = d.qpos.copy()
    with _backend(path, 1) as b:
        b.set_state(np.array([0]), q0[None], np.zeros((1, m.nv)))
        b.step(np.zeros((1, m.nu)), 100)
        mujoco.mj_step(m, d, 100)
        assert abs(float(b.get_qpos()[0, 2]) - d.qpos[2]) < 2e-3, (b.get_qpos()[0, 2], d.qpos[2])
