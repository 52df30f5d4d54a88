"""The task layer: generated terrain (known heights, MuJoCo's and MotrixSim's compiled height
field, the curriculum), observation noise/delay/history (seeded), and the velocity task on the
Go1 torque robot with its actuator model, terrain and height scan."""

from __future__ import annotations

import attrs
import mujoco
import numpy as np
import pytest

from unisim_core import InvalidInputError, SceneCfg, create_backend
from unisim_gym import (
    GO1,
    OBSERVATION_LAYOUT,
    FlatCfg,
    NoiseCfg,
    ObservationManager,
    ObsTermCfg,
    SlopeCfg,
    StairsCfg,
    TerrainCurriculum,
    TerrainGeneratorCfg,
    UniSimVectorEnv,
    VelocityTrackingCfg,
    VelocityTrackingTask,
    build_scene,
    generate_terrain,
    go1_rough_cfg,
)

SMALL = TerrainGeneratorCfg(sub_terrains={"slope": SlopeCfg(slope_range=(0.2, 0.2)),
                                          "stairs": StairsCfg(step_height_range=(0.1, 0.1))},
                            size=(6.0, 6.0), num_rows=2, num_cols=2, border_width=1.0, seed=3)


def test_sub_terrain_known_heights():
    """Slope 0.2 to a 1.5 m platform: at 2 m from the centre of a 6 m tile, 0.2 (3 - 2) = 0.2 m.
    Stairs of 0.1 m risers, 0.3 m treads: floor((3 - 2) / 0.3) = 3 steps = 0.3 m; the platform is
    the top (0.1 x floor(2.25 / 0.3) = 0.7 m); the tile's edge is 0."""
    t = generate_terrain(SMALL)
    assert t.types == ("slope", "stairs") and t.heights.shape == (2 * 60 + 21, 2 * 60 + 21)
    for r in range(2):
        (cx, cy, _), (sx, sy, _) = t.origins[r, 0], t.origins[r, 1]
        np.testing.assert_allclose(t.height_at(np.array([[cx + 2.0, cy], [cx, cy], [cx + 3.0, cy]])),
                                   [0.2, 0.2 * 2.25, 0.0], atol=1e-9)
        np.testing.assert_allclose(t.height_at(np.array([[sx, sy + 2.0], [sx, sy], [sx, sy + 3.0]])),
                                   [0.3, 0.7, 0.0], atol=1e-9)
        assert t.origins[r, 1, 2] == pytest.approx(0.7)
    again = generate_terrain(SMALL)
    np.testing.assert_array_equal(again.heights, t.heights)  # seeded: the same map
    assert not np.array_equal(generate_terrain(attrs.evolve(SMALL, seed=4)).difficulty, t.difficulty)


def _terrain_scene():
    task = VelocityTrackingTask(go1_rough_cfg(terrain=SMALL))
    return task, task.scene.model_file


def test_mujoco_compiles_the_generated_height_field():
    """MuJoCo's compiled hfield (data x size[2] + the geom's z) is the generated map, sample for
    sample (rows from -y to +y after MuJoCo's flip), within the 5 significant digits written."""
    task, path = _terrain_scene()
    m = mujoco.MjModel.from_xml_path(path)
    g = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "terrain")
    nrow, ncol = int(m.hfield_nrow[0]), int(m.hfield_ncol[0])
    data = m.hfield_data.reshape(nrow, ncol) * m.hfield_size[0, 2] + m.geom_pos[g, 2]
    span = np.ptp(task.terrain.heights)
    np.testing.assert_allclose(data, task.terrain.heights, atol=1e-5 * span)
    np.testing.assert_allclose(m.hfield_size[0, :2], task.terrain.half_extent)


@pytest.mark.parametrize("engine", ["mujoco", "motrix"])
def test_height_scan_reads_the_generated_terrain(engine):
    """The contract's height scanner on the generated terrain: points on the samples read the map's
    heights (MuJoCo exactly up to the file's digits; MotrixSim in float32)."""
    task, path = _terrain_scene()
    b = create_backend(engine, SceneCfg(path, default_keyframe="home"), 1, 0.005)
    hs = task.terrain.cfg.horizontal_scale
    q = b.get_default_qpos().astype(np.float64)[None]
    q[0, :3] = [-3.0, 1.0, 2.0]  # on a sample, no rotation
    b.set_state(np.arange(1), q, np.zeros((1, b.nv)))
    offsets = np.array([[i * hs, j * hs] for i in range(-7, 8, 2) for j in range(-5, 6, 5)])
    scan = b.create_hfield_scanner(hfield_geom_id=b.get_geom_id("terrain"), offsets=offsets,
                                   frame_body_id=b.base_body_id, alignment="world").scan()
    expected = task.terrain.height_at(np.array([-3.0, 1.0]) + offsets)
    assert np.ptp(expected) > 0.1  # the points span the slope
    np.testing.assert_allclose(scan[0], expected, atol=1e-5 if engine == "mujoco" else 1e-4)
    b.close()


def test_curriculum_moves_levels_by_distance():
    """Up a level past half a tile (3 m), down below half the commanded distance, else stay; past
    the top a random level."""
    t = generate_terrain(attrs.evolve(SMALL, num_rows=3))
    cur = TerrainCurriculum(t, 4, np.random.default_rng(0), max_init_level=0)
    assert (cur.levels == 0).all()
    cur.update(np.arange(4), np.array([3.5, 1.0, 2.0, 3.5]), np.array([4.0, 4.0, 3.0, 4.0]))
    assert cur.levels.tolist() == [1, 0, 0, 1]
    cur.levels[:] = [1, 1, 2, 2]
    cur.update(np.arange(4), np.array([0.1, 2.0, 2.0, 3.5]), np.array([1.0, 3.0, 3.0, 1.0]))
    assert cur.levels[:3].tolist() == [0, 1, 2] and 0 <= cur.levels[3] <= 2
    np.testing.assert_array_equal(cur.origins(np.arange(2)), t.origins[cur.levels[:2], cur.types[:2]])


def test_observation_delay_history_and_noise():
    """delay 2 control steps: the step-t observation holds the value of t - 2 (the reset value
    before that); history 3 stacks the last three delayed values oldest first; uniform additive
    noise stays within its bound and is the same for the same seed."""
    terms = [ObsTermCfg(name="a", delay=2), ObsTermCfg(name="b", history=3), ObsTermCfg(name="c", noise=NoiseCfg(
        additive=0.1))]
    om = ObservationManager(terms, {"a": 1, "b": 1, "c": 2}, 2)
    assert om.layout == (("a", 1), ("b", 3), ("c", 2)) and om.size == 6
    rng = np.random.default_rng(0)
    vals = lambda t: {"a": np.full((2, 1), t), "b": np.full((2, 1), t), "c": np.zeros((2, 2))}  # noqa: E731
    om.reset(np.arange(2), vals(0.0), rng)
    rows = [om.compute(vals(float(t)), rng) for t in range(1, 6)]
    assert [r[0, 0] for r in rows] == [0.0, 0.0, 1.0, 2.0, 3.0]
    assert rows[-1][0, 1:4].tolist() == [3.0, 4.0, 5.0]
    noise = np.array([r[:, 4:] for r in rows])
    assert 0 < np.abs(noise).max() <= 0.1
    again = ObservationManager(terms, {"a": 1, "b": 1, "c": 2}, 2)
    rng2 = np.random.default_rng(0)
    again.reset(np.arange(2), vals(0.0), rng2)
    np.testing.assert_array_equal(again.compute(vals(1.0), rng2), rows[0])
    with pytest.raises(InvalidInputError, match="unknown terms"):
        ObservationManager([ObsTermCfg(name="z")], {"a": 1}, 2)
    with pytest.raises(InvalidInputError, match="delay"):
        ObsTermCfg(name="a", delay=(2, 1))


def test_shipped_layout_is_unchanged():
    env = UniSimVectorEnv(VelocityTrackingTask(VelocityTrackingCfg(randomize=False)), "mujoco", 2)
    assert env.task.obs.layout == OBSERVATION_LAYOUT and env.task.actuators is None
    env.close()


@pytest.fixture(scope="module")
def go1_env():
    cfg = go1_rough_cfg(terrain=SMALL, observations=go1_rough_cfg().observations + (ObsTermCfg(name="height_scan"),))
    env = UniSimVectorEnv(VelocityTrackingTask(cfg), "mujoco", 4, seed=0)
    yield env
    env.close()


def test_go1_runs_with_its_actuator_model_on_the_terrain(go1_env):
    """Go1's motors are driven by the DC motor model; robots spawn over their tile's ground (base
    0.27 m above it, the keyframe's height); the default pose held for 1 s keeps them up; the
    height scan reads base height above ground minus 0.5 m at 17 x 11 points."""
    env, task = go1_env, go1_env.task
    assert task.actuators is not None and task.actuators.kp.tolist() == [35.0] * 12
    obs, _ = env.reset(seed=0)
    assert obs.shape == (4, 48 + 17 * 11)
    ground = task.terrain.max_height_near(task.spawn_xy, 0.3)
    np.testing.assert_allclose(env.backend.get_base_pos()[:, 2] - ground, 0.27, atol=1e-6)
    scan = obs[:, 48:]
    assert np.all(np.abs(scan - (0.27 - 0.5)) < 0.5)
    for _ in range(50):
        obs, reward, terminated, truncated, _ = env.step(np.zeros((4, 12), np.float32))
        assert not terminated.any()
    assert np.abs(task.actuators.applied_torque).max() > 1.0  # holding the pose takes torque


def test_go1_feet_and_base_collisions_compile_in_mujoco():
    """``collisions="feet_and_base"``: MuJoCo's compiled model has the four feet and the trunk's
    eight collision geoms colliding and no other robot geom; ``foot_condim=3`` is the feet's condim."""
    m = mujoco.MjModel.from_xml_path(build_scene(attrs.evolve(GO1, name="go1_fb_test", collisions="feet_and_base",
                                                              foot_condim=3)))
    trunk = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "trunk")
    colliding = {mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g) or f"{m.geom_bodyid[g]}:{g}"
                 for g in range(m.ngeom) if m.geom_contype[g] or m.geom_conaffinity[g]}
    trunk_geoms = {f"{trunk}:{g}" for g in range(m.ngeom) if m.geom_bodyid[g] == trunk and m.geom_contype[g]}
    assert len(trunk_geoms) == 8 and colliding == {"FR", "FL", "RR", "RL", "floor"} | trunk_geoms
    feet = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, f) for f in ("FR", "FL", "RR", "RL")]
    assert m.geom_condim[feet].tolist() == [3] * 4
    full = mujoco.MjModel.from_xml_path(build_scene(attrs.evolve(GO1, name="go1_all_test", collisions="all",
                                                                 foot_condim=None)))
    assert full.geom_condim[feet].tolist() == [6] * 4 and (full.geom_contype > 0).sum() > 30
    with pytest.raises(InvalidInputError, match="collisions"):
        attrs.evolve(GO1, collisions="feet")
    with pytest.raises(InvalidInputError, match="foot_geoms"):
        attrs.evolve(GO1, foot_geoms=(), foot_condim=3)
    with pytest.raises(InvalidInputError, match="no geoms named"):
        build_scene(attrs.evolve(GO1, name="go1_bad_feet", foot_geoms=("FR", "hand"), collisions="feet_and_base"))


def test_same_seed_same_noisy_episode(go1_env):
    """Noise, delays, commands and spawns all draw from the env's seeded generator."""
    a = [go1_env.reset(seed=5)[0]] + [go1_env.step(np.full((4, 12), 0.1, np.float32))[0] for _ in range(3)]
    b = [go1_env.reset(seed=5)[0]] + [go1_env.step(np.full((4, 12), 0.1, np.float32))[0] for _ in range(3)]
    np.testing.assert_array_equal(np.array(a), np.array(b))


def test_go1_on_motrix_and_flat_ground():
    """The same config on another engine that accepts height fields, and on flat ground."""
    for engine, cfg in (("motrix", go1_rough_cfg(terrain=SMALL)), ("mujoco", go1_rough_cfg(terrain=None))):
        env = UniSimVectorEnv(VelocityTrackingTask(cfg), engine, 2, seed=0)
        env.reset(seed=0)
        for _ in range(10):
            _, _, terminated, _, _ = env.step(np.zeros((2, 12), np.float32))
        assert not terminated.any()
        env.close()
    flat = build_scene(attrs.evolve(GO1, name="go1_flat_test"))
    assert 'name="floor"' in open(flat).read()
    with pytest.raises(InvalidInputError, match="height_scan"):
        UniSimVectorEnv(VelocityTrackingTask(go1_rough_cfg(terrain=None, observations=(
            ObsTermCfg(name="height_scan"),))), "mujoco", 1)
    with pytest.raises(InvalidInputError, match="sub_terrains"):
        TerrainGeneratorCfg(sub_terrains={"flat": object()})
    assert FlatCfg().heights(np.zeros((2, 2)), np.zeros((2, 2)), 0.5, None).sum() == 0
