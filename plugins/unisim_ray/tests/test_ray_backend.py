"""RayBackend end to end on a real local Ray instance with real inner backends.

Parity tests compare, bit for bit, K shards of an inner backend against the same
inner backend run in-process for the same envs, states and controls: the shards
call the inner primitives on the very inputs the in-process base would pass, so
there is no tolerance. ``fake`` (engine-free, deterministic) always runs;
``mujoco`` runs when the unisim-mujoco plugin is importable.

Ray is started once for the module (``address="local"``, 4 logical CPUs so a
3-shard layout fits on this 2-core machine); backends join it and leave it running.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import unisim_core
from unisim_core import (
    Capability,
    InitRandomizationPlan,
    RandomizationOp,
    ResetRandomizationPayload,
    SceneCfg,
    TerrainCfg,
    create_backend,
)
from unisim_core.contract.errors import (
    BackendClosedError,
    BackendLoadError,
    BackendNotFoundError,
    UnsupportedCapabilityError,
)
from unisim_core.plugin.fake import FakeBackend

ray = pytest.importorskip("ray")

from recovery_scenario import kill_and_confirm  # noqa: E402

from unisim_ray import (  # noqa: E402
    RayBackend,
    ShardDiedError,
    ShardFaultedError,
    ShardInfo,
    ShardStartupError,
    ShardTimeoutError,
)

SCENES = Path(unisim_core.__file__).parent / "scenes"
QUADRUPED = SceneCfg(SCENES / "quadruped.xml")


def _mujoco_reason() -> str | None:
    try:
        unisim_core.get_backend_class("mujoco")
    except (BackendNotFoundError, BackendLoadError) as exc:  # not installed, or not loadable here
        return f"unisim-mujoco plugin not importable: {type(exc).__name__}: {exc}"
    return None


MUJOCO_REASON = _mujoco_reason()
needs_mujoco = pytest.mark.skipif(MUJOCO_REASON is not None, reason=MUJOCO_REASON or "")


pytestmark = pytest.mark.usefixtures("local_ray")


def pair(made, inner, num_envs, shards, scene=QUADRUPED, *, dtype=np.float32, inner_options=None, **ray_opts):
    """``(sharded, in-process)`` backends of ``inner`` over the same envs."""
    inner_options = dict(inner_options or {})
    ref = create_backend(inner, scene, num_envs, 0.005, np_dtype=dtype, seed=3, **inner_options)
    made.append(ref)
    ray_opts.setdefault("progress", False)
    b = create_backend("ray", scene, num_envs, 0.005, inner=inner, shards=shards, inner_options=inner_options,
                       np_dtype=dtype, seed=3, **ray_opts)
    made.append(b)
    return b, ref


def assert_same(b, ref, where=""):
    """Every state getter equal bit for bit (same dtype, same bytes)."""
    ids = np.arange(ref.num_bodies)
    getters = {
        "qpos": lambda x: x.get_qpos(), "qvel": lambda x: x.get_qvel(),
        "base_pos": lambda x: x.get_base_pos(), "base_quat": lambda x: x.get_base_quat(),
        "base_lin_vel": lambda x: x.get_base_lin_vel(), "base_ang_vel": lambda x: x.get_base_ang_vel(),
        "dof_pos": lambda x: x.get_dof_pos(), "dof_vel": lambda x: x.get_dof_vel(),
        "body_state_w": lambda x: np.concatenate(x.get_body_state_w(ids), axis=-1),
        "body_pos_b": lambda x: x.get_body_pos_b(ids), "body_lin_vel_b": lambda x: x.get_body_lin_vel_b(ids),
        "rows": lambda x: x.get_body_pose_w_rows(np.array([x.num_envs - 1, 0]), ids[1:3])[1],
    }
    if Capability.SENSORS in ref.capabilities and ref.model_info.sensor_names:
        names = list(ref.model_info.sensor_names)
        getters["sensors"] = lambda x: x.get_sensor_data_batch(names)
        getters["sensor0"] = lambda x: x.get_sensor_data(names[0])
    if Capability.PHYSICS_SNAPSHOT in ref.capabilities:
        getters["snapshot"] = lambda x: x.get_physics_state()
    for name, get in getters.items():
        got, want = get(b), get(ref)
        assert got.dtype == want.dtype, f"{where}: {name} dtype {got.dtype} != {want.dtype}"
        assert got.flags.c_contiguous and got.flags.writeable, f"{where}: {name} layout"
        assert got.shape == want.shape, f"{where}: {name} shape"
        assert np.array_equal(got, want), f"{where}: {name} differs (max {np.abs(got - want).max()})"


def scenario(b, ref):
    """The same sequence of contract calls on both; compare after every one."""
    n, nu = ref.num_envs, ref.num_actuators
    rng = np.random.default_rng(7)
    assert_same(b, ref, "initial")
    for i in range(3):
        ctrl = rng.uniform(-0.5, 0.5, (n, nu)).astype(np.float32)
        b.step(ctrl, 2)
        ref.step(ctrl, 2)
        assert_same(b, ref, f"step {i}")
    # set_state on envs spread over shards, in a non-sorted order
    ids = np.array([n - 1, 1])
    qpos = ref.get_qpos()[ids].astype(np.float64) + 0.01
    qvel = rng.normal(0, 0.1, (2, ref.nv))
    untouched = b.get_qpos()[2:n - 1].copy()
    b.set_state(ids, qpos.copy(), qvel.copy())
    ref.set_state(ids, qpos.copy(), qvel.copy())
    assert_same(b, ref, "set_state")
    assert np.array_equal(b.get_qpos()[2:n - 1], untouched)
    ctrl = np.zeros((n, nu), np.float32)
    caps = ref.capabilities
    if Capability.BODY_FORCE in caps:
        bodies = np.array([ref.base_body_id, ref.num_bodies - 1])
        force = rng.normal(0, 20, (n, 2, 3))
        torque = rng.normal(0, 2, (n, 2, 3))
        for x in (b, ref):
            x.apply_body_force(bodies, force, torque)
            x.step(ctrl, 3)
            x.step(ctrl, 1)  # staged wrench cleared after the first step
        assert_same(b, ref, "forces")
        assert np.array_equal(b.push_robots([-30.0, 30.0]), ref.push_robots([-30.0, 30.0]))
        b.step(ctrl, 2)
        ref.step(ctrl, 2)
        assert_same(b, ref, "push")
    if Capability.INIT_RANDOMIZATION in caps:
        plan = InitRandomizationPlan([
            RandomizationOp(term="body_mass", values=np.array([[1.3], [0.7], [1.1]]), env_ids=[0, n - 1, 2],
                            target_ids=[1], operation="scale"),
            RandomizationOp(term="gravity", values=np.tile([0.0, 0.5, -9.0], (n, 1))),
        ])
        b.apply_init_randomization(plan)
        ref.apply_init_randomization(plan)
        assert np.array_equal(b.get_model_field("body_mass"), ref.get_model_field("body_mass"))
        assert np.array_equal(b.get_model_field("gravity"), ref.get_model_field("gravity"))
        b.step(ctrl, 3)
        ref.step(ctrl, 3)
        assert_same(b, ref, "init randomization")
    if Capability.RESET_RANDOMIZATION in caps:
        payload = ResetRandomizationPayload([RandomizationOp(term="dof_damping", values=np.full((2, 1), 2.0),
                                                             target_ids=[ref.nv - 1], operation="add")])
        for x in (b, ref):
            x.set_state(ids, qpos.copy(), qvel.copy(), randomization=payload)
        assert np.array_equal(b.get_model_field("dof_damping"), ref.get_model_field("dof_damping"))
        assert_same(b, ref, "reset randomization")
    if Capability.PHYSICS_SNAPSHOT in caps:
        snap = b.get_physics_state()
        assert np.array_equal(snap, ref.get_physics_state())
        for x in (b, ref):
            x.step(ctrl, 2)
            x.set_physics_state(snap)
        assert_same(b, ref, "snapshot restore")
    if Capability.SITE_JACOBIAN in caps:
        dofs = np.arange(ref.nv)
        for got, want in zip(b.get_site_jacobian_w(0, dofs), ref.get_site_jacobian_w(0, dofs)):
            assert got.dtype == want.dtype and np.array_equal(got, want)
    # pre-step control runs host-side, one round trip per substep
    for x in (b, ref):
        x.set_pre_step_control(lambda be, c: c + 0.01 * be.get_dof_pos()[:, :nu].astype(c.dtype))
        x.step(np.full((n, nu), 0.1, np.float32), 3)
        x.set_pre_step_control(None)
    assert_same(b, ref, "pre-step control")
    for x in (b, ref):  # steps with no sensor read in between (sensors fetched lazily afterwards)
        x.step(ctrl, 2)
        x.step(ctrl, 1)
    assert_same(b, ref, "unread steps")


# ----------------------------------------------------------------------------- parity
@pytest.mark.parametrize("prefetch", ["auto", True])
def test_fake_six_envs_over_two_shards_matches_in_process_bit_for_bit(made, prefetch):
    b, ref = pair(made, "fake", 6, 2, prefetch_sensors=prefetch)
    assert isinstance(b, RayBackend) and b.capabilities == ref.capabilities
    assert b.get_dr_capabilities() == ref.get_dr_capabilities()
    assert [(s.env_start, s.env_stop) for s in b.describe_shards()] == [(0, 3), (3, 6)]
    scenario(b, ref)
    # a refusal raised by every shard before writing anything is re-raised as is, not a fault
    with pytest.raises(UnsupportedCapabilityError, match="'geom_friction' is not randomizable"):
        ref.get_model_field("geom_friction")
    with pytest.raises(UnsupportedCapabilityError, match="'geom_friction' is not randomizable"):
        b.get_model_field("geom_friction")
    b.step(np.zeros((6, b.num_actuators), np.float32))


def test_steps_without_body_reads_reply_narrow_and_bodies_are_fetched_on_demand(made):
    b, ref = pair(made, "fake", 6, 2, prefetch_sensors=False)
    ctrl = np.full((6, ref.num_actuators), 0.1, np.float32)
    for x in (b, ref):
        x.step(ctrl)  # the first step after start still carries the body tables
        x.get_qpos()
    for _ in range(2):
        for x in (b, ref):
            x.step(ctrl)
            x.get_qpos()
        assert b._body_stale.all()  # qpos/qvel-only replies
    assert_same(b, ref, "bodies fetched after narrow steps")
    assert not b._body_stale.any()


def test_fake_uneven_split_over_three_shards_matches_in_process(made):
    seen: list[ShardInfo] = []
    b, ref = pair(made, "fake", 7, 3, dtype=np.float64, progress=seen.append, prefetch_sensors=False)
    assert sorted((s.index, s.env_start, s.env_stop) for s in seen) == [(0, 0, 3), (1, 3, 5), (2, 5, 7)]
    assert len({s.pid for s in seen}) == 3 and all(s.inner.startswith("fake") for s in seen)
    scenario(b, ref)


@needs_mujoco
def test_mujoco_six_envs_over_two_shards_matches_in_process_bit_for_bit(made):
    b, ref = pair(made, "mujoco", 6, 2, dtype=np.float64, inner_options={"threads": 1})
    # MuJoCo's frames are the core's renderer's: drawn in the host from every shard's envs
    assert b.capabilities == ref.capabilities and Capability.VIDEO_CAPTURE in b.capabilities
    assert b.inner_backend.endswith(":MujocoBackend")
    scenario(b, ref)
    for x in (b, ref):
        x.init_renderer(capture=True, headless=True, width=96, height=64, spacing=0.8)
    frame = b.capture_video_frame()
    assert np.array_equal(frame, ref.capture_video_frame())
    b.set_state(np.array([5]), b.get_qpos()[[5]] + np.r_[0.0, 0.0, 0.3, np.zeros(ref.nq - 3)], np.zeros((1, ref.nv)))
    assert not np.array_equal(b.capture_video_frame(), frame)  # the last env (shard 1) is in the picture


@needs_mujoco
def test_mujoco_contact_forces_and_torques_are_forwarded(made):
    """Bindings made on the sharded backend (forces only; forces and torques: the shards bind the
    6-column fill) read, bit for bit, what the same bindings read in-process, rows in env order;
    ``contact_torques`` is declared because MuJoCo declares it."""
    b, ref = pair(made, "mujoco", 4, 2, dtype=np.float64, inner_options={"threads": 1})
    assert Capability.CONTACT_TORQUES in b.capabilities
    q0 = np.tile(ref.get_keyframe_qpos("home"), (4, 1))
    q0[:, 2] += 0.01 * np.arange(4)  # different per env: a row-order mistake shows
    ids = np.arange(1, ref.num_bodies)
    bindings = []
    for x in (b, ref):
        x.set_state(np.arange(4), q0, np.zeros((4, ref.nv)))
        bindings.append((x.bind_contact_forces(["FL_calf", "RR_calf"]), x.bind_contact_forces(ids, torques=True)))
        x.step(np.tile(q0[0, 7:], (4, 1)).astype(np.float32), 40)
    (feet_b, all_b), (feet_r, all_r) = bindings
    assert np.abs(feet_r.read()).max() > 1.0
    assert np.array_equal(feet_b.read(), feet_r.read())
    assert np.array_equal(all_b.read(), all_r.read())
    assert np.array_equal(all_b.read_torque(), all_r.read_torque())


@needs_mujoco
def test_mujoco_terrain_and_height_scans_are_computed_in_the_host(made):
    """MuJoCo samples its height field with the core's sampler: the host fetches it once from shard 0 and
    scans over its cached body poses (no remote call per scan), bit for bit as in-process."""
    scene = SceneCfg(SCENES / "quadruped_hfield.xml", terrain=TerrainCfg(hfield_geom="terrain", rows=2, cols=2))
    b, ref = pair(made, "mujoco", 4, 2, scene, inner_options={"threads": 1})
    sent: list[str] = []
    fanout = b._fanout
    b._fanout = lambda what, method, *args, **kw: (sent.append(method), fanout(what, method, *args, **kw))[1]
    tb, tr = b.get_terrain_spawn_data(), ref.get_terrain_spawn_data()
    assert np.array_equal(tb.origins, tr.origins) and tb.size == tr.size
    xy = np.array([[0.3, -0.2], [1.0, 2.0]])
    assert np.array_equal(tb.sample_height(xy), tr.sample_height(xy))
    kw = dict(hfield_geom_id=b.get_geom_id("terrain"), offsets=np.array([[0.1, 0.0], [-0.2, 0.3]]),
              frame_body_id=b.base_body_id)
    sb, sr = b.create_hfield_scanner(**kw), ref.create_hfield_scanner(**kw)
    ctrl = np.zeros((4, ref.num_actuators), np.float32)
    for _ in range(2):
        assert sb.num_points == sr.num_points and np.array_equal(sb.scan(), sr.scan())
        b.step(ctrl, 5)
        ref.step(ctrl, 5)
    assert sent == ["height_field"], sent


@needs_mujoco
def test_scene_directory_travels_with_includes_and_mocap_is_forwarded(made, tmp_path):
    # The model includes a file beside it: the shard gets the whole directory.
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "ball.xml").write_text(textwrap.dedent("""\
        <mujoco><worldbody>
          <body name="ball" pos="0 0 1"><freejoint/><geom type="sphere" size="0.1" mass="1"/></body>
          <body name="target" mocap="true" pos="1 0 0.5"><geom type="box" size="0.05 0.05 0.05"
                contype="0" conaffinity="0"/></body>
        </worldbody></mujoco>"""))
    (tmp_path / "scene.xml").write_text(
        "<mujoco><worldbody><geom type='plane' size='5 5 0.1'/></worldbody>"
        "<include file='parts/ball.xml'/></mujoco>")
    b, ref = pair(made, "mujoco", 3, 2, SceneCfg(tmp_path / "scene.xml"), dtype=np.float64,
                  inner_options={"threads": 1}, scene_transfer="directory")
    assert b._scene_transfer_used == "directory"
    mb, mr = b.bind_mocap_pose("target"), ref.bind_mocap_pose("target")
    pos, quat = np.array([[0.2, 0.1, 0.9], [0.0, 0.5, 0.7]]), np.array([[1.0, 0, 0, 0.2], [0, 1.0, 0, 0]])
    for m in (mb, mr):
        m.set(pos, quat, env_ids=np.array([2, 0]))
    for got, want in zip(mb.get(), mr.get()):
        assert np.array_equal(got, want)
    target = b.get_body_ids(["target"])
    assert np.array_equal(b.get_body_pos_w(target), ref.get_body_pos_w(target))  # cache refreshed by the write
    ctrl = np.zeros((3, 0), np.float32)
    for _ in range(3):
        b.step(ctrl, 10)
        ref.step(ctrl, 10)
    assert_same(b, ref, "mocap scene")


# ----------------------------------------------------------------------------- faults and teardown
def test_engine_error_in_a_shard_keeps_its_class_and_does_not_fault(made):
    """Before #13 an EngineError in one shard faulted the whole backend (ShardFaultedError ever
    after). The inner test double (tests/worker/sample_backends.py) raises EngineError for
    qvel[-1] == 777 in set_state; shard 0's write of env 0 in the same call lands."""
    samples = Path(__file__).resolve().parents[3] / "tests" / "worker"
    runtime_env = {"env_vars": {"PYTHONPATH": os.pathsep.join([str(samples), os.environ.get("PYTHONPATH", "")])}}
    b = create_backend("ray", QUADRUPED, 4, 0.005, inner="sample_backends:PickyFake", shards=2, progress=False,
                       actor_options={"runtime_env": runtime_env})
    made.append(b)
    qpos = np.tile(b.get_default_qpos().astype(np.float64), (2, 1))
    qpos[:, 2] += 0.1
    qvel = np.zeros((2, b.nv))
    qvel[1, -1] = 777.0
    with pytest.raises(unisim_core.EngineError, match=r"shard 1 \(envs \[2:4\)\): engine failed on qvel 777") as info:
        b.set_state(np.array([0, 3]), qpos, qvel)
    assert type(info.value) is unisim_core.EngineError
    assert b.get_qpos()[0, 2] == pytest.approx(qpos[0, 2])  # the cache was re-read from the shards
    b.step(np.zeros((4, b.num_actuators), np.float32), 2)  # still usable
    assert np.isfinite(b.get_qpos()).all()


def test_killed_shard_names_itself_and_poisons_the_backend(made):
    b, _ = pair(made, "fake", 6, 2, call_timeout_s=20.0)
    ctrl = np.zeros((6, b.num_actuators), np.float32)
    b.step(ctrl)
    kill_and_confirm(b._actors[1])
    with pytest.raises(ShardDiedError, match=r"shard 1 \(envs \[3:6\)\) died during step") as info:
        b.step(ctrl)
    assert info.value.shards == ((1, 3, 6),)
    assert isinstance(info.value, unisim_core.EngineError)
    for call in (lambda: b.step(ctrl), b.get_qpos, lambda: b.get_body_pos_w(np.array([1])),
                 lambda: b.set_state(np.array([0]), b.model_info.qpos0[None], np.zeros((1, b.nv)))):
        with pytest.raises(ShardFaultedError, match="refuses calls after a shard fault") as faulted:
            call()
        assert faulted.value.__cause__ is info.value
    assert b._actors == []  # surviving shard 0 released at the fault
    b.close()


@needs_mujoco
def test_call_past_its_deadline_names_the_slow_shards_and_poisons(made):
    b, _ = pair(made, "mujoco", 2, 2, inner_options={"threads": 1}, call_timeout_s=0.5)
    ctrl = np.zeros((2, b.num_actuators), np.float32)
    pids = [s.pid for s in b.describe_shards()]
    for pid in pids:  # stopped, not dead: the shards cannot answer (deterministic hang)
        os.kill(pid, signal.SIGSTOP)
    try:
        with pytest.raises(ShardTimeoutError, match=r"shard 0 \(envs \[0:1\)\), shard 1 \(envs \[1:2\)\) gave "
                                                    r"no answer to step within call_timeout_s=0.5 s"):
            b.step(ctrl)
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):  # killed by the fault handling already
                os.kill(pid, signal.SIGCONT)
    with pytest.raises(ShardFaultedError):
        b.get_qvel()


def test_close_releases_every_actor(made):
    """With ``reuse_actors=False`` close() kills the shards' actors (by default it parks them for the
    next backend: test_actor_pool.py)."""
    b, _ = pair(made, "fake", 2, 3, reuse_actors=False)  # more shards than envs: one shard per env
    assert [(s.env_start, s.env_stop) for s in b.describe_shards()] == [(0, 1), (1, 2)]
    actors = list(b._actors)
    assert [ray.get(a.ping.remote(), timeout=10) for a in actors] == [s.pid for s in b.describe_shards()]
    b.close()
    b.close()  # idempotent
    for a in actors:
        with pytest.raises(ray.exceptions.RayActorError):
            ray.get(a.ping.remote(), timeout=10)
    with pytest.raises(BackendClosedError):
        b.get_qpos()
    with pytest.raises(BackendClosedError):
        b.step(np.zeros((2, b.num_actuators), np.float32))


def test_shard_that_cannot_build_its_backend_raises_the_in_process_error_naming_the_shard():
    # in-process, create_backend("unisim_core.nope:Missing", ...) raises BackendLoadError
    with pytest.raises(BackendLoadError, match=r"shard \d \(envs \[\d:\d\)\): backend 'unisim_core.nope:Missing' "
                                               r"could not be imported"):
        create_backend("ray", QUADRUPED, 2, 0.005, inner="unisim_core.nope:Missing", progress=False)


def test_backend_starts_ray_once_per_process_and_close_parks_its_actors_until_exit():
    """The first backend starts Ray for the process; close() parks its shards' actors (alive, idle),
    the next backend takes them; at exit the plugin kills the idle actors and shuts Ray down."""
    code = textwrap.dedent(f"""
        import os, numpy as np, ray
        from unisim_core import SceneCfg, create_backend
        scene = SceneCfg({str(SCENES / "quadruped.xml")!r})
        b = create_backend("ray", scene, 2, 0.005, inner="fake", shards=2)
        b.step(np.zeros((2, b.num_actuators), np.float32))
        print("started", ray.is_initialized(), ray.cluster_resources().get("CPU"))
        actors = list(b._actors)
        print("niceness", sorted(ray.get([a.__ray_call__.remote(lambda self: os.nice(0)) for a in actors])))
        pids = [s.pid for s in b.describe_shards()]
        b.close()
        print("closed", ray.is_initialized(), ray.get([a.ping.remote() for a in actors], timeout=10) == pids)
        b = create_backend("ray", scene, 2, 0.005, inner="fake", shards=2)
        print("reused", [s.pid for s in b.describe_shards()] == pids)
        b.close()
        print("pids", *pids)
    """)
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.split("\n")
    assert lines[0].startswith("started True") and lines[2] == "closed True True"  # Ray stays, actors parked
    assert lines[1] == "niceness [0, 0]"  # shards are the workload: not niced like Ray's default workers
    assert lines[3] == "reused True"
    pids = [int(p) for p in lines[4].split()[1:]]
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids)  # gone with the process
    # one stderr progress line per shard and backend
    assert out.stderr.count("unisim-ray: shard ") == 4 and "shard 1 (envs [1:2)) of 2 ready" in out.stderr
    assert out.stderr.count(", reused actor)") == 2


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_shards_that_cannot_be_placed_time_out_at_startup_naming_them():
    with pytest.raises(ShardStartupError, match=r"shard 0 \(envs \[0:1\)\), shard 1 \(envs \[1:2\)\) did not "
                                                r"start within init_timeout_s=1 s \(each shard asks for 64 CPU"):
        create_backend("ray", QUADRUPED, 2, 0.005, inner="fake", actor_num_cpus=64, init_timeout_s=1,
                       progress=False)


def test_inner_declarations_and_scene_refusals_cross_the_shards(made):
    """The kit reads a backend's declarations from the instance: Ray reports the inner backend's, and a
    scene the inner backend refuses is refused with the same feature (so coverage can match it)."""
    from unisim_conformance import scene_cfg

    b = create_backend("ray", scene_cfg("pendulum"), 2, 0.001, inner="fake", shards=2, progress=False)
    made.append(b)
    assert b.UNSUPPORTED_SCENE_FEATURES == FakeBackend.UNSUPPORTED_SCENE_FEATURES
    assert b.KNOWN_KIT_DEVIATIONS == FakeBackend.KNOWN_KIT_DEVIATIONS and b.snapshot_tier == "exact"
    with pytest.raises(UnsupportedCapabilityError) as info:
        create_backend("ray", scene_cfg("frictionloss_hinge"), 2, 0.001, inner="fake", shards=2, progress=False)
    assert info.value.capability == "frictionloss"
