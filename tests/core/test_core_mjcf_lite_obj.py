"""OBJ polygons split as MuJoCo's OBJ loader (tinyobj) splits them, so that mesh masses equal
``mujoco.MjModel``'s: a quad along its shorter diagonal, a larger polygon by tinyobj's ear clipping
(which leaves part of some polygons out); Menagerie's google_robot (a quad in a finger mesh) and
trossen_wxai (pentagons to nonagons in its collision meshes)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from core_helpers import write_scene
from test_core_mjcf_lite import assert_like_mujoco

from unisim_core.plugin.mjcf_lite._mesh import read_mesh

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "menagerie"


def _write(path: Path, verts, polys) -> None:
    path.write_text("\n".join([f"v {x} {y} {z}" for x, y, z in verts]
                              + ["f " + " ".join(str(i + 1) for i in p) for p in polys]) + "\n")


def test_polygons_split_as_mujocos_obj_loader(tmp_path):
    """A box whose top is a non-planar quad (the split changes the volume), and an L-shaped prism off the
    origin whose hexagonal caps tinyobj's ear clipping leaves unfinished (18 triangles, not 20)."""
    box = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1.1], [1, 1, 1.4], [0, 1, 1.1]]) * 0.1
    _write(tmp_path / "box.obj", box, [[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6],
                                       [3, 0, 4, 7]])
    ring = np.array([[0, 0], [4, 0], [4, 1], [1, 1], [1, 4], [0, 4]], dtype=float) * 0.05
    prism = np.vstack([np.c_[ring, np.zeros(6)], np.c_[ring, np.full(6, 0.12)]]) + [0.3, -0.1, 0.05]
    _write(tmp_path / "l.obj", prism, [[0, 5, 4, 3, 2, 1], [6, 7, 8, 9, 10, 11]]
           + [[i, (i + 1) % 6, (i + 1) % 6 + 6, i + 6] for i in range(6)])
    assert len(read_mesh(str(tmp_path / "l.obj"))) == 18
    path = write_scene(tmp_path, '<asset><mesh file="box.obj"/><mesh file="l.obj"/></asset><worldbody>'
                                 '<body name="box"><freejoint/><geom type="mesh" mesh="box"/></body>'
                                 '<body name="l"><freejoint/><geom type="mesh" mesh="l"/></body></worldbody>')
    assert_like_mujoco(path, bodies_only=True)


@pytest.mark.parametrize(("robot", "rtol"), [("google_robot", 1e-6), ("trossen_wxai", 1e-5)])
def test_menagerie_obj_meshes_weigh_as_mujocos(robot, rtol):
    """Masses and inertias as MuJoCo's (trossen_wxai's moments 1.5e-6 apart: MuJoCo's float32 vertices)."""
    if not (CORPUS / robot / "scene.xml").is_file():
        pytest.skip(f"the Menagerie corpus is not at {CORPUS}")
    assert_like_mujoco(CORPUS / robot / "scene.xml", bodies_only=True, rtol=rtol)
