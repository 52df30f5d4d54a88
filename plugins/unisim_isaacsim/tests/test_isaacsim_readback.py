"""Strict readback verification against forged, missing, extra and mismatched reports."""

from __future__ import annotations

import numpy as np
import pytest
from isaacsim_testing.fake_isaac_worker import fake_readback

from unisim_isaacsim._physx_solver import PhysxSolverConfig
from unisim_isaacsim._readback import SolverReadbackError, verify_solver_readback

CFG = PhysxSolverConfig(solver_position_iteration_count=8, solver_velocity_iteration_count=2,
                        bounce_threshold_velocity=0.3, contact_offset=0.02, rest_offset=0.001,
                        max_depenetration_velocity=5.0, gpu_max_rigid_contact_count=2**20,
                        gpu_max_rigid_patch_count=2**18)


def honest(n=4):
    return fake_readback(CFG.to_payload(), n)


def check(report, n=4, cfg=CFG):
    return verify_solver_readback(cfg, report, num_envs=n)


def test_honest_report_with_float32_storage_passes():
    report = honest()
    assert report["contact_offset"]["value"] != 0.02  # float32-rounded, still accepted
    assert check(report) == report


def test_empty_request_accepts_only_an_empty_report():
    assert verify_solver_readback(PhysxSolverConfig(), {}, num_envs=2) == {}
    with pytest.raises(SolverReadbackError, match="not requested"):
        verify_solver_readback(PhysxSolverConfig(), {"contact_offset": {}}, num_envs=2)


@pytest.mark.parametrize("field", CFG.configured_fields())
def test_every_missing_field_fails_naming_it(field):
    report = honest()
    del report[field]
    with pytest.raises(SolverReadbackError, match=f"'{field}'.*did not report"):
        check(report)


@pytest.mark.parametrize("field", CFG.configured_fields())
def test_every_mismatched_field_fails_naming_it(field):
    report = honest()
    v = report[field]["value"]
    report[field]["value"] = v + 1 if isinstance(v, int) else float(np.nextafter(np.float32(v), np.float32(1e9)))
    with pytest.raises(SolverReadbackError, match=f"'{field}'.*requested"):
        check(report)


def test_extra_field_fails():
    cfg = PhysxSolverConfig(contact_offset=0.02)
    report = fake_readback(cfg.to_payload(), 4)
    report["bounce_threshold_velocity"] = {"value": 0.3, "source": "usd_stage", "prims": 1}
    with pytest.raises(SolverReadbackError, match="bounce_threshold_velocity.*not requested"):
        check(report, cfg=cfg)


@pytest.mark.parametrize("mutate, match", [
    (lambda e: e.update(source="engine"), "unknown source 'engine'"),
    (lambda e: e.pop("source"), "unknown source None"),
    (lambda e: e.update(source="physx_view"), "stage read labelled as an engine read"),  # keeps "prims"
    (lambda e: e.update(source="carb_setting_authored"), "unknown source 'carb_setting_authored'"),
    (lambda e: e.update(prims=0), "at least one authored prim"),
    (lambda e: e.update(note="trust me"), "unexpected key"),
    (lambda e: e.update(value=None), "requested"),
    (lambda e: e.update(value=True), "requested"),
    (lambda e: e.update(value="5.0"), "requested"),
])
def test_forged_stage_entries_fail(mutate, match):
    report = honest()
    mutate(report["max_depenetration_velocity"])
    with pytest.raises(SolverReadbackError, match=match):
        check(report)


def test_view_read_must_cover_every_env_row():
    report = honest(n=4)
    with pytest.raises(SolverReadbackError, match="all 8 env rows"):
        check(report, n=8)
    report["contact_offset"]["rows"] = True
    with pytest.raises(SolverReadbackError, match="rows=True"):
        check(report)


def test_gpu_capacities_cannot_claim_an_engine_read():
    """PhysX tensor views have no getter for the scene's GPU buffer capacities."""
    report = honest()
    report["gpu_max_rigid_patch_count"] = {"value": 2**18, "source": "physx_view", "rows": 4}
    with pytest.raises(SolverReadbackError, match="gpu_max_rigid_patch_count.*not a valid provenance"):
        check(report)


def test_non_dict_reports_fail_closed():
    with pytest.raises(SolverReadbackError, match="must be a dict"):
        check(None)
    report = honest()
    report["contact_offset"] = 0.02
    with pytest.raises(SolverReadbackError, match="expected an entry dict"):
        check(report)
