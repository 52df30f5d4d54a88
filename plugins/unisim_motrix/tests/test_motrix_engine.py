"""Engine boundary: thread pool, panics, loader errors, ignored MJCF options, gymnasium models."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from motrix_testutil import scene_path

from unisim_core import SceneCfg
from unisim_core.contract.errors import EngineError, UnsupportedCapabilityError
from unisim_motrix import MotrixBackend, MotrixModellingWarning, _mjcf, engine_call


def test_thread_pool_same_request_ok_conflict_is_clear_error():
    """Process-wide pool: run in a fresh interpreter (it must be initialised before any model load)."""
    code = f"""
import warnings; warnings.simplefilter('ignore')
from unisim_core import SceneCfg
from unisim_motrix import MotrixBackend, ThreadPoolConflictError
s = SceneCfg({scene_path('pendulum.xml')!r})
MotrixBackend(s, 2, 0.001, threads=1).step(__import__('numpy').zeros((2, 0)), 2)
MotrixBackend(s, 2, 0.001, threads=1)   # same request: fine
MotrixBackend(s, 2, 0.001)              # no request: fine
try:
    MotrixBackend(s, 2, 0.001, threads=2)
except ThreadPoolConflictError as e:
    print('CONFLICT', e)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "CONFLICT threads:" in out.stdout and "initialised with 1 thread" in out.stdout, out.stderr[-2000:]


def test_engine_panic_is_wrapped_in_engine_error(make):
    """A real Rust panic (unknown sensor name) becomes EngineError naming the call."""
    b = make("pendulum.xml", 1)
    with pytest.raises(EngineError, match=r"motrixsim get_sensor_value panicked: cannot get given sensor") as ei:
        with engine_call("get_sensor_value"):
            b.model.get_sensor_value("no_such_sensor", b.data)
    assert type(ei.value.__cause__).__name__ == "PanicException"
    # a non-unit quaternion never reaches the engine through the contract (it would panic there)
    fb = make("free_body.xml", 1)
    with pytest.raises(ValueError, match="zero norm"):
        fb.set_state(np.array([0]), np.zeros((1, 7)), np.zeros((1, 6)))


def test_unloadable_model_names_the_element(tmp_path):
    xml = tmp_path / "flex.xml"
    xml.write_text("""<mujoco><worldbody><body name="b"><freejoint/><geom type="sphere" size="0.1"/></body>
      <flexcomp name="f" type="grid" count="2 2 1" spacing="0.1 0.1 0.1" dim="2"/></worldbody></mujoco>""")
    with pytest.raises(UnsupportedCapabilityError, match="<flexcomp> 'f' is not supported by motrix") as info:
        MotrixBackend(SceneCfg(str(xml)), 1, 0.002)
    assert info.value.capability == "flex"


def test_a_sensor_on_the_world_body_is_refused_naming_it(tmp_path):
    """mjlab's Go1 and G1: ``<framezaxis objtype="body" objname="world" reftype="site" ...>`` (projected gravity) is
    valid MJCF MotrixSim's loader rejects ("invalid link name: world"): a refusal by name, not an engine error."""
    xml = tmp_path / "up.xml"
    xml.write_text("""<mujoco><worldbody><body name="b"><freejoint/><geom type="sphere" size="0.1"/><site name="imu"/>
      </body></worldbody><sensor><framezaxis name="up" objtype="body" objname="world" reftype="site" refname="imu"/>
      </sensor></mujoco>""")
    with pytest.raises(UnsupportedCapabilityError, match="names the world body") as info:
        MotrixBackend(SceneCfg(str(xml)), 1, 0.002)
    assert info.value.capability == "world_body_sensor"


def test_ignored_options_warn_once_naming_the_option(tmp_path):
    xml = tmp_path / "opt.xml"
    xml.write_text("""<mujoco><option cone="elliptic" impratio="10" integrator="RK4"/>
      <worldbody><body name="b"><freejoint/><geom type="sphere" size="0.1"/></body></worldbody></mujoco>""")
    _mjcf._warned.clear()
    with pytest.warns(MotrixModellingWarning) as rec:
        MotrixBackend(SceneCfg(str(xml)), 1, 0.002).close()
    msgs = " ".join(str(w.message) for w in rec)
    for opt in ("option@cone", "option@impratio", "option@integrator"):
        assert opt in msgs
    with warnings.catch_warnings():
        warnings.simplefilter("error", MotrixModellingWarning)
        MotrixBackend(SceneCfg(str(xml)), 1, 0.002).close()  # once per file and option


GYM = ["ant", "humanoid", "half_cheetah", "hopper", "walker2d"]


def _gym_path(name):
    gym = pytest.importorskip("gymnasium")
    return os.path.join(os.path.dirname(gym.__file__), "envs", "mujoco", "assets", f"{name}.xml")


@pytest.mark.parametrize("name", GYM)
def test_gymnasium_models_roll_out(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MotrixModellingWarning)
        b = MotrixBackend(SceneCfg(_gym_path(name)), 2, 0.005)
    with b:
        rng = np.random.default_rng(0)
        lo, hi = b.get_actuator_ctrl_range().T
        for _ in range(50):
            b.step(rng.uniform(lo, hi, size=(2, b.num_actuators)), 1)
        assert b.get_qpos().shape == (2, b.nq) and b.get_qvel().shape == (2, b.nv)
        assert np.isfinite(b.get_qpos()).all() and np.isfinite(b.get_qvel()).all()
        assert b.get_body_pos_w(np.arange(b.num_bodies)).shape == (2, b.num_bodies, 3)


def test_inertia_from_geoms_is_mujocos(tmp_path):
    """Without <inertial>, MotrixSim alone derives a capsule's inertia its own way (r 0.05, half-length
    0.2, density 1000: MuJoCo diag (0.0692, 0.0692, 0.00445), MotrixSim (0.3755, 0.3755, 0.00825));
    the file it loads carries MuJoCo's compiled <inertial>, so the two agree to float32."""
    import motrixsim

    mujoco = pytest.importorskip("mujoco")
    xml = tmp_path / "cap.xml"
    xml.write_text("""<mujoco><worldbody><body name="b"><freejoint/>
      <geom type="capsule" size="0.05 0.2" density="1000"/></body></worldbody></mujoco>""")
    m = mujoco.MjModel.from_xml_path(str(xml))
    raw = np.asarray(motrixsim.load_model(str(xml)).links[0].get_inertia_override(
        motrixsim.SceneData(motrixsim.load_model(str(xml)))), np.float64).reshape(6)[:3]
    assert np.abs(raw - m.body_inertia[1]).max() / m.body_inertia[1].max() > 0.01, raw  # the engine alone
    with MotrixBackend(SceneCfg(str(xml)), 1, 0.002) as b:
        np.testing.assert_allclose(b.model_info.body_mass[1], m.body_mass[1], rtol=1e-6)
        np.testing.assert_allclose(np.sort(b.model_info.body_inertia[1]), np.sort(m.body_inertia[1]), rtol=1e-6)


def test_settotalmass_is_mujocos():
    """compiler@settotalmass (half_cheetah: 14 kg), which MotrixSim alone ignores, is in the compiled
    masses the file it loads carries: every body's mass is MuJoCo's (float32)."""
    mujoco = pytest.importorskip("mujoco")
    m = mujoco.MjModel.from_xml_path(_gym_path("half_cheetah"))
    with MotrixBackend(SceneCfg(_gym_path("half_cheetah")), 1, 0.01) as b:
        assert m.body_mass.sum() == pytest.approx(14.0)
        np.testing.assert_allclose(b.model_info.body_mass, m.body_mass, rtol=1e-6)


@pytest.mark.parametrize("name, pairs", [("hopper", 6), ("walker2d_v5", 7)])
def test_contact_mixing_pairs_keep_mujocos_trajectory(name, pairs):
    """Geoms whose contact parameters differ (hopper: the floor's friction 1 against the limbs' 0.9 and
    the foot's 2.0; condim 3 against 1) meet in explicit <pair>s carrying MuJoCo's mix in the file
    MotrixSim loads (MotrixSim mixes its own way: docs/motrix.md, pal_talos). MuJoCo runs that copy
    300 steps bit for bit as the original: the pairs hold exactly mj_contactParam's values and replace
    the dynamic contacts (the same contacts, not twice as many)."""
    import mujoco

    from unisim_motrix._engine_mjcf import EngineMjcf

    source = EngineMjcf("motrix", _gym_path(name))
    assert "contact_mixing" in source.fixes and len(source.mixed_pairs()) == pairs
    with source.file() as copy:
        m2 = mujoco.MjModel.from_xml_path(copy)
    m1 = mujoco.MjModel.from_xml_path(_gym_path(name))
    assert m2.npair == m1.npair + pairs
    d1, d2 = mujoco.MjData(m1), mujoco.MjData(m2)
    for _ in range(300):
        mujoco.mj_step(m1, d1)
        mujoco.mj_step(m2, d2)
        assert d1.ncon == d2.ncon
    assert np.array_equal(d1.qpos, d2.qpos) and d1.ncon > 0


def test_a_backend_makes_two_scene_datas(monkeypatch, make):
    """MotrixSim never frees a SceneData (~80 KB at 16 envs, ~70 KB more after its first step; docs/motrix.md
    "Memory"), so a backend makes exactly two: its batched one and one unbatched for the model's nominal
    tables, through construction, model_info and an inertia randomization. Before, the inertia check,
    model_info and each randomized link made their own (6 here: the test fails on the old adapter)."""
    import motrixsim

    from unisim_core import InitRandomizationPlan, RandomizationOp

    made = []
    real = motrixsim.SceneData

    def counting(*args, **kwargs):
        made.append(kwargs.get("batch"))
        return real(*args, **kwargs)

    monkeypatch.setattr(motrixsim, "SceneData", counting)
    b = make("quadruped.xml", 4)
    assert b.model_info.body_names[1] == "base"
    ids = b.get_body_ids(["FL_hip", "FR_hip", "RL_hip"])
    b.apply_init_randomization(InitRandomizationPlan([RandomizationOp(
        term="body_inertia", env_ids=np.array([1]), target_ids=ids, values=np.full((1, 3, 3), 1.1),
        operation="scale")]))
    b.step(np.zeros((4, b.num_actuators)), 2)
    assert made == [[4], None], made


def test_extrinsic_euler_sequences_become_mujocos_quaternions(tmp_path):
    """<compiler eulerseq="ZYX"> (MotrixSim's parser reads intrinsic xyz only; trossen_wxai was refused for
    it): every euler of the copy MotrixSim loads is the quaternion MuJoCo makes of it (MuJoCo compiles
    the copy's body, geom and site orientations equal to the original's to 1e-12), and MotrixSim's
    body orientations are MuJoCo's."""
    import mujoco

    from unisim_motrix._engine_mjcf import EngineMjcf

    xml = tmp_path / "zyx.xml"
    xml.write_text("""<mujoco><compiler angle="degree" eulerseq="ZYX"/><worldbody>
      <body name="a" pos="0 0 1" euler="30 -20 45"><freejoint/><geom type="box" size=".1 .2 .3" euler="10 0 80"/>
      <site name="s" euler="0 90 10"/></body></worldbody></mujoco>""")
    source = EngineMjcf("motrix", str(xml))
    assert "eulerseq" in source.fixes
    m1 = mujoco.MjModel.from_xml_path(str(xml))
    with source.file() as copy:
        m2 = mujoco.MjModel.from_xml_path(copy)
    for f in ("body_quat", "geom_quat", "site_quat"):
        np.testing.assert_allclose(getattr(m2, f), getattr(m1, f), atol=1e-12, err_msg=f)
    with MotrixBackend(SceneCfg(str(xml)), 1, 0.002) as b:
        np.testing.assert_allclose(b.get_body_quat_w(np.array([1]))[0, 0], m1.body_quat[1], atol=1e-6)


def test_mixed_pairs_carry_the_impedance_mujoco_uses(tmp_path):
    """A geom's solimp beyond MuJoCo's range (d0 2.0: trs_so_arm100, trossen_vx300s) is clamped where MuJoCo
    uses it (d0, dmax, midpoint into [mjMINIMP, mjMAXIMP]); the pair carries the clamped mix (MotrixSim's
    parser refused the raw one: the arms failed to load), and MuJoCo runs the copy as the original."""
    import mujoco

    from unisim_motrix._engine_mjcf import EngineMjcf

    xml = tmp_path / "imp.xml"
    xml.write_text("""<mujoco><worldbody><geom name="floor" type="plane" size="1 1 .1"/>
      <body pos="0 0 0.09"><freejoint/><geom type="box" size=".1 .1 .1" solimp="2 1 0.01"/></body>
      </worldbody></mujoco>""")
    source = EngineMjcf("motrix", str(xml))
    (pair,) = source.mixed_pairs()
    d0, dmax, width, mid, power = map(float, pair["solimp"].split())
    assert d0 == mujoco.mjMAXIMP and dmax == pytest.approx(0.975) and width == pytest.approx(0.0055)  # mixed, clamped
    m1 = mujoco.MjModel.from_xml_path(str(xml))
    with source.file() as copy:
        m2 = mujoco.MjModel.from_xml_path(copy)
    d1, d2 = mujoco.MjData(m1), mujoco.MjData(m2)
    mujoco.mj_step(m1, d1, 100)
    mujoco.mj_step(m2, d2, 100)
    assert np.array_equal(d1.qpos, d2.qpos) and d1.ncon > 0
    with MotrixBackend(SceneCfg(str(xml)), 1, 0.002) as b:
        b.step(np.zeros((1, 0)), 100)
        assert abs(float(b.get_qpos()[0, 2]) - d1.qpos[2]) < 2e-3


DAMPRATIO = """<mujoco>
  <option timestep="0.002"/>
  <default><default class="arm"><position kp="40" dampratio="1"/></default></default>
  <worldbody>
    <body name="a" pos="0 0 1">
      <joint name="j1" axis="0 1 0" armature="0.01"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.03" mass="1.3"/>
      <body name="b" pos="0.4 0 0">
        <joint name="j2" axis="0 1 0"/>
        <geom type="box" size="0.1 0.02 0.02" pos="0.1 0 0" mass="0.5"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position name="by_class" class="arm" joint="j1"/>
    <position name="own" joint="j2" kp="10" dampratio="0.7"/>
    <position name="plain" joint="j1" kp="5" kv="0.3"/>
  </actuator>
</mujoco>
"""


def test_dampratio_is_mujocos_kv(tmp_path):
    """``<position dampratio>``: MuJoCo's compiler sets kv = dampratio 2 sqrt(kp m) with m = 1 / (M^-1)_jj,
    the inertia the actuator sees at qpos0 with the other joints free (M the mass matrix, armature
    included); MotrixSim derives another damping on the original file. The copy MotrixSim loads carries
    MuJoCo's compiled kv (dampratio dropped), which MuJoCo compiles to the same gains and biases; the
    engine's actuator damping is that kv, and the arm follows MuJoCo's trajectory."""
    import motrixsim
    import mujoco

    from unisim_motrix._engine_mjcf import EngineMjcf

    path = tmp_path / "dampratio.xml"
    path.write_text(DAMPRATIO)
    m = mujoco.MjModel.from_xml_path(str(path))
    kv = -m.actuator_biasprm[:, 2]
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    inv = np.linalg.inv(M)  # the inertia an actuator sees with the other joints free: 1 / (M^-1)_jj
    np.testing.assert_allclose(kv[:2], [1.0 * 2 * np.sqrt(40 / inv[0, 0]), 0.7 * 2 * np.sqrt(10 / inv[1, 1])],
                               rtol=1e-12)  # MuJoCo's rule, from the mass matrix at qpos0
    raw = [a.damping for a in motrixsim.load_model(str(path)).low.actuators]
    assert abs(raw[0] - kv[0]) > 1.0  # the engine's own rule on the original file
    with EngineMjcf("motrix", str(path)).file() as copy:
        assert "dampratio=" not in open(copy).read()
        c = mujoco.MjModel.from_xml_path(copy)
    np.testing.assert_array_equal(c.actuator_biasprm, m.actuator_biasprm)
    np.testing.assert_array_equal(c.actuator_gainprm, m.actuator_gainprm)
    with MotrixBackend(SceneCfg(str(path)), 1, 0.002) as b:
        np.testing.assert_allclose([a.damping for a in b.model.low.actuators], kv, rtol=1e-6)
        ctrl = np.array([[0.4, -0.3, 0.4]], np.float32)
        b.step(ctrl, 100)
        for _ in range(100):
            d.ctrl[:] = ctrl[0]
            mujoco.mj_step(m, d)
        np.testing.assert_allclose(b.get_qpos()[0], d.qpos, atol=2e-3)
