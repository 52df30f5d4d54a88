"""Height field queries, terrain spawn data, mocap bindings, offscreen frames and video."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest
from mujoco_testutil import QUADRUPED, QUADRUPED_HFIELD, kit, reference

from unisim_core.contract.config import TerrainCfg


def _closed_form(x):  # hfield_terrain.xml: h = 0.2 (x + 2) for x <= 0, 0.4 for x >= 0
    return np.where(x <= 0, 0.2 * (x + 2), 0.4)


def test_scanner_known_heights(make):
    sim = make(kit("hfield_terrain.xml"), num_envs=2)
    qpos = sim.get_qpos()
    qpos[:, :3] = [[-1.0, 0.3, 1.0], [0.5, -0.5, 1.0]]
    sim.set_state(np.arange(2), qpos, np.zeros((2, 6)))
    offsets = np.array([[-0.5, 0.0], [0.0, 0.0], [0.7, 0.2], [-0.25, -1.0]])
    geom = sim.get_geom_id("terrain")
    scan = sim.create_hfield_scanner(hfield_geom_id=geom, offsets=offsets, frame_body_id=1, alignment="world")
    x = qpos[:, None, 0] + offsets[None, :, 0]
    np.testing.assert_allclose(scan.scan(), _closed_form(x), atol=1e-12)
    dist = sim.create_hfield_scanner(hfield_geom_id=geom, offsets=offsets, frame_body_id=1, alignment="world",
                                     output="distance")
    np.testing.assert_allclose(dist.scan(), 1.0 - _closed_form(x), atol=1e-12)


def test_scanner_yaw_alignment(make):
    # base yawed 90 deg: body +x offset points along world +y, so x stays put
    sim = make(kit("hfield_terrain.xml"))
    qpos = sim.get_qpos()
    qpos[0, :7] = [-1.0, 0, 1.0, np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)]
    sim.set_state(np.array([0]), qpos, np.zeros((1, 6)))
    scan = sim.create_hfield_scanner(hfield_geom_id=sim.get_geom_id("terrain"),
                                     offsets=np.array([[0.5, 0.0], [0.0, -0.5]]), frame_body_id=1)
    np.testing.assert_allclose(scan.scan()[0], [_closed_form(-1.0), _closed_form(-0.5)], atol=1e-12)


def test_sampler_equals_mj_ray_on_bowl(make):
    # the bowl of quadruped_hfield.xml is curved: triangle interpolation must match MuJoCo's own rays
    sim = make(QUADRUPED_HFIELD, scene_kwargs={"terrain": TerrainCfg(hfield_geom="terrain", rows=2, cols=3,
                                                                     spacing=1.5)})
    data = sim.get_terrain_spawn_data()
    m, d = reference(QUADRUPED_HFIELD, sim.sim_dt)
    mujoco.mj_forward(m, d)
    rng = np.random.default_rng(0)
    xy = rng.uniform(-4.9, 4.9, (150, 2))
    xy = xy[np.linalg.norm(xy, axis=1) > 0.6][:100]  # away from the robot standing at the origin
    gid = np.zeros(1, np.int32)
    group = np.zeros(6, np.uint8)
    group[m.geom_group[data.hfield_geom_id]] = 1
    ray = [5.0 - mujoco.mj_ray(m, d, np.array([x, y, 5.0]), np.array([0, 0, -1.0]), group, 1, 1, gid)
           for x, y in xy]
    np.testing.assert_allclose(data.sample_height(xy), ray, atol=1e-7)  # mj_ray's own tolerance
    assert data.origins.shape == (6, 3)
    np.testing.assert_allclose(data.origins[:, 0], np.tile([-1.5, 0, 1.5], 2))
    np.testing.assert_allclose(data.origins[:, 2], data.sample_height(data.origins[:, :2]))


def test_mocap_binding(make, tmp_path):
    xml = tmp_path / "mocap.xml"
    xml.write_text("""<mujoco><worldbody>
      <body name="target" mocap="true" pos="0 0 1"><geom size="0.05" contype="0" conaffinity="0"/></body>
      <body name="ball" pos="0 0 2"><freejoint/><geom size="0.1" mass="1" contype="0" conaffinity="0"/></body>
    </worldbody></mujoco>""")
    sim = make(xml, num_envs=3)
    mocap = sim.bind_mocap_pose("target")
    q = np.array([[np.cos(0.5), 0, 0, np.sin(0.5)]])
    mocap.set(np.array([[1.0, 2.0, 3.0]]), q * 2.0, env_ids=np.array([2]))
    pos, quat = mocap.get()
    np.testing.assert_allclose(pos[[0, 2]], [[0, 0, 1], [1, 2, 3]])
    np.testing.assert_allclose(quat[2], q[0])
    # the body follows at once; snapshots carry the mocap pose
    np.testing.assert_allclose(sim.get_body_pos_w(np.array([1]))[2, 0], [1, 2, 3])
    snap = sim.get_physics_state()
    assert snap.shape == (3, 1 + 7 + 6 + 7)
    np.testing.assert_allclose(snap[2, -7:], [1, 2, 3, *q[0]])
    with pytest.raises(ValueError, match="not a mocap body"):
        sim.bind_mocap_pose("ball")


def test_frame_capture_changes_with_state(make):
    sim = make(QUADRUPED, num_envs=2, scene_kwargs={"default_keyframe": "home"})
    sim.init_renderer(1.0, capture=True, headless=True, width=96, height=64,
                      camera_kwargs={"distance": 1.5, "lookat": (0, 0, 0.2)})
    a = sim.capture_video_frame()
    assert a.shape == (64, 96, 3) and a.dtype == np.uint8
    qpos = sim.get_qpos()
    qpos[:, 0] += 0.4
    sim.set_state(np.arange(2), qpos, np.zeros((2, sim.nv)))
    b = sim.capture_video_frame()
    assert np.abs(a.astype(int) - b).sum() > 1000  # the robots moved in the picture


def test_playback_writes_mp4_with_expected_frames(make, tmp_path):
    iio = pytest.importorskip("imageio.v3")
    sim = make(kit("free_body.xml"), num_envs=1, sim_dt=0.01)
    out = tmp_path / "fall.mp4"
    path = sim.run_playback(env=None, initialize=lambda: None, step=lambda: sim.step(np.zeros((1, 0)), 1),
                            num_steps=12, output_video=str(out), camera_kwargs={"distance": 2.0})
    assert Path(path).is_file()
    frames = iio.imread(out)
    assert frames.shape[0] == 12 and frames.shape[-1] == 3
