"""unisim-mjwarp on the real engine (MuJoCo Warp on warp's CPU device): options, errors that
name their cause, per-world model fields, device arrays, and agreement with CPU MuJoCo."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import warp as wp
from mjwarp_testutil import QUADRUPED

from unisim_core import (
    Capability,
    EngineError,
    InitRandomizationPlan,
    InvalidInputError,
    RandomizationOp,
    SceneCfg,
    create_backend,
    list_backends,
)
from unisim_core.contract.errors import DivergenceError

G = 9.81


def test_listed_without_importing_warp():
    """The registry lists the plugin from its entry point; importing the package imports no engine."""
    record = next(r for r in list_backends() if r.name == "mjwarp")
    assert record.status == "ok", record.reason
    code = "import sys, unisim_mjwarp; bad = {'warp', 'mujoco_warp', 'mujoco'} & set(sys.modules); assert not bad, bad"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(("options", "needle"), [
    ({"device": "gpu"}, "device: expected None, 'cpu', 'cuda' or 'cuda:N', got 'gpu'"),
    ({"device": "cuda:7"}, "device: 'cuda:7' is not available"),
    ({"cone": "round"}, "cone: expected None or one of ['elliptic', 'pyramidal'], got 'round'"),
    ({"solver": "pgs"}, "solver: expected None or one of ['cg', 'newton'], got 'pgs'"),
    ({"nconmax": 0}, "nconmax"),
])
def test_bad_options_name_the_option(make, options, needle):
    with pytest.raises(InvalidInputError) as info:
        make("free_body", **options)
    assert needle in str(info.value)


def test_unknown_option_lists_the_valid_ones(make):
    with pytest.raises(TypeError, match="did you mean 'njmax'"):
        make("free_body", njmaxx=8)


def test_solver_options_reach_the_engine(make):
    b = make("box_on_plane", cone="elliptic", solver="cg", iterations=7, ls_iterations=3, integrator="euler")
    opt = b.warp_model.opt
    assert (opt.cone, opt.solver, opt.iterations, opt.ls_iterations, opt.integrator) == (1, 1, 7, 3, 0)


def test_a_pgs_file_runs_as_newton_with_pgs_forces(make, tmp_path):
    """MuJoCo Warp has no PGS: a file's ``solver="PGS"`` (gymnasium's humanoids) runs as its Newton solver,
    which minimises the same convex problem, with a warning; a box sliding on a tilted plane under PGS on
    CPU MuJoCo and on MuJoCo Warp ends at the same pose (contact forces agree to solver tolerance)."""
    import mujoco

    from unisim_mjwarp import MjwarpModellingWarning

    path = tmp_path / "pgs.xml"
    path.write_text('<mujoco><compiler angle="radian"/><option solver="PGS" timestep="0.002"/><worldbody>'
                    '<geom type="plane" size="2 2 0.1" euler="0 0.4 0" friction="0.3"/>'
                    '<body pos="0 0 0.1" euler="0 0.4 0"><freejoint/>'
                    '<geom type="box" size="0.05 0.05 0.05" friction="0.3"/></body>'
                    '</worldbody></mujoco>')
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    mujoco.mj_step(m, d, 200)
    with pytest.warns(MjwarpModellingWarning, match="runs as MuJoCo Warp's Newton solver"):
        b = make(path)
    assert b.warp_model.opt.solver == mujoco.mjtSolver.mjSOL_NEWTON
    b.step(np.zeros((b.num_envs, 0)), 200)
    assert abs(d.qpos[0]) > 0.01  # it slid
    np.testing.assert_allclose(b.get_qpos()[0], d.qpos, atol=2e-4)


@pytest.mark.parametrize(("message", "feature"), [("mjSOL_PGS is unsupported.", "sol_pgs"),
                                                  ("body plugins are not supported", "body_plugins")])
def test_a_mujoco_warp_refusal_names_its_feature(message, feature):
    """The feature named by a refusal of ``mjw.put_model`` (its first MuJoCo enum, else its subject)."""
    from unisim_mjwarp._backend import _feature

    assert _feature(message) == feature


def test_contact_overflow_names_the_option(make, capfd):
    """4 box corners touch the plane in each world; room for 1 contact per world must raise (and
    MuJoCo Warp prints nothing: its per-world, per-substep overflow warnings are off)."""
    b = make("box_on_plane", num_envs=2, nconmax=1)
    with pytest.raises(EngineError, match=r"\(NARROWPHASE: contacts dropped\).*option\(s\) nconmax.*naconmax=2 "):
        b.step(np.zeros((2, 0)), int(0.3 / b.sim_dt))
    assert "overflow" not in capfd.readouterr().out


def test_constraint_overflow_names_the_option(make):
    b = make("box_on_plane", num_envs=2, njmax=2)
    with pytest.raises(EngineError, match=r"NEFC.*njmax"):
        b.step(np.zeros((2, 0)), int(0.3 / b.sim_dt))


def test_non_finite_world_is_reset_and_reported(make):
    """A NaN in one world is divergence: the core's policy resets that world to the default
    state and raises DivergenceError naming it; the other worlds step on."""
    b = make("free_body", num_envs=3)
    q0 = b.get_qpos()
    qvel = b.warp_data.qvel.numpy()  # CPU: a view of the engine's buffer
    qvel[1, 0] = np.nan
    with pytest.raises(DivergenceError, match=r"diverged in env\(s\) \[1\]"):
        b.step(np.zeros((3, 0)), 2)
    assert b.get_diverged_envs().tolist() == [False, True, False]
    np.testing.assert_array_equal(b.get_qpos()[1], q0[1])
    assert b.get_qpos()[0, 2] < q0[0, 2]  # env 0 fell for two steps


def test_free_fall_matches_closed_form(make):
    """Semi-implicit Euler: v_n = -g n dt exactly, z_n = z0 - g dt^2 n (n + 1) / 2."""
    b = make("free_body", num_envs=2, integrator="euler")
    z0 = float(b.get_base_pos()[0, 2])
    n = 50
    b.step(np.zeros((2, 0)), n)
    dt = b.sim_dt
    np.testing.assert_allclose(b.get_base_lin_vel()[:, 2], -G * n * dt, rtol=1e-5)
    np.testing.assert_allclose(b.get_base_pos()[:, 2], z0 - G * dt * dt * n * (n + 1) / 2, rtol=1e-5)


def test_body_mass_per_world_changes_only_that_world(make):
    """F = m a per world: env 1 at 4 kg accelerates half as fast as env 0 at 2 kg (dv = F/m dt)."""
    b = make("free_body", num_envs=2, integrator="euler")
    box = b.get_body_ids(["box"])
    b.apply_init_randomization(InitRandomizationPlan([RandomizationOp(
        term="body_mass", env_ids=np.array([1]), target_ids=box, values=np.array([[4.0]]), operation="set")]))
    np.testing.assert_allclose(b.get_model_field("body_mass")[:, box[0]], [2.0, 4.0])
    b.apply_body_force(box, np.array([[[8.0, 0, 0]], [[8.0, 0, 0]]]))
    b.step(np.zeros((2, 0)), 1)
    np.testing.assert_allclose(b.get_base_lin_vel()[:, 0], [4.0 * b.sim_dt, 2.0 * b.sim_dt], rtol=1e-5)


def test_gravity_per_world(make):
    b = make("free_body", num_envs=2, integrator="euler")
    b.apply_init_randomization(InitRandomizationPlan([RandomizationOp(
        term="gravity", env_ids=np.array([0]), values=np.array([[0.0, 0.0, -2.0]]), operation="set")]))
    b.step(np.zeros((2, 0)), 10)
    np.testing.assert_allclose(b.get_base_lin_vel()[:, 2], [-2.0 * 10 * b.sim_dt, -G * 10 * b.sim_dt], rtol=1e-5)


def test_device_arrays_are_the_engine_buffers(quadruped):
    """The views are warp's own arrays: the same pointer as the engine's, live after a step,
    and importable through DLPack (warp here; torch/jax the same way)."""
    b = quadruped
    views = b.get_device_arrays()
    assert Capability.DEVICE_ARRAYS in b.capabilities and views.device == "cpu"
    assert views.qpos.ptr == b.warp_data.qpos.ptr
    q = np.from_dlpack(views.qpos)
    assert q.__array_interface__["data"][0] == views.qpos.ptr
    again = wp.from_dlpack(views.body_quat_w)
    assert again.ptr == b.warp_data.xquat.ptr and again.shape == (4, b.num_bodies, 4)
    b.step(np.zeros((4, b.num_actuators)), 2)
    np.testing.assert_array_equal(q, b.get_qpos().astype(np.float32))
    assert views.sensordata.shape == (4, int(b.model.nsensordata))


def test_quadruped_matches_cpu_mujoco(quadruped):
    """The same MJCF on CPU MuJoCo (float64) and MuJoCo Warp (float32): 0.25 s of a PD hold at
    the home pose stays within 1e-3 m / rad (float32 rounding through the contact solver)."""
    b = quadruped
    ref = create_backend("mujoco", SceneCfg(str(QUADRUPED)), 4, 0.005, np_dtype=np.float64, threads=1)
    try:
        q0 = np.asarray(ref.get_keyframe_qpos("home"), dtype=np.float64)
        home = np.tile(q0[7:], (4, 1))
        for sim in (b, ref):
            sim.set_state(np.arange(4), np.tile(q0, (4, 1)), np.zeros((4, ref.nv)))
        for _ in range(50):
            b.step(home, 1)
            ref.step(home, 1)
        np.testing.assert_allclose(b.get_qpos(), ref.get_qpos(), atol=1e-3)
        ids = np.arange(b.num_bodies)
        np.testing.assert_allclose(b.get_body_lin_vel_w(ids), ref.get_body_lin_vel_w(ids), atol=1e-2)
        acc = b.get_sensor_data("imu_acc")
        np.testing.assert_allclose(acc, ref.get_sensor_data("imu_acc"), atol=5e-2)
        assert abs(float(np.linalg.norm(acc[0])) - G) < 0.5  # standing still: the accelerometer reads g
    finally:
        ref.close()


def test_snapshot_restore_is_bit_exact(quadruped):
    b = quadruped
    q0 = np.asarray(b.get_keyframe_qpos("home"), dtype=np.float64)
    home = np.tile(q0[7:], (4, 1))
    b.set_state(np.arange(4), np.tile(q0, (4, 1)), np.zeros((4, b.nv)))
    b.step(home, 3)
    snap = b.get_physics_state()
    b.step(home, 5)
    after = b.get_qpos()
    b.set_physics_state(snap)
    b.step(home, 5)
    np.testing.assert_array_equal(b.get_qpos(), after)


def test_compile_notice_goes_to_stderr():
    """The first backend of a process says (on stderr) that warp may compile and where it caches."""
    code = ("import numpy as np; from unisim_core import SceneCfg; from unisim_conformance import scene_path; "
            "from unisim_mjwarp import MjwarpBackend; "
            "MjwarpBackend(SceneCfg(str(scene_path('free_body'))), 1, 0.002, device='cpu'); "
            "MjwarpBackend(SceneCfg(str(scene_path('free_body'))), 1, 0.002, device='cpu')")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stderr.count("unisim-mjwarp: loading MuJoCo Warp kernels on 'cpu'") == 1, run.stderr
    assert "unisim-mjwarp: kernels ready on 'cpu' after" in run.stderr
    wp.init()  # sets the cache folder (WARP_CACHE_PATH or warp's default), as in the subprocess
    assert str(wp.config.kernel_cache_dir) in run.stderr


def test_closed_backend_refuses_work(make):
    b = make("free_body", num_envs=1)
    b.close()
    with pytest.raises(Exception, match="closed"):
        b.step(np.zeros((1, 0)), 1)
    with pytest.raises(Exception, match="closed"):
        b.get_device_arrays()


def test_mjwarp_is_float32_inside(make):
    """Requesting float64 outputs does not pretend to float64 physics: inputs round to float32."""
    b = make("free_body", num_envs=1)
    q = np.array([[0.1, 0.2, 1.0 + 1e-9, 1, 0, 0, 0]])
    b.set_state(np.array([0]), q, np.zeros((1, 6)))
    assert b.get_qpos()[0, 2] == np.float32(1.0 + 1e-9)
    with pytest.raises(InvalidInputError):
        b.set_state(np.array([0]), q[:, :3], np.zeros((1, 6)))


def test_cpu_graph_capture_replays_every_substep_bit_for_bit():
    """On warp's CPU device each substep is captured once and replayed (``graph_capture`` default):
    the trajectory equals the plain Python launches bit for bit through contacts, a staged body
    wrench, a ``set_state`` of one env and a per-world gravity write."""
    def run(**options):
        with create_backend("mjwarp", SceneCfg(QUADRUPED, default_keyframe="home"), 2, 0.002, **options) as b:
            ctrl = np.tile(b.get_default_dof_pos(), (2, 1)).astype(np.float32)
            base = b.get_body_ids([b.model_info.body_names[1]])
            out = []
            for k in range(12):
                if k == 3:
                    b.apply_body_force(base, np.array([[[0.0, 20.0, 0.0]], [[5.0, 0.0, 0.0]]]))
                if k == 6:
                    q = b.get_qpos().astype(np.float64)[:1]
                    q[0, 2] += 0.05
                    b.set_state(np.array([0]), q, np.zeros((1, b.nv)))
                if k == 8:
                    b.apply_init_randomization(InitRandomizationPlan([RandomizationOp(
                        term="gravity", env_ids=np.array([1]), values=np.array([[0.0, 0.0, -5.0]]), operation="set")]))
                b.step(ctrl, 5)
                out.append(np.concatenate([b.get_qpos(), b.get_qvel()], axis=1))
            return b.graph_captured, np.stack(out)

    captured, replayed = run()
    plain_flag, plain = run(graph_capture=False)
    assert captured and not plain_flag
    np.testing.assert_array_equal(replayed, plain)


def test_height_field_scans_and_contacts_as_on_mujoco(make):
    """quadruped_hfield (a bowl of 21 x 21 samples) held at home for 0.5 s: the shared scanner over
    MuJoCo's compiled field reads what MuJoCo's reads under the base (1e-6 at the same pose), and the
    base stands where MuJoCo's does (the kit's contact tier, 5 mm)."""
    path = QUADRUPED.with_name("quadruped_hfield.xml")
    offsets = np.array([[x, y] for x in (-0.3, 0.0, 0.3) for y in (-0.2, 0.2)])
    out = []
    for sim in (make(path), create_backend("mujoco", SceneCfg(str(path)), 2, 0.002)):
        home = np.tile(sim.get_keyframe_qpos("home"), (2, 1))
        home[1, :2] = [1.5, -2.0]  # env 1 on the bowl's side
        sim.set_state(np.arange(2), home, np.zeros((2, sim.nv)))
        scan = sim.create_hfield_scanner(hfield_geom_id=sim.model_info.geom_names.index("terrain"), offsets=offsets,
                                         frame_body_id=1, alignment="yaw", output="height").scan()
        sim.step(home[:, 7:], 250)
        out.append((scan, sim.get_base_pos()))
        sim.close()
    np.testing.assert_allclose(out[0][0], out[1][0], atol=1e-6)
    assert np.ptp(out[1][0][1]) > 0.01  # the side of the bowl is not flat
    np.testing.assert_allclose(out[0][1], out[1][1], atol=5e-3)
