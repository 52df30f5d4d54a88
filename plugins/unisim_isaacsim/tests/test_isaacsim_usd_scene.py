"""Stage edits for the MJCF importer's output, on real USD stages (usd-core + physx-usd-schemas).

The asset layer mirrors what ``isaacsim.asset.importer.mjcf`` (Isaac Sim 5.x) writes: default prim
``quad``; root link ``quad/trunk/trunk`` with the articulation root; links as siblings under
``quad/trunk``; each link's ``collisions`` an instanceable internal reference to a prototype
outside the default prim; ``quad/worldBody`` with a second articulation root and the floor plane.
It is referenced at ``/World/envs/env_0/Robot`` as Isaac Lab's ``UsdFileCfg`` spawner does.
"""

from __future__ import annotations

import numpy as np
import pytest
from isaacsim_testing import USD_EXTRA, import_or_skip_outside_ci

# registers PhysxSchema before pxr's registry is used
import_or_skip_outside_ci("physx_usd_schemas", USD_EXTRA)
from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics  # noqa: E402

from unisim_isaacsim._usd_helpers import apply_collision_offsets, read_engine_solver_values  # noqa: E402
from unisim_isaacsim._usd_scene import (  # noqa: E402
    define_camera,
    isolate_articulation_root,
    make_physics_prims_authorable,
    set_camera_look_at,
)

ROBOT = "/World/envs/env_0/Robot"
LINKS = ("trunk", "FL_thigh", "FL_calf")


def _asset_layer(extra_top_body: bool = False) -> Sdf.Layer:
    layer = Sdf.Layer.CreateAnonymous("quad.usda")
    asset = Usd.Stage.Open(layer)
    quad = UsdGeom.Xform.Define(asset, "/quad").GetPrim()
    asset.SetDefaultPrim(quad)
    asset.CreateClassPrim("/collisions")
    tops = [("trunk", LINKS)] + ([("box", ("box",))] if extra_top_body else [])
    for top, links in tops:
        UsdGeom.Xform.Define(asset, f"/quad/{top}")
        for link in links:
            body = UsdGeom.Xform.Define(asset, f"/quad/{top}/{link}").GetPrim()
            UsdPhysics.RigidBodyAPI.Apply(body)
            shape = UsdGeom.Cube.Define(asset, f"/collisions/{link}/shape").GetPrim()
            UsdPhysics.CollisionAPI.Apply(shape)
            holder = UsdGeom.Xform.Define(asset, f"/quad/{top}/{link}/collisions").GetPrim()
            holder.GetReferences().AddInternalReference(f"/collisions/{link}")
            holder.SetInstanceable(True)
        UsdPhysics.ArticulationRootAPI.Apply(asset.GetPrimAtPath(f"/quad/{top}/{top}"))
    world = UsdGeom.Xform.Define(asset, "/quad/worldBody").GetPrim()
    UsdPhysics.ArticulationRootAPI.Apply(world)
    world.ApplyAPI("PhysxArticulationAPI")
    floor = UsdGeom.Xform.Define(asset, "/quad/worldBody/floor").GetPrim()
    UsdPhysics.RigidBodyAPI.Apply(floor).CreateKinematicEnabledAttr(True)
    plane = UsdGeom.Plane.Define(asset, "/quad/worldBody/floor/collisions/CollisionPlane").GetPrim()
    UsdPhysics.CollisionAPI.Apply(plane)
    return layer


def _spawned(extra_top_body: bool = False) -> tuple[Usd.Stage, Sdf.Layer]:
    layer = _asset_layer(extra_top_body)
    stage = Usd.Stage.CreateInMemory()
    UsdGeom.Xform.Define(stage, ROBOT).GetPrim().GetReferences().AddReference(layer.identifier)
    return stage, layer


def _roots(stage):
    return sorted(str(p.GetPath()) for p in stage.Traverse() if p.HasAPI(UsdPhysics.ArticulationRootAPI))


def test_keeps_the_root_link_and_strips_the_world_body_root():
    stage, layer = _spawned()
    assert _roots(stage) == [f"{ROBOT}/trunk/trunk", f"{ROBOT}/worldBody"]
    assert isolate_articulation_root(stage, ROBOT, "trunk") == f"{ROBOT}/trunk/trunk"
    assert _roots(stage) == [f"{ROBOT}/trunk/trunk"]
    world = stage.GetPrimAtPath(f"{ROBOT}/worldBody")
    assert world.GetAppliedSchemas() == []
    assert world.GetChild("floor").HasAPI(UsdPhysics.RigidBodyAPI)  # the floor body itself stays
    asset = Usd.Stage.Open(layer)
    assert asset.GetPrimAtPath("/quad/worldBody").HasAPI(UsdPhysics.ArticulationRootAPI)  # a local opinion only


def test_a_second_top_level_body_fails_closed_and_changes_nothing():
    stage, _ = _spawned(extra_top_body=True)
    before = _roots(stage)
    with pytest.raises(ValueError, match=r"one articulation per environment.*Robot/box/box"):
        isolate_articulation_root(stage, ROBOT, "trunk")
    assert _roots(stage) == before


def test_an_unexpected_layout_fails_closed_naming_the_roots_found():
    stage, _ = _spawned()
    with pytest.raises(ValueError, match=r"expected the articulation root at '.*/Robot/base/base'.*worldBody"):
        isolate_articulation_root(stage, ROBOT, "base")
    with pytest.raises(ValueError, match="robot_path: no prim at '/World/nothing'"):
        isolate_articulation_root(stage, "/World/nothing", "trunk")


def test_instanced_colliders_become_authorable_locally():
    stage, layer = _spawned()
    with pytest.raises(ValueError, match="instance proxies"):
        apply_collision_offsets(stage, contact_offset=0.02)
    changed = make_physics_prims_authorable(stage, ROBOT)
    assert changed == sorted(f"{ROBOT}/trunk/{link}/collisions" for link in LINKS)
    assert make_physics_prims_authorable(stage, ROBOT) == []  # idempotent
    assert apply_collision_offsets(stage, contact_offset=0.02, rest_offset=0.001) == len(LINKS) + 1  # + floor plane
    values = read_engine_solver_values(stage, include_contact_offset=True, include_rest_offset=True)
    assert values["contact_offset"] == {"value": pytest.approx(0.02), "source": "usd_stage", "prims": 4}
    asset = Usd.Stage.Open(layer)
    assert asset.GetPrimAtPath("/collisions/trunk/shape").GetAttribute(
        "physxCollision:contactOffset").HasAuthoredValue() is False  # the shared prototype is untouched


def test_nested_instances_are_all_opened():
    stage = Usd.Stage.CreateInMemory()
    stage.CreateClassPrim("/proto_inner")
    UsdPhysics.CollisionAPI.Apply(UsdGeom.Cube.Define(stage, "/proto_inner/shape").GetPrim())
    stage.CreateClassPrim("/proto_outer")
    inner = UsdGeom.Xform.Define(stage, "/proto_outer/inner").GetPrim()
    inner.GetReferences().AddInternalReference("/proto_inner")
    inner.SetInstanceable(True)
    outer = UsdGeom.Xform.Define(stage, "/World/robot/link").GetPrim()
    outer.GetReferences().AddInternalReference("/proto_outer")
    outer.SetInstanceable(True)
    assert make_physics_prims_authorable(stage, "/World/robot") == ["/World/robot/link", "/World/robot/link/inner"]
    shape = stage.GetPrimAtPath("/World/robot/link/inner/shape")
    assert shape.HasAPI(UsdPhysics.CollisionAPI) and not shape.IsInstanceProxy()


def _world_axes(stage, path):
    m = UsdGeom.Xformable(stage.GetPrimAtPath(path)).ComputeLocalToWorldTransform(Usd.TimeCode.Default())
    pos = np.array(m.ExtractTranslation())
    look = np.array(m.TransformDir(Gf.Vec3d(0, 0, -1)))
    up = np.array(m.TransformDir(Gf.Vec3d(0, 1, 0)))
    return pos, look / np.linalg.norm(look), up / np.linalg.norm(up)


def test_camera_looks_at_the_target_from_the_eye_and_stays_upright():
    stage = Usd.Stage.CreateInMemory()
    UsdGeom.Camera.Define(stage, "/World/cam")
    eye, target = np.array([3.0, -2.0, 1.5]), np.array([0.5, 0.25, 0.3])
    set_camera_look_at(stage, "/World/cam", eye, target)
    pos, look, up = _world_axes(stage, "/World/cam")
    np.testing.assert_allclose(pos, eye, atol=1e-12)
    np.testing.assert_allclose(look, (target - eye) / np.linalg.norm(target - eye), atol=1e-12)
    assert abs(up @ look) < 1e-12 and up[2] > 0.9  # image up is the world's +Z, tilted by the pitch
    set_camera_look_at(stage, "/World/cam", [0.0, 0.0, 5.0], [1.0, 0.0, 0.0])  # re-aim replaces the pose
    pos, look, _ = _world_axes(stage, "/World/cam")
    np.testing.assert_allclose(pos, [0, 0, 5], atol=1e-12)
    np.testing.assert_allclose(look, np.array([1.0, 0.0, -5.0]) / np.sqrt(26.0), atol=1e-12)


@pytest.mark.parametrize("eye, target, match", [
    ([1, 2, 3], [1, 2, 3], "finite and distinct"),
    ([0, 0, 1], [0, 0, 0], "parallel to up"),
    ([np.nan, 0, 1], [0, 0, 0], "finite and distinct"),
])
def test_degenerate_camera_poses_fail_and_change_nothing(eye, target, match):
    stage = Usd.Stage.CreateInMemory()
    cam = UsdGeom.Camera.Define(stage, "/World/cam")
    with pytest.raises(ValueError, match=match):
        set_camera_look_at(stage, "/World/cam", eye, target)
    assert cam.GetXformOpOrderAttr().Get() in (None, [])
    with pytest.raises(ValueError, match="no UsdGeom.Camera at '/World/none'"):
        set_camera_look_at(stage, "/World/none", [1, 0, 0], [0, 0, 0])


@pytest.mark.parametrize("width, height, fovy", [(320, 240, 45.0), (640, 480, 60.0), (200, 400, 30.0)])
def test_camera_optics_give_the_requested_vertical_field_of_view(width, height, fovy):
    stage = Usd.Stage.CreateInMemory()
    define_camera(stage, "/World/cam", width, height, fovy_deg=fovy)
    cam = UsdGeom.Camera(stage.GetPrimAtPath("/World/cam")).GetCamera(Usd.TimeCode.Default())
    assert cam.GetFieldOfView(Gf.Camera.FOVVertical) == pytest.approx(fovy, rel=1e-5)
    assert cam.aspectRatio == pytest.approx(width / height, rel=1e-6)
    assert cam.clippingRange.min == pytest.approx(0.01) and cam.clippingRange.max == pytest.approx(1e4)


@pytest.mark.parametrize("kw, match", [
    (dict(fovy_deg=0.0), "fovy_deg"), (dict(fovy_deg=180.0), "fovy_deg"), (dict(near=0.0), "near"),
    (dict(near=2.0, far=1.0), "near"),
])
def test_camera_optics_reject_bad_values_and_define_nothing(kw, match):
    stage = Usd.Stage.CreateInMemory()
    with pytest.raises(ValueError, match=match):
        define_camera(stage, "/World/cam", 320, 240, **kw)
    assert not stage.GetPrimAtPath("/World/cam")


def test_opening_instances_fails_closed_inside_an_instance_or_against_a_stronger_layer():
    stage, _ = _spawned()
    inside = f"{ROBOT}/trunk/trunk/collisions/shape"
    assert stage.GetPrimAtPath(inside).IsInstanceProxy()
    with pytest.raises(ValueError, match="is inside an instance"):
        make_physics_prims_authorable(stage, inside)
    holder = f"{ROBOT}/trunk/trunk/collisions"  # the last one opened: the two before it are undone
    with Usd.EditContext(stage, stage.GetSessionLayer()):
        stage.GetPrimAtPath(holder).SetInstanceable(True)  # a stronger opinion than the root layer's
    with pytest.raises(ValueError, match="trunk/trunk/collisions'.*stronger layer"):
        make_physics_prims_authorable(stage, ROBOT)
    holders = [f"{ROBOT}/trunk/{link}/collisions" for link in LINKS]
    assert all(stage.GetPrimAtPath(h).IsInstance() for h in holders)  # the failed call changed nothing
    assert not any(stage.GetRootLayer().GetPrimAtPath(h).HasInfo("instanceable") for h in holders)
    with pytest.raises(ValueError, match="path: no prim at '/World/none'"):
        make_physics_prims_authorable(stage, "/World/none")


MOCAP_MODEL = """<mujoco><worldbody>
  <body name="target" mocap="true" pos="1 2 3" quat="0 0 0 1">
    <geom name="ball" type="sphere" size="0.1"/>
    <geom name="stick" type="capsule" size="0.02 0.3" pos="0 0 0.4"/>
    <geom name="can" type="cylinder" size="0.05 0.1" pos="0.2 0 0"/>
    <geom name="slab" type="box" size="0.3 0.2 0.1" pos="0 0 -0.2"/>
    <geom name="ghost" type="ellipsoid" size="0.1 0.2 0.3" contype="0" conaffinity="0"/>
  </body>
  <body name="box"><freejoint name="root"/><geom type="box" size="0.1 0.1 0.1"/></body>
</worldbody></mujoco>"""


def test_mocap_bodies_are_authored_as_kinematic_bodies_with_primitive_colliders(tmp_path):
    """Each mocap body: a kinematic rigid body at its pose, one USD primitive collider per colliding geom at
    the geom's pose with MuJoCo's sizes (a capsule/cylinder along z, size [radius, half length]; a box a
    cube of size 2 scaled by its half sizes), nothing for a non-colliding geom; the importer's copy goes
    without the mocap body."""
    from unisim_core.plugin.mjcf_lite import load_mjcf
    from unisim_isaacsim._mocap import author_mocap_bodies, mocap_geom_refusal, without_mocap_bodies

    model = tmp_path / "target.xml"
    model.write_text(MOCAP_MODEL)
    lite = load_mjcf(str(model), accept={"mocap"})
    assert mocap_geom_refusal(lite) is None
    stage = Usd.Stage.CreateInMemory()
    paths = author_mocap_bodies(stage, "/World/envs/env_0", lite)
    assert paths == {1: "/World/envs/env_0/UniSimMocap/target"}
    body = stage.GetPrimAtPath(paths[1])
    assert body.HasAPI(UsdPhysics.RigidBodyAPI) and body.GetAttribute("physics:kinematicEnabled").Get() is True
    world = UsdGeom.Xformable(body).ComputeLocalToWorldTransform(Usd.TimeCode.Default())
    np.testing.assert_allclose(world.ExtractTranslation(), [1, 2, 3])
    assert sorted(c.GetName() for c in body.GetChildren()) == ["ball", "can", "slab", "stick"]
    get = lambda geom, attr: stage.GetPrimAtPath(f"{paths[1]}/{geom}").GetAttribute(attr).Get()  # noqa: E731
    assert stage.GetPrimAtPath(f"{paths[1]}/ball").IsA(UsdGeom.Sphere) and get("ball", "radius") == pytest.approx(0.1)
    assert stage.GetPrimAtPath(f"{paths[1]}/stick").IsA(UsdGeom.Capsule)
    assert (get("stick", "radius"), get("stick", "height"), get("stick", "axis")) == (pytest.approx(0.02),
                                                                                       pytest.approx(0.6), "Z")
    np.testing.assert_allclose(get("stick", "xformOp:translate"), [0, 0, 0.4])
    assert stage.GetPrimAtPath(f"{paths[1]}/can").IsA(UsdGeom.Cylinder) and get("can", "height") == pytest.approx(0.2)
    assert get("slab", "size") == 2.0
    np.testing.assert_allclose(get("slab", "xformOp:scale"), [0.3, 0.2, 0.1], atol=1e-7)
    assert all(stage.GetPrimAtPath(f"{paths[1]}/{g}").HasAPI(UsdPhysics.CollisionAPI)
               for g in ("ball", "stick", "can", "slab"))
    assert without_mocap_bodies(str(model)) and "target" not in model.read_text() and "box" in model.read_text()
    assert not without_mocap_bodies(str(model))
