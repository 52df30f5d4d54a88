"""Height fields on Isaac Sim: the worker makes PhysX collide with MuJoCo's triangles of each field (a
static triangle mesh authored in env 0 before cloning; ``unisim_isaacsim._terrain``) and the host
scans and spawns on the same surface with the core's sampler (``unisim_core.contract.heightfield``, == mj_ray).

Known answers: the mesh's triangles interpolate to the core sampler's heights everywhere on a yawed,
shifted, non-square field; the authored prim's points, in world, are the mesh at the geom's pose; the
REAL worker on the SDK stubs builds the hfield scene and its scans / spawn data equal MuJoCo's
backend's for the same states. How PhysX collides with the mesh is the GPU acceptance script's
(``terrain_ball_rests_on_the_field``)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from isaacsim_testing import USD_EXTRA, import_or_skip_outside_ci

from unisim_core import SceneCfg, TerrainCfg, create_backend
from unisim_core.contract.errors import UnsupportedCapabilityError
from unisim_core.contract.heightfield import HFieldSampler
from unisim_core.plugin.mjcf_lite import load_mjcf
from unisim_core.scenes import scene_path
from unisim_isaacsim._terrain import author_height_fields, height_field_mesh, without_height_fields

FIELD = """<mujoco>
  <asset><hfield name="hf" nrow="5" ncol="7" size="1.5 0.8 0.3 0.1"
    elevation="{elev}"/></asset>
  <worldbody>
    <body name="stand" pos="0.5 -0.3 0.1" euler="0 0 30">
      <geom name="field" type="hfield" hfield="hf" pos="0.2 0 0" euler="0 0 15"/>
    </body>
    <body name="ball" pos="0 0 1"><freejoint/><geom type="sphere" size="0.1"/></body>
  </worldbody>
</mujoco>
"""


def _field(tmp_path, where: str = "stand"):
    """The field in a static body (``stand``), in the world body (``world``) or on the free ball (``ball``)."""
    rng = np.random.default_rng(3)
    elev = " ".join(f"{v:.4f}" for v in rng.uniform(0, 1, 35))
    text = FIELD.format(elev=elev)
    geom = '<geom name="field" type="hfield" hfield="hf" pos="0.2 0 0" euler="0 0 15"/>'
    if where != "stand":
        text = text.replace(f"\n      {geom}\n    </body>", "</body>")
        anchor = "<worldbody>" if where == "world" else '<freejoint/>'
        text = text.replace(anchor, anchor + geom)
        assert text.count(geom) == 1 and '"stand"' in text
        text = text.replace('<body name="stand" pos="0.5 -0.3 0.1" euler="0 0 30"></body>', "")
    path = tmp_path / "field.xml"
    path.write_text(text)
    return path


def _world_mesh(lite, g):
    from unisim_core.contract import quat as Q

    field = lite.hfields[lite.geoms[g]["hfield"]]
    points, triangles = height_field_mesh(field["data"], field["size"])
    pos, quat = lite.geom_pose_w(g)
    return Q.quat_apply(np.broadcast_to(quat, (len(points), 4)), points) + pos, triangles


def test_the_mesh_is_mujocos_triangulated_surface(tmp_path):
    """Every world xy inside the field: the z of the mesh triangle holding it == the core's sampler."""
    lite = load_mjcf(_field(tmp_path), accept={"hfield"})
    g = next(i for i, geom in enumerate(lite.geoms) if geom["type"] == "hfield")
    world, triangles = _world_mesh(lite, g)
    sampler = HFieldSampler.from_lite(lite, g)
    rng = np.random.default_rng(0)
    # points in the geom frame, inside the field, then to world
    local = np.stack([rng.uniform(-1.49, 1.49, 400), rng.uniform(-0.79, 0.79, 400)], axis=1)
    yaw = np.deg2rad(45.0)  # 30 + 15 about z
    rot = np.array([[np.cos(yaw), -np.sin(yaw)], [np.sin(yaw), np.cos(yaw)]])
    xy = local @ rot.T + lite.geom_pose_w(g)[0][:2]
    a, b, c = (world[triangles[:, k]] for k in range(3))
    z = np.full(len(xy), np.nan)
    for i, p in enumerate(xy):  # barycentric coordinates in every triangle's xy projection
        v0, v1, v2 = b[:, :2] - a[:, :2], c[:, :2] - a[:, :2], p - a[:, :2]
        den = v0[:, 0] * v1[:, 1] - v1[:, 0] * v0[:, 1]
        s = (v2[:, 0] * v1[:, 1] - v1[:, 0] * v2[:, 1]) / den
        t = (v0[:, 0] * v2[:, 1] - v2[:, 0] * v0[:, 1]) / den
        inside = np.flatnonzero((s >= -1e-12) & (t >= -1e-12) & (s + t <= 1 + 1e-12))
        k = inside[0]
        z[i] = a[k, 2] + s[k] * (b[k, 2] - a[k, 2]) + t[k] * (c[k, 2] - a[k, 2])
    np.testing.assert_allclose(z, sampler(xy), atol=1e-12)
    # counter-clockwise from above: every triangle's normal points up
    n = np.cross(b - a, c - a)
    assert (n[:, 2] > 0).all()


def test_the_authored_collider_is_the_mesh_at_the_geom_pose(tmp_path):
    """A real USD stage: one Mesh with CollisionAPI, MeshCollisionAPI approximation none, whose points
    transformed to world are the field's triangles at the geom's world pose."""
    import_or_skip_outside_ci("pxr", USD_EXTRA)
    from pxr import Usd, UsdGeom, UsdPhysics

    lite = load_mjcf(_field(tmp_path), accept={"hfield"})
    g = next(i for i, geom in enumerate(lite.geoms) if geom["type"] == "hfield")
    stage = Usd.Stage.CreateInMemory()
    UsdGeom.Xform.Define(stage, "/World/envs/env_0")
    (path,) = author_height_fields(stage, "/World/envs/env_0", lite)
    assert path == "/World/envs/env_0/UniSimHeightFields/field"
    prim = stage.GetPrimAtPath(path)
    assert prim.HasAPI(UsdPhysics.CollisionAPI) and prim.HasAPI(UsdPhysics.MeshCollisionAPI)
    assert UsdPhysics.MeshCollisionAPI(prim).GetApproximationAttr().Get() == "none"
    mesh = UsdGeom.Mesh(prim)
    world, triangles = _world_mesh(lite, g)
    xf = UsdGeom.Xformable(prim).ComputeLocalToWorldTransform(Usd.TimeCode.Default())
    got = np.array([list(xf.Transform(p)) for p in mesh.GetPointsAttr().Get()])
    np.testing.assert_allclose(got, world, atol=1e-6)  # points are float32 in USD
    assert list(mesh.GetFaceVertexCountsAttr().Get()) == [3] * len(triangles)
    assert np.array_equal(np.array(mesh.GetFaceVertexIndicesAttr().Get()).reshape(-1, 3), triangles)


def test_the_importer_copy_goes_without_height_fields(tmp_path):
    path = _field(tmp_path)
    with_fields = load_mjcf(path, accept={"hfield"})
    assert without_height_fields(str(path))
    rest = load_mjcf(path)  # no hfield left: the reader takes it without accept
    assert rest.model_info().body_names == with_fields.model_info().body_names
    assert [g["type"] for g in rest.geoms] == [g["type"] for g in with_fields.geoms if g["type"] != "hfield"]
    assert not without_height_fields(str(path))


def test_a_moving_height_field_is_refused_by_name(tmp_path):
    from unisim_isaacsim._backend import check_model

    with pytest.raises(UnsupportedCapabilityError, match="hfield"):
        check_model(SceneCfg(str(_field(tmp_path, "ball"))))
    assert check_model(SceneCfg(str(_field(tmp_path, "world")))).hfields


@pytest.mark.parametrize("lab", [2, 3], ids=["isaaclab2", "isaaclab3"])
def test_scans_and_spawn_data_equal_mujocos_through_the_real_worker(lab):
    """The real worker on the stubs builds the hfield quadruped (the importer's copy without the field,
    the field authored as a mesh); the host's scans and terrain == MuJoCo's backend for the same states."""
    import_or_skip_outside_ci("physx_usd_schemas", USD_EXTRA)
    from isaacsim_testing.stub_sdk import LAB_ENV
    from isaacsim_testing.stub_sdk_run import StubSdkIsaacSim

    from unisim_core import Capability
    from unisim_isaacsim._runtime import PYTHON_ENV

    scene = SceneCfg(str(scene_path("quadruped_hfield")), terrain=TerrainCfg(hfield_geom="terrain", rows=2, cols=2))
    saved = {k: os.environ.get(k) for k in (LAB_ENV, PYTHON_ENV)}
    os.environ[LAB_ENV], os.environ[PYTHON_ENV] = str(lab), sys.executable
    try:
        b = StubSdkIsaacSim(scene, 2, 0.005, device="cuda:0", init_timeout_s=120.0, call_timeout_s=60.0)
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    ref = create_backend("mujoco", scene, 2, 0.005)
    try:
        assert {Capability.HEIGHT_SCAN, Capability.TERRAIN} <= b.capabilities
        qpos = np.tile(ref.get_default_qpos(), (2, 1))
        qpos[:, :2] = [[1.2, -0.7], [-2.0, 1.5]]
        yaw = np.array([0.4, 2.2])
        qpos[:, 3], qpos[:, 6] = np.cos(yaw / 2), np.sin(yaw / 2)
        for x in (b, ref):
            x.set_state(np.arange(2), qpos, np.zeros((2, ref.nv)))
        tb, tr = b.get_terrain_spawn_data(), ref.get_terrain_spawn_data()
        np.testing.assert_allclose(tb.origins, tr.origins, atol=1e-12)
        assert tb.size == tr.size and tb.hfield_geom_id == tr.hfield_geom_id == ref.get_geom_id("terrain")
        xy = np.array([[0.3, -0.2], [4.0, 4.5], [-9.0, 0.0]])
        np.testing.assert_allclose(tb.sample_height(xy), tr.sample_height(xy), atol=1e-12)
        for alignment in ("yaw", "full"):
            kw = dict(hfield_geom_id=ref.get_geom_id("terrain"), offsets=np.array([[2.0, 0.0], [-1.5, 1.0]]),
                      frame_body_id=ref.base_body_id, alignment=alignment)
            got, want = (x.create_hfield_scanner(**kw).scan() for x in (b, ref))
            assert np.ptp(want) > 0.01
            np.testing.assert_allclose(got, want, atol=1e-5)  # float32 body poses from both
    finally:
        b.close()
        ref.close()
