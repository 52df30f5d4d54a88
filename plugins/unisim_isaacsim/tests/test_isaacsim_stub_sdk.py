"""The REAL worker.py executed against the SDK stubs (isaacsim_testing.stub_sdk), both Isaac Lab
generations, through the real host; and each stub rule shown to fail on the worker's pre-fix code path.

The stub physics is kinematic (see the stub_sdk docs): these tests check code paths and SDK
preconditions, not PhysX's dynamics.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from isaacsim_testing import USD_EXTRA, import_or_skip_outside_ci
from isaacsim_testing.stub_sdk import FAIL_EXT_ENV, LAB_ENV
from isaacsim_testing.stub_sdk_run import main, run

from unisim_core.scenes import scene_path

import_or_skip_outside_ci("physx_usd_schemas", USD_EXTRA)  # the stub stage is real USD

QUADRUPED = str(scene_path("quadruped"))
ARM = str(Path(__file__).resolve().parent / "models" / "welded_arm.xml")
SCENARIOS = Path(__file__).with_name("stub_scenarios.py")
ALL_FIELDS = dict(solver_position_iteration_count=8, solver_velocity_iteration_count=2,
                  bounce_threshold_velocity=0.3, contact_offset=0.02, rest_offset=0.001,
                  max_depenetration_velocity=5.0, gpu_max_rigid_contact_count=2**20, gpu_max_rigid_patch_count=2**18,
                  solver_type="PGS")


def _check(report: dict, lab: int, fixed_base: bool) -> None:
    assert report["init"] == "ok", report["init"]
    assert report["steps"] == 5 and report["qpos_finite"] and report["bodies_finite"]
    assert report["set_state_max_error"] < 1e-6
    assert report["fixed_base"] is fixed_base
    assert report["engine"]["native_quat_order"] == ("wxyz" if lab == 2 else "xyzw")
    assert report["engine"]["isaaclab_extension"] == ("0.54.2" if lab == 2 else "3.0.0")
    # PhysX's defaults (link damping 0.05, velocity caps, sleeping) replaced by MuJoCo's on every body
    assert report["engine"]["body_properties"] == {"linear_damping": 0.0, "angular_damping": 0.0,
                                                   "max_linear_velocity": 1e10, "max_angular_velocity": 1e10,
                                                   "sleep_threshold": 0.0}


@pytest.mark.parametrize("lab", [2, 3])
def test_quadruped_on_the_gpu_pipeline_with_every_solver_field_and_a_camera(lab):
    report = run(QUADRUPED, lab, device="cuda:0", enable_cameras=True, physx=ALL_FIELDS)
    _check(report, lab, fixed_base=False)
    assert report["frames"] == [[480, 640, 3], [48, 64, 3]]  # the default camera, then the re-created one


@pytest.mark.parametrize("lab", [2, 3])
def test_welded_arm_is_a_fixed_base_articulation_on_the_cpu_pipeline(lab):
    _check(run(ARM, lab, device="cpu", num_envs=2), lab, fixed_base=True)


@pytest.mark.parametrize(("name", "lab"), [("a.v2.xml", 2), ("go2-v1.xml", 3), ("2dof.xml", 2)])
def test_file_names_with_dots_dashes_or_a_leading_digit_import(tmp_path, name, lab):
    model = tmp_path / name
    shutil.copy(QUADRUPED, model)
    _check(run(str(model), lab, num_envs=1), lab, fixed_base=False)


def test_an_extension_that_does_not_enable_fails_init_naming_it(monkeypatch):
    monkeypatch.setenv(FAIL_EXT_ENV, "isaacsim.asset.importer.mjcf")
    report = run(QUADRUPED, 2, num_envs=1)
    assert "the Isaac Sim extension 'isaacsim.asset.importer.mjcf' did not enable" in report["init"]


def test_cli_prints_one_json_object(capsys):
    assert main([ARM, "--isaaclab", "3", "--num-envs", "1"]) == 0
    report = json.loads(capsys.readouterr().out)
    _check(report, 3, fixed_base=True)
    assert "stub" in report["stub"]


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    """``scenario(name, model, lab, device, fail_extension=False)``: its result. The scenarios of one Isaac Lab
    generation and extension rule run in one process (:data:`SCENARIOS`, each on a fresh stub stage), on
    first use."""
    models = tmp_path_factory.mktemp("models")
    for name in ("a.v2.xml", "go2-v1.xml"):
        shutil.copy(QUADRUPED, models / name)
    dotted, dashed = str(models / "a.v2.xml"), str(models / "go2-v1.xml")
    groups = {  # (lab, extension fails) -> [name, device, model]
        (2, False): [["init_qpos0", "cuda:0", QUADRUPED], ["converter_name", "cuda:0", dotted],
                     ["converter_name", "cuda:0", dashed], ["fixed_root", "cuda:0", ARM], ["refresh", "cuda:0", ARM],
                     ["refresh", "cpu", ARM], ["contact_report", "cpu", QUADRUPED]],
        (3, False): [["init_qpos0", "cuda:0", QUADRUPED], ["contact_report", "cpu", QUADRUPED]],
        (2, True): [["extension_ignored", "cuda:0", QUADRUPED]],
        (3, True): [["extension_ignored", "cuda:0", QUADRUPED]],
    }
    done: dict = {}

    def get(name: str, model: str, lab: int, device: str = "cuda:0", fail_extension: bool = False) -> dict:
        key = (lab, fail_extension)
        if key not in done:
            env = {**os.environ, LAB_ENV: str(lab)}
            if fail_extension:
                env[FAIL_EXT_ENV] = "isaacsim.asset.importer.mjcf"
            proc = subprocess.run([sys.executable, str(SCENARIOS), json.dumps(groups[key])], capture_output=True,
                                  text=True, env=env, timeout=300, check=True)
            done[key] = json.loads(proc.stdout.strip().splitlines()[-1])
        model = {"a.v2.xml": dotted, "go2-v1.xml": dashed}.get(model, model)
        return done[key][f"{name} {device} {model}"]

    return get


# -- the stubs' rules against the pre-fix code paths -------------------------------------------------
@pytest.mark.parametrize("lab", [2, 3])
def test_pre_fix_default_joint_positions_from_qpos0_fail_reset_like_validate_cfg(scenario, lab):
    out = scenario("init_qpos0", QUADRUPED, lab)
    assert out["error"].startswith("ValueError: The following joints have default positions out of the limits")
    assert "'FL_calf_joint': 0.000 not in [-2.700, -0.900]" in out["error"]


def test_pre_fix_converter_input_with_dots_or_dashes_fails_in_isaac_lab_2(scenario):
    for name, error in (("a.v2.xml", "ValueError: too many values to unpack (expected 2)"),
                        ("go2-v1.xml", "'/go2-v1' is not a valid prim path")):
        assert error in scenario("converter_name", name, 2)["error"]


def test_pre_fix_ignored_extension_result_surfaces_as_an_unrelated_error_later(scenario):
    assert scenario("extension_ignored", QUADRUPED, 2, fail_extension=True)["error"].startswith(
        "FileNotFoundError: USD file not found at path")
    assert scenario("extension_ignored", QUADRUPED, 3, fail_extension=True)["error"] == (
        "ModuleNotFoundError: No module named 'isaacsim.asset.importer.mjcf'")


def test_pre_fix_welded_root_is_floating_and_the_moved_root_is_fixed_base(scenario):
    out = scenario("fixed_root", ARM, 2)
    joints = ["elbow", "shoulder_pitch", "shoulder_yaw", "wrist"]
    assert out == {"False": {"fixed_base": False, "joints": joints}, "True": {"fixed_base": True, "joints": joints}}


def test_pre_fix_refresh_rereads_pre_write_joint_state_on_the_gpu_pipeline(scenario):
    out = scenario("refresh", ARM, 2, "cuda:0")
    assert out["prefix"] == pytest.approx(0.5)  # the write of 0.5 was lost: the pre-write state came back
    assert out["fixed"] < 1e-6
    cpu = scenario("refresh", ARM, 2, "cpu")
    assert cpu["prefix"] < 1e-6 and cpu["fixed"] < 1e-6  # on the CPU pipeline writes apply at once



def test_an_unactuated_joint_outside_its_range_at_qpos0_is_clipped_too(tmp_path):
    text = Path(ARM).read_text()
    text = text.replace('<position name="elbow_pos" joint="elbow" ctrlrange="0.2 2.5"/>', "")
    text = text[:text.index("<keyframe>")] + text[text.index("</keyframe>") + len("</keyframe>"):]
    model = tmp_path / "arm_no_elbow_actuator.xml"
    model.write_text(text)  # no keyframe: qpos0, elbow 0 outside [0.2, 2.5], no actuator on the elbow
    _check(run(str(model), 2, num_envs=1), 2, fixed_base=True)


@pytest.mark.parametrize("lab", [2, 3])
def test_pre_fix_sensor_without_the_contact_report_api_fails_at_reset(scenario, lab):
    """The stub's Isaac Lab rule: a ContactSensor finds no bodies without PhysxContactReportAPI
    (RuntimeError naming activate_contact_sensors at sim.reset()); with apply_contact_report it
    senses the quadruped's 13 bodies."""
    out = scenario("contact_report", QUADRUPED, lab, "cpu")
    assert "activate_contact_sensors" in out["False"]["error"], out
    bodies = out["True"]["bodies"]
    assert len(bodies) == 13 and "base" in bodies and "FL_calf" in bodies, out
