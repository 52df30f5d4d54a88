"""Stage helpers on real in-memory USD stages (usd-core + physx-usd-schemas, no Isaac Sim)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# physx_usd_schemas registers its schema plugins on import; that must precede the first use of
# USD's schema registry in the process, so it is imported before anything touches pxr.
from isaacsim_testing import USD_EXTRA, import_or_skip_outside_ci

import_or_skip_outside_ci("physx_usd_schemas", USD_EXTRA)
from pxr import Sdf, Usd, UsdGeom, UsdPhysics  # noqa: E402

from unisim_isaacsim._usd_helpers import (  # noqa: E402
    apply_collision_offsets,
    apply_max_depenetration_velocity,
    read_engine_solver_values,
)

LINKS = ("base", "thigh", "shin")


def _articulated_stage() -> Usd.Stage:
    """/World/robot (articulation root) -> nested links, each a rigid body with two colliders."""
    stage = Usd.Stage.CreateInMemory()
    robot = UsdGeom.Xform.Define(stage, "/World/robot").GetPrim()
    UsdPhysics.ArticulationRootAPI.Apply(robot)
    parent = "/World/robot"
    for link in LINKS:
        parent = f"{parent}/{link}"
        UsdPhysics.RigidBodyAPI.Apply(UsdGeom.Xform.Define(stage, parent).GetPrim())
        for shape in ("collision_box", "collision_capsule"):
            geom = UsdGeom.Cube.Define(stage, f"{parent}/{shape}").GetPrim()
            UsdPhysics.CollisionAPI.Apply(geom)
    visual = UsdGeom.Sphere.Define(stage, "/World/robot/base/visual").GetPrim()
    assert not visual.HasAPI(UsdPhysics.CollisionAPI)
    return stage


def _instanced_stage() -> Usd.Stage:
    """A body with a collider inside a class prototype, referenced by an instanceable prim."""
    stage = Usd.Stage.CreateInMemory()
    stage.CreateClassPrim("/Prototypes")
    UsdGeom.Xform.Define(stage, "/Prototypes/Wheel")
    UsdPhysics.RigidBodyAPI.Apply(UsdGeom.Xform.Define(stage, "/Prototypes/Wheel/body").GetPrim())
    geom = UsdGeom.Cube.Define(stage, "/Prototypes/Wheel/body/collision").GetPrim()
    UsdPhysics.CollisionAPI.Apply(geom)
    local = UsdGeom.Cube.Define(stage, "/World/local_collider").GetPrim()
    UsdPhysics.CollisionAPI.Apply(local)
    UsdPhysics.RigidBodyAPI.Apply(local)
    instance = UsdGeom.Xform.Define(stage, "/World/wheel_0").GetPrim()
    instance.GetReferences().AddInternalReference("/Prototypes/Wheel")
    instance.SetInstanceable(True)
    return stage


def test_round_trip_on_nested_articulation_reports_stage_provenance():
    stage = _articulated_stage()
    assert apply_collision_offsets(stage, contact_offset=0.02, rest_offset=0.001) == 6
    assert apply_max_depenetration_velocity(stage, 5.0) == 3
    values = read_engine_solver_values(
        stage,
        include_contact_offset=True,
        include_rest_offset=True,
        include_max_depenetration_velocity=True,
    )
    assert values == {
        "contact_offset": {
            "value": pytest.approx(0.02, rel=1e-7),
            "source": "usd_stage",
            "prims": 6,
        },
        "rest_offset": {"value": pytest.approx(0.001, rel=1e-7), "source": "usd_stage", "prims": 6},
        "max_depenetration_velocity": {"value": 5.0, "source": "usd_stage", "prims": 3},
    }
    shin_shape = stage.GetPrimAtPath("/World/robot/base/thigh/shin/collision_box")
    assert "PhysxCollisionAPI" in shin_shape.GetAppliedSchemas()
    assert not stage.GetPrimAtPath("/World/robot/base/visual").HasAPI("PhysxCollisionAPI")


def test_read_includes_only_requested_fields():
    stage = _articulated_stage()
    apply_collision_offsets(stage, contact_offset=0.03)
    assert read_engine_solver_values(stage, include_contact_offset=True).keys() == {
        "contact_offset"
    }
    assert read_engine_solver_values(stage, include_contact_offset=False) == {}


def test_schema_applied_but_unauthored_fails_closed():
    stage = _articulated_stage()
    apply_collision_offsets(stage, contact_offset=0.02)  # applies PhysxCollisionAPI, no restOffset
    shape = stage.GetPrimAtPath("/World/robot/base/collision_box")
    assert shape.GetAttribute("physxCollision:restOffset").Get() is not None  # schema default
    with pytest.raises(ValueError, match=r"restOffset has no authored value on 6 of 6"):
        read_engine_solver_values(stage, include_contact_offset=True, include_rest_offset=True)


def test_partially_authored_fails_closed_naming_the_prim():
    stage = _articulated_stage()
    apply_max_depenetration_velocity(stage, 3.0)
    stage.GetPrimAtPath("/World/robot/base/thigh").GetAttribute(
        "physxRigidBody:maxDepenetrationVelocity"
    ).Clear()
    with pytest.raises(ValueError, match=r"1 of 3 .*: /World/robot/base/thigh$"):
        read_engine_solver_values(
            stage, include_contact_offset=False, include_max_depenetration_velocity=True
        )


def test_non_uniform_values_fail_closed_naming_values_and_prims():
    stage = _articulated_stage()
    apply_collision_offsets(stage, contact_offset=0.02)
    odd = stage.GetPrimAtPath("/World/robot/base/thigh/collision_capsule")
    odd.GetAttribute("physxCollision:contactOffset").Set(0.05)
    with pytest.raises(ValueError, match="not uniform") as info:
        read_engine_solver_values(stage, include_contact_offset=True)
    assert "/World/robot/base/thigh/collision_capsule" in str(info.value)
    assert "0.05" in str(info.value)


def test_no_colliders_fails_closed():
    stage = Usd.Stage.CreateInMemory()
    UsdGeom.Xform.Define(stage, "/World")
    with pytest.raises(ValueError, match="no prim with UsdPhysics.CollisionAPI"):
        apply_collision_offsets(stage, contact_offset=0.02)
    with pytest.raises(ValueError, match="no UsdPhysics.CollisionAPI prim"):
        read_engine_solver_values(stage, include_contact_offset=True)


def test_instance_proxy_collider_fails_closed_before_authoring():
    stage = _instanced_stage()
    proxy = stage.GetPrimAtPath("/World/wheel_0/body/collision")
    assert proxy.IsInstanceProxy() and proxy.HasAPI(UsdPhysics.CollisionAPI)
    with pytest.raises(ValueError, match=r"instance proxies\): /World/wheel_0/body/collision;"):
        apply_collision_offsets(stage, contact_offset=0.02)
    with pytest.raises(ValueError, match=r"instance proxies\): /World/wheel_0/body;"):
        apply_max_depenetration_velocity(stage, 2.0)
    # Nothing was authored on the regular prims either.
    local = stage.GetPrimAtPath("/World/local_collider")
    assert not local.HasAPI("PhysxCollisionAPI") and not local.HasAPI("PhysxRigidBodyAPI")


def test_read_counts_instance_proxies_as_unauthored():
    stage = _instanced_stage()
    local = stage.GetPrimAtPath("/World/local_collider")
    local.CreateAttribute("physxCollision:contactOffset", Sdf.ValueTypeNames.Float).Set(0.02)
    with pytest.raises(ValueError, match=r"1 of 2 .*: /World/wheel_0/body/collision"):
        read_engine_solver_values(stage, include_contact_offset=True)


def test_values_are_validated_before_touching_the_stage():
    stage = _articulated_stage()
    with pytest.raises(ValueError, match="rest_offset must be < contact_offset"):
        apply_collision_offsets(stage, contact_offset=0.01, rest_offset=0.02)
    with pytest.raises(ValueError, match="rest_offset requires contact_offset"):
        apply_collision_offsets(stage, rest_offset=0.0)
    with pytest.raises(ValueError, match="needs contact_offset and/or rest_offset"):
        apply_collision_offsets(stage)
    with pytest.raises(ValueError, match="max_depenetration_velocity must be a finite number > 0"):
        apply_max_depenetration_velocity(stage, 0.0)
    with pytest.raises(ValueError, match="must be set"):
        apply_max_depenetration_velocity(stage, None)
    shape = stage.GetPrimAtPath("/World/robot/base/collision_box")
    assert not shape.HasAPI("PhysxCollisionAPI")


def test_late_schema_registration_fails_closed_with_a_hint():
    """In a fresh interpreter, using USD's schema registry before importing physx_usd_schemas
    leaves the PhysX types unknown; the helper must say so instead of failing inside USD."""
    script = (
        "from pxr import Usd, UsdGeom, UsdPhysics\n"
        "stage = Usd.Stage.CreateInMemory()\n"
        "UsdPhysics.CollisionAPI.Apply(UsdGeom.Cube.Define(stage, '/c').GetPrim())\n"
        "from unisim_core.contract.errors import OptionalDependencyError\n"
        "from unisim_isaacsim._usd_helpers import apply_collision_offsets\n"
        "try:\n"
        "    apply_collision_offsets(stage, contact_offset=0.02)\n"
        "except OptionalDependencyError as exc:\n"
        "    print(exc)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    assert "'import physx_usd_schemas' must run before" in done.stdout
