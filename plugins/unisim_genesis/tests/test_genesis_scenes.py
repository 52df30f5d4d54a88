"""What the backend hands Genesis' importer and what it adds around it: the file flattened as MuJoCo reads
it (includes, asset folders), and height fields as terrain entities on MuJoCo's triangles."""

from __future__ import annotations

import os

import numpy as np
from genesis_testutil import require_genesis

require_genesis()

from unisim_core import SceneCfg  # noqa: E402
from unisim_core import quat as Q  # noqa: E402
from unisim_core.mjcf_lite import read_tree  # noqa: E402
from unisim_genesis import GenesisBackend  # noqa: E402
from unisim_genesis._mjcf import flattened_mjcf  # noqa: E402

#: A bumpy 5 x 4 field (0.4 m square cells), offset and turned 30 degrees: every cell is non-planar, so
#: the diagonal each engine splits it along shows in the surface.
BUMPS = """<mujoco model="bumps">
  <asset>
    <hfield name="hf" nrow="5" ncol="4" size="0.6 0.8 0.3 0.1"
      elevation="0 1 0.2 0.7  0.5 0.1 0.9 0.3  0.8 0.4 0 0.6  0.2 0.9 0.5 0.1  0.6 0 0.3 1"/>
  </asset>
  <worldbody>
    <geom name="terrain" type="hfield" hfield="hf" pos="0.3 -0.2 0.05" euler="0 0 30"/>
    <body name="ball" pos="0 0 1"><freejoint name="root"/>
      <inertial pos="0 0 0" mass="1" diaginertia="0.004 0.004 0.004"/><geom type="sphere" size="0.05" mass="0"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_flattened_text_resolves_includes_and_asset_folders_as_mujoco(tmp_path):
    """A nested include is looked up from the main file's folder (Genesis' importer took the including file's
    path for a folder: pal_tiago), and <compiler assetdir> becomes the absolute meshdir/texturedir MuJoCo uses
    (Genesis' importer overrode it with its own folder: google_robot); an explicit meshdir wins over assetdir."""
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "leaf.xml").write_text('<mujoco><worldbody><body name="leaf"/></worldbody></mujoco>')
    (tmp_path / "robot.xml").write_text('<mujoco><compiler assetdir="assets" meshdir="meshes"/>'
                                        '<include file="parts/leaf.xml"/></mujoco>')
    (tmp_path / "scene.xml").write_text('<mujoco><include file="robot.xml"/></mujoco>')
    text = flattened_mjcf(read_tree(tmp_path / "scene.xml"), str(tmp_path / "scene.xml"))
    assert "<include" not in text and 'name="leaf"' in text and "assetdir" not in text
    assert f'meshdir="{os.path.join(tmp_path, "meshes")}"' in text
    assert f'texturedir="{os.path.join(tmp_path, "assets")}"' in text


def test_height_field_surface_is_mujocos_triangles(tmp_path):
    """Genesis' terrain height at 400 random points of a bumpy, offset, turned field equals the core's sampler
    (MuJoCo's triangulated surface, == mj_ray) to 1e-12 m: same samples, same placement, same diagonals (the
    other diagonal would differ by up to 0.24 m at a cell centre here)."""
    path = tmp_path / "bumps.xml"
    path.write_text(BUMPS)
    sim = GenesisBackend(SceneCfg(str(path)), 1, 0.002, device="cpu", np_dtype=np.float64)
    sampler = sim._height_field(sim.get_geom_id("terrain"))
    (terrain, _), = sim._terrains.values()
    local = np.random.default_rng(0).uniform([-0.59, -0.79], [0.59, 0.79], (400, 2))
    xy = Q.quat_apply(Q.quat_from_yaw(np.pi / 6), np.c_[local, np.zeros(400)])[:, :2] + [0.3, -0.2]
    genesis_z = terrain.get_terrain_height(xy).cpu().numpy().reshape(-1)
    np.testing.assert_allclose(genesis_z, sampler.at(xy[:, 0], xy[:, 1]), rtol=0, atol=1e-12)
    assert np.ptp(genesis_z) > 0.2
    sim.close()
