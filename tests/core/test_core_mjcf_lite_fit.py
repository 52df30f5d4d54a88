"""mjcf_lite fits a primitive geom naming a mesh (``<geom type="capsule" mesh="m">``) as MuJoCo's
compiler does: size, pose and the mass it gives its body equal ``mujoco.MjModel``'s of the same file,
with the inertia box (default) and ``<compiler fitaabb="true">``, ``fitscale``, a geom pose, mesh
``scale``/``refpos``; on Menagerie's arx_l5 (capsules fitted to OBJ links) and realsense_d435i (fitaabb)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from core_helpers import write_scene

from unisim_core.plugin.mjcf_lite import OPTIONAL_FEATURES, MjcfLiteError, load_mjcf

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "menagerie"


def _l_prism_obj(path: Path) -> None:
    """A closed L-shaped prism off the origin, in triangles (its principal frame is turned and shifted)."""
    ring = np.array([[0, 0], [4, 0], [4, 1], [1, 1], [1, 4], [0, 4]], dtype=float) * 0.05
    verts = np.vstack([np.c_[ring, np.zeros(6)], np.c_[ring, np.full(6, 0.12)]]) + [0.3, -0.1, 0.05]
    polys = [[0, 5, 4, 3, 2, 1], [6, 7, 8, 9, 10, 11]] + [[i, (i + 1) % 6, (i + 1) % 6 + 6, i + 6] for i in range(6)]
    tris = [(f[0], f[k], f[k + 1]) for f in polys for k in range(1, len(f) - 1)]
    lines = [f"v {x} {y} {z}" for x, y, z in verts] + [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in tris]
    path.write_text("\n".join(lines))


def _scene(aabb: str) -> str:
    geoms = "".join(f'<geom name="{t}" type="{t}" mesh="l" pos="0.1 0.2 0.3" euler="10 20 30" fitscale="1.3"/>'
                    for t in ("sphere", "capsule", "cylinder", "box", "ellipsoid"))
    return (f'<compiler fitaabb="{aabb}"/><asset><mesh name="l" file="l.obj"/>'
            '<mesh name="s" file="l.obj" scale="0.5 2 1" refpos="0.3 0 0"/></asset><worldbody>'
            f'<body name="b"><freejoint/>{geoms}</body>'
            '<body name="c" pos="1 0 0"><freejoint/><geom type="capsule" mesh="s" density="300"/></body></worldbody>')


def assert_fits_like_mujoco(path: Path, atol: float = 1e-9, qtol: float = 1e-9) -> None:
    """Every primitive geom's size, pos and quat (up to sign) and every body's mass and inertia as
    MuJoCo compiles them."""
    mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo's compiler")
    lite, mj = load_mjcf(path, accept=OPTIONAL_FEATURES), mujoco.MjModel.from_xml_path(str(path))
    fitted = 0
    for g, geom in enumerate(lite.geoms):
        if geom["type"] in ("mesh", "plane"):
            continue
        fitted += 1
        q, ref = geom["quat"], mj.geom_quat[g]
        np.testing.assert_allclose(geom["size"], mj.geom_size[g], atol=atol, err_msg=f"geom {g} size")
        np.testing.assert_allclose(geom["pos"], mj.geom_pos[g], atol=atol, err_msg=f"geom {g} pos")
        np.testing.assert_allclose(np.sign(q @ ref) * q, ref, atol=qtol, err_msg=f"geom {g} quat")
    assert fitted
    np.testing.assert_allclose(lite.body_mass, mj.body_mass, rtol=1e-7)  # MuJoCo's float32 vertices
    np.testing.assert_allclose(lite.body_inertia, mj.body_inertia, rtol=1e-7, atol=1e-12)


@pytest.mark.parametrize("aabb", ["false", "true"])
def test_fitted_primitives_equal_mujocos(tmp_path, aabb):
    """Sphere, capsule, cylinder, box and ellipsoid fitted to a shifted, asymmetric mesh (its principal
    frame turned) under a geom pose and fitscale, and a capsule on a scaled, re-referenced mesh: MuJoCo's
    sizes, frames and the masses they give their bodies (default density and density=300)."""
    _l_prism_obj(tmp_path / "l.obj")
    assert_fits_like_mujoco(write_scene(tmp_path, _scene(aabb)))


def test_menagerie_fitted_primitives_equal_mujocos():
    """arx_l5's collision capsules fitted to its OBJ links by their inertia boxes, and realsense_d435i's
    capsule fitted to its case's bounding box (fitaabb): as MuJoCo compiles them (the camera mesh's
    centre of mass 3e-6 m and its nearly equal moments' axes 2e-4 from MuJoCo's float32 mesh)."""
    scenes = [CORPUS / "arx_l5" / "scene.xml", CORPUS / "realsense_d435i" / "d435i.xml"]
    if not all(p.is_file() for p in scenes):
        pytest.skip(f"the Menagerie corpus is not at {CORPUS}")
    assert_fits_like_mujoco(scenes[0], atol=1e-5, qtol=1e-3)
    assert_fits_like_mujoco(scenes[1])


def test_a_fit_mujoco_rejects_is_an_error_naming_the_geom(tmp_path):
    """A capsule fitted to a flat mesh's bounding box has a negative half length (MuJoCo: 'size 1 must be
    positive'); a fitted primitive with fromto, or naming no mesh asset, is malformed."""
    faces = "0 2 3 0 3 1 4 5 7 4 7 6 0 1 5 0 5 4 2 6 7 2 7 3 0 4 6 0 6 2 1 3 7 1 7 5"  # a box's 12 triangles
    flat = f'<mesh name="f" vertex="0 0 0 1 0 0 0 1 0 1 1 0 0 0 0.1 1 0 0.1 0 1 0.1 1 1 0.1" face="{faces}"/>'
    for body, why in ((f'<compiler fitaabb="true"/><asset>{flat}</asset>'
                       '<worldbody><body><geom type="capsule" mesh="f"/></body></worldbody>', "not positive"),
                      (f'<asset>{flat}</asset><worldbody><body><geom type="box" mesh="f" fromto="0 0 0 0 0 1"/>'
                       '</body></worldbody>', "and fromto"),
                      ('<worldbody><body><geom type="box" mesh="nope"/></body></worldbody>', "not an <asset><mesh>")):
        with pytest.raises(MjcfLiteError, match=why) as info:
            load_mjcf(write_scene(tmp_path, body))
        assert info.value.feature is None
