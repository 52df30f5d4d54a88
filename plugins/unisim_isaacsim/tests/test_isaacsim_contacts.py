"""Contact sensing on Isaac Sim: the USD helper that gives every rigid body PhysxContactReportAPI
(a usd-core stage), and the REAL worker's ContactSensor mapping driven through the real host on the
SDK stubs (a worker subprocess; the stub's contact model: m g on a body resting on the ground, 0
otherwise). The PhysX side (real ContactSensor forces, env row order of its view) needs Isaac Sim
on a GPU: scripts/gpu_acceptance.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from isaacsim_testing import USD_EXTRA, import_or_skip_outside_ci

from unisim_conformance import scene_path

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


@pytest.mark.parametrize("lab", [2, 3])
def test_worker_maps_contact_forces_onto_the_contact_sensor(lab, monkeypatch):
    """box_on_plane (1 kg) in 3 envs: envs 0 and 2 resting read (0, 0, m g), env 1 lifted reads 0;
    contact state follows; a filtered binding is refused (contact_filters is not declared), and so is
    one with torques (contact_torques); a body bound by id reads what it reads bound by name."""
    import sys

    from isaacsim_testing.stub_sdk import LAB_ENV
    from isaacsim_testing.stub_sdk_run import StubSdkIsaacSim

    from unisim_core import SceneCfg, UnsupportedCapabilityError
    from unisim_isaacsim._runtime import PYTHON_ENV

    monkeypatch.setenv(LAB_ENV, str(lab))
    monkeypatch.setenv(PYTHON_ENV, sys.executable)
    b = StubSdkIsaacSim(SceneCfg(str(scene_path("box_on_plane"))), 3, 0.005, device="cpu", init_timeout_s=120.0,
                        call_timeout_s=60.0)
    try:
        assert "contact_forces" in {c.value for c in b.capabilities}
        assert "contact_filters" not in {c.value for c in b.capabilities}
        c = b.bind_contact_forces(["box"])
        qpos = np.tile(b.get_default_qpos(), (3, 1))
        qpos[:, 2] = [0.1, 0.5, 0.1]
        b.set_state(np.arange(3), qpos, np.zeros((3, b.nv)))
        b.step(np.zeros((3, 0)), 2)
        np.testing.assert_allclose(c.read()[:, 0], [[0, 0, 9.81], [0, 0, 0], [0, 0, 9.81]], atol=1e-5)
        assert c.in_contact()[:, 0].tolist() == [True, False, True]
        with pytest.raises(UnsupportedCapabilityError, match="contact_filters"):
            b.bind_contact_forces(["box"], against=["world"])
        # net forces without points (ContactSensor's net_forces_w): no torques, refused by name
        assert "contact_torques" not in {c.value for c in b.capabilities}
        with pytest.raises(UnsupportedCapabilityError, match="contact_torques"):
            b.bind_contact_forces(["box"], torques=True)
        np.testing.assert_array_equal(b.bind_contact_forces(b.get_body_ids(["box"])).read(), c.read())  # by id
    finally:
        b.close()
    assert os.environ.get(LAB_ENV) == str(lab)


@pytest.mark.parametrize("lab", [2, 3])
def test_pre_fix_sensor_without_the_contact_report_api_fails_at_reset(lab):
    """The stub's Isaac Lab rule: a ContactSensor finds no bodies without PhysxContactReportAPI
    (RuntimeError naming activate_contact_sensors at sim.reset()); with apply_contact_report it
    senses the quadruped's 13 bodies."""
    from isaacsim_testing.stub_sdk import LAB_ENV

    from unisim_core.scenes import scene_path as core_scene

    proc = subprocess.run([sys.executable, str(Path(__file__).with_name("stub_scenarios.py")), "contact_report",
                           str(core_scene("quadruped"))], capture_output=True, text=True,
                          env={**os.environ, LAB_ENV: str(lab), "STUB_DEVICE": "cpu"}, timeout=120, check=True)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "activate_contact_sensors" in out["False"]["error"], out
    bodies = out["True"]["bodies"]
    assert len(bodies) == 13 and "base" in bodies and "FL_calf" in bodies, out
