"""Contact sensing and mocap bodies on Isaac Sim: the USD helper that gives every rigid body
PhysxContactReportAPI (a usd-core stage), and the REAL worker's ContactSensor mapping, rigid contact
views and kinematic mocap bodies driven through the real host on the SDK stubs (a worker subprocess;
the stub's contact model: statics of boxes at rest, see ``stub_sdk.engine.resting_contacts``). The
PhysX side (real forces, points and normals, env row order of the views, kinematic targets) needs
Isaac Sim on a GPU: scripts/gpu_acceptance.py."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from isaacsim_testing import USD_EXTRA, import_or_skip_outside_ci

import_or_skip_outside_ci("physx_usd_schemas", USD_EXTRA)


def _stage():
    from pxr import Usd, UsdGeom, UsdPhysics

    stage = Usd.Stage.CreateInMemory()
    for name in ("a", "b"):
        prim = UsdGeom.Xform.Define(stage, f"/R/top/{name}").GetPrim()
        UsdPhysics.RigidBodyAPI.Apply(prim)
        UsdPhysics.CollisionAPI.Apply(UsdGeom.Cube.Define(stage, f"/R/top/{name}/geom").GetPrim())
    UsdPhysics.CollisionAPI.Apply(UsdGeom.Cube.Define(stage, "/R/worldBody/floor").GetPrim())  # static
    return stage


def test_contact_report_api_goes_on_every_rigid_body_with_threshold_zero():
    from unisim_isaacsim._usd_helpers import apply_contact_report

    stage = _stage()
    assert apply_contact_report(stage) == ["/R/top/a", "/R/top/b"]
    for path in ("/R/top/a", "/R/top/b"):
        prim = stage.GetPrimAtPath(path)
        assert "PhysxContactReportAPI" in prim.GetAppliedSchemas()
        assert prim.GetAttribute("physxContactReport:threshold").Get() == 0.0
    floor = stage.GetPrimAtPath("/R/worldBody/floor")
    assert "PhysxContactReportAPI" not in floor.GetAppliedSchemas()  # colliders without a body: not sensed


def test_contact_report_on_a_body_under_an_instanceable_reference_fails_closed():
    from pxr import Usd, UsdGeom, UsdPhysics

    from unisim_isaacsim._usd_helpers import apply_contact_report

    stage = Usd.Stage.CreateInMemory()
    UsdPhysics.RigidBodyAPI.Apply(UsdGeom.Xform.Define(stage, "/proto/body").GetPrim())
    holder = stage.DefinePrim("/R/holder")
    holder.GetReferences().AddInternalReference("/proto")
    holder.SetInstanceable(True)
    with pytest.raises(ValueError, match="instance proxies.*/R/holder/body"):
        apply_contact_report(stage)


PLATFORM = str(Path(__file__).with_name("models") / "box_on_platform.xml")
M, G = 1.0, 9.81  # the box's mass (kg), gravity (m/s^2)
PLATFORM_Z = 0.15  # the mocap platform's model height (m)


@pytest.fixture(scope="module", params=[(2, "cuda:0"), (3, "cpu")], ids=["isaaclab2-gpu", "isaaclab3-cpu"])
def platform(request):
    """models/box_on_platform.xml in 2 envs (distinct env origins) on the SDK stubs, one worker per Isaac Lab
    generation (the GPU pipeline's staged writes on one, the CPU pipeline on the other)."""
    from isaacsim_testing.stub_sdk import LAB_ENV
    from isaacsim_testing.stub_sdk_run import StubSdkIsaacSim

    from unisim_core import SceneCfg
    from unisim_isaacsim._runtime import PYTHON_ENV

    lab, device = request.param
    saved = {k: os.environ.get(k) for k in (LAB_ENV, PYTHON_ENV)}
    os.environ[LAB_ENV], os.environ[PYTHON_ENV] = str(lab), sys.executable
    try:
        b = StubSdkIsaacSim(SceneCfg(PLATFORM), 2, 0.005, device=device, init_timeout_s=120.0, call_timeout_s=60.0)
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    yield b
    b.close()


def _rest(b, platform_z=(PLATFORM_Z, PLATFORM_Z)):
    """The box at its model pose (its bottom face at z = 0.2) and the platform at ``platform_z`` per env,
    after one step (a reset env reads no contact until it is stepped)."""
    mocap = b.bind_mocap_pose("platform")
    mocap.set(np.array([[0.0, 0.0, z] for z in platform_z]), np.tile([1.0, 0, 0, 0], (2, 1)))
    b.set_state(np.arange(2), np.tile(b.get_default_qpos(), (2, 1)), np.zeros((2, b.nv)))
    b.step(np.zeros((2, 0)), 2)
    return mocap


def test_declares_contact_filters_torques_and_mocap(platform):
    caps = {c.value for c in platform.capabilities}
    assert {"contact_forces", "contact_filters", "contact_torques", "mocap"} <= caps


def test_mocap_pose_reads_back_per_env_and_moves_by_the_next_step(platform):
    """The kit's mocap semantics (capabilities::declared_works[mocap]): the model pose at first, a write
    per env read back at once (position, wxyz quaternion, get_body_pos_w), the other env untouched; the
    kinematic body is where it was written after the step that moved it there."""
    b = platform
    mocap = _rest(b)
    pos, quat = mocap.get()
    np.testing.assert_allclose(pos, [[0, 0, PLATFORM_Z]] * 2, atol=1e-6)
    np.testing.assert_allclose(quat, [[1, 0, 0, 0]] * 2, atol=1e-6)
    q = np.array([[np.cos(0.3), 0, 0, np.sin(0.3)]])
    mocap.set(np.array([[1.0, 2.0, 3.0]]), q, env_ids=np.array([1]))
    pos, quat = mocap.get()
    np.testing.assert_allclose(pos, [[0, 0, PLATFORM_Z], [1, 2, 3]], atol=1e-6)
    np.testing.assert_allclose(quat[1], q[0], atol=1e-6)
    pid = b.get_body_ids(["platform"])
    np.testing.assert_allclose(b.get_body_pos_w(pid)[:, 0], [[0, 0, PLATFORM_Z], [1, 2, 3]], atol=1e-6)
    np.testing.assert_allclose(b.get_body_quat_w(pid)[1, 0], q[0], atol=1e-6)
    np.testing.assert_array_equal(b.get_body_lin_vel_w(pid), 0.0)  # at rest, as MuJoCo reports a mocap body
    b.step(np.zeros((2, 0)), 3)
    np.testing.assert_allclose(b.get_body_pos_w(pid)[:, 0], [[0, 0, PLATFORM_Z], [1, 2, 3]], atol=1e-6)
    # a wrench on a mocap body moves nothing (no dofs; MuJoCo's xfrc_applied neither)
    b.apply_body_force(pid, np.ones((2, 1, 3)))
    b.step(np.zeros((2, 0)), 1)
    np.testing.assert_allclose(b.get_body_pos_w(pid)[:, 0], [[0, 0, PLATFORM_Z], [1, 2, 3]], atol=1e-6)


def test_net_forces_and_forces_against_chosen_bodies(platform):
    """Statics of the stub's contact model: env 0's box rests on the platform (+m g on the box from it,
    nothing from the world, -m g on the platform from the box); env 1's platform is 5 cm lower, the box
    in the air reads 0. The robot body's unfiltered force comes from the ContactSensor, every other
    binding from PhysX's rigid contact views; a body bound by id reads what it reads bound by name."""
    b = platform
    _rest(b, platform_z=(PLATFORM_Z, PLATFORM_Z - 0.05))
    mg = [0.0, 0.0, M * G]
    box = b.bind_contact_forces(["box"])
    on_box = b.bind_contact_forces(["box"], against=["platform"])
    from_world = b.bind_contact_forces(["box"], against=["world"])
    on_platform = b.bind_contact_forces(["platform"], against=["box"])
    platform_net = b.bind_contact_forces(["platform"])
    both = b.bind_contact_forces(b.get_body_ids(["box", "platform"]), against=[0, 1, 2])
    b.step(np.zeros((2, 0)), 1)
    np.testing.assert_allclose(box.read()[:, 0], [mg, [0, 0, 0]], atol=1e-5)
    np.testing.assert_allclose(on_box.read()[:, 0], [mg, [0, 0, 0]], atol=1e-5)
    np.testing.assert_allclose(from_world.read()[:, 0], 0.0, atol=1e-6)
    np.testing.assert_allclose(on_platform.read()[:, 0], [np.negative(mg), [0, 0, 0]], atol=1e-5)
    np.testing.assert_array_equal(platform_net.read(), on_platform.read())
    np.testing.assert_allclose(both.read(), np.stack([box.read()[:, 0], platform_net.read()[:, 0]], axis=1),
                               atol=1e-5)
    assert box.in_contact()[:, 0].tolist() == [True, False]


def test_torques_about_each_bodys_centre_of_mass(platform):
    """The contact forces on the box pass below its centre of mass (3 cm off its centre along x): their
    moment about it is 0, while about its frame origin it would be (0, -0.03 m g, 0). Their reaction on
    the platform acts 0.05 m above its centre and 0.03 m along x: (0, +0.03 m g, 0) about its COM. The
    envs' origins differ: the moments are taken in each env's frame."""
    b = platform
    _rest(b)
    tau = b.bind_contact_forces(["box", "platform"], torques=True)
    filtered = b.bind_contact_forces(["platform"], against=["box"], torques=True)
    b.step(np.zeros((2, 0)), 1)
    np.testing.assert_allclose(tau.read(), [[[0, 0, M * G], [0, 0, -M * G]]] * 2, atol=1e-5)
    np.testing.assert_allclose(tau.read_torque(), [[[0, 0, 0], [0, 0.03 * M * G, 0]]] * 2, atol=1e-5)
    np.testing.assert_allclose(filtered.read_torque()[:, 0], [[0, 0.03 * M * G, 0]] * 2, atol=1e-5)
    b.set_state(np.array([1]), b.get_default_qpos()[None], np.zeros((1, b.nv)))
    np.testing.assert_array_equal(tau.read_torque()[1], 0.0)  # a reset env reads nothing until stepped
