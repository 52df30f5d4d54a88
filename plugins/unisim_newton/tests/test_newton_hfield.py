"""Height fields on Newton: SolverMuJoCo hands MuJoCo Warp the file's height field as MuJoCo compiles
it, bodies collide with it as on CPU MuJoCo (the kit's contact tier: 5 mm), and the shared height
scanner (``unisim_core.contract.heightfield``, the file's field from ``mjcf_lite``) reads what MuJoCo's reads."""

from __future__ import annotations

import numpy as np
import pytest
from newton_testutil import QUADRUPED

from unisim_conformance import scene_path
from unisim_core import SceneCfg, create_backend

mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo")
QUADRUPED_HFIELD = QUADRUPED.with_name("quadruped_hfield.xml")


def _balls(b):
    """Ball 0 over the plateau, 1 over the ramp, 2 over the ramp's foot (hfield_terrain.xml's closed form)."""
    q = np.tile(b.get_qpos()[0], (3, 1))
    q[:, :3] = [[1.0, 0.0, 0.7], [-1.0, 0.3, 0.5], [-1.5, -1.2, 0.4]]
    b.set_state(np.arange(3), q, np.zeros((3, b.nv)))


def test_balls_land_and_scans_read_as_on_mujoco(make):
    path = scene_path("hfield_terrain")
    b = make(path, num_envs=3)
    ref = create_backend("mujoco", SceneCfg(str(path)), 3, 0.002)
    m = mujoco.MjModel.from_xml_path(str(path))
    np.testing.assert_array_equal(b._solver.mj_model.hfield_data, m.hfield_data)
    try:
        scans = []
        for sim in (b, ref):
            _balls(sim)
            scanner = sim.create_hfield_scanner(hfield_geom_id=0, offsets=np.array([[0.3, 0.1], [-0.4, 0.2]]),
                                                frame_body_id=1, alignment="yaw", output="height")
            scans.append(scanner.scan())
            sim.step(np.zeros((3, 0)), 500)
        np.testing.assert_allclose(scans[0], scans[1], atol=1e-6)
        np.testing.assert_allclose(b.get_qpos()[:, :3], ref.get_qpos()[:, :3], atol=5e-3)
        assert abs(b.get_qpos()[0, 2] - 0.5) < 1e-3  # at rest on the plateau: 0.4 + its 0.1 m radius
    finally:
        ref.close()


def test_quadruped_stands_on_the_height_field_as_on_mujoco(make):
    """quadruped_hfield held at home by its PD for 1 s: base within 5 mm of MuJoCo's, joints 1e-2 rad."""
    qpos = []
    for sim in (make(QUADRUPED_HFIELD), create_backend("mujoco", SceneCfg(str(QUADRUPED_HFIELD)), 2, 0.002)):
        home = np.tile(sim.get_keyframe_qpos("home"), (2, 1))
        sim.set_state(np.arange(2), home, np.zeros((2, sim.nv)))
        sim.step(home[:, 7:], 500)
        qpos.append(sim.get_qpos())
        sim.close()
    np.testing.assert_allclose(qpos[0][:, :3], qpos[1][:, :3], atol=5e-3)
    np.testing.assert_allclose(qpos[0][:, 7:], qpos[1][:, 7:], atol=1e-2)
