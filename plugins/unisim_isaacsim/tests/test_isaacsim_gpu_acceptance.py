"""Runs scripts/gpu_acceptance.py where Isaac Sim and an NVIDIA GPU are present; skips elsewhere."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from isaacsim_testing import import_or_skip_outside_ci

from unisim_isaacsim._runtime import find_runtime

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "gpu_acceptance.py"
REASON = "needs Isaac Sim 5.1 (set UNISIM_ISAACSIM_PYTHON to its python.sh) and an NVIDIA RTX GPU"


def _script():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpu_acceptance", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = script  # its dataclass resolves its annotations there
    spec.loader.exec_module(script)
    return script


def _gpu_present() -> bool:
    smi = shutil.which("nvidia-smi")
    return smi is not None and subprocess.run([smi, "-L"], capture_output=True).returncode == 0


@pytest.mark.gpu
@pytest.mark.skipif(find_runtime() is None or not _gpu_present(), reason=REASON)
def test_gpu_acceptance(tmp_path):
    report_path = tmp_path / "isaacsim_acceptance.json"
    proc = subprocess.run([sys.executable, str(SCRIPT), str(report_path)], capture_output=True, text=True,
                          timeout=330)
    report = json.loads(report_path.read_text())
    assert proc.returncode == 0 and report["ok"], json.dumps(report, indent=2)[-4000:] + proc.stderr[-2000:]
    assert report["timings_s"]["total"] < 300


def test_script_reports_a_missing_runtime(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("UNISIM_ISAACSIM_PYTHON", raising=False)
    monkeypatch.delenv("UNISIM_ISAACSIM_HOME", raising=False)
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, str(SCRIPT), str(out)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "Isaac Sim runtime not found" in json.loads(out.read_text())["skipped"]


def test_script_checks_run_end_to_end_on_the_test_double_worker(monkeypatch, tmp_path):
    """Every step of the acceptance run, against the SDK-free test double (real worker subprocess)."""
    from isaacsim_testing.host import LocalWorkerHost

    from unisim_isaacsim._runtime import HOME_ENV, PYTHON_ENV

    import_or_skip_outside_ci("unisim_mujoco", "the parity step runs MuJoCo (pip install -e plugins/unisim_mujoco)")

    class FakeIsaac(LocalWorkerHost):
        worker_module = "isaacsim_testing.fake_isaac_worker"

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv(HOME_ENV, raising=False)
    monkeypatch.setenv(PYTHON_ENV, sys.executable)
    script = _script()
    # 0.3 s of parity: the stand-in falls 0.44 m in it (below the floor), MuJoCo's quadruped stands
    report = script.run(4, "cpu", backend_cls=FakeIsaac, horizons=script.Horizons(parity=60, arm=5, terrain=5,
                                                                                   settle=2, lift=3))
    checks = report["checks"]
    # FakeBackend is not PhysX, and the double declares none of the worker's computed capabilities
    dynamics = {"stands_like_mujoco", "arm_holds_like_mujoco", "contact_forces_declared", "capabilities_declared",
                "terrain_ball_rests_on_the_field_like_mujoco", "mocap_declared"}
    machinery = {k: v for k, v in checks.items() if isinstance(v, bool) and k not in dynamics}
    assert checks["terrain_declared"] and checks["height_scan_matches_mujoco"]  # computed in the host
    assert machinery and all(machinery.values()), checks
    assert checks["frame_shape"] == [240, 320, 3]
    assert set(checks["readback_sources"]) == set(script.PHYSX)
    parity = report["parity_vs_mujoco"]
    assert set(parity["max_dev"]) == {"base_pos", "base_quat", "dof_pos", "dof_vel", "qpos"}
    assert parity["base_height_end_m"]["mujoco"] > 0.2  # MuJoCo's quadruped stands
    # FakeBackend has no contacts: the stand-in falls through the floor, and the check says so
    assert parity["base_height_end_m"]["isaacsim"] < 0.0 and checks["stands_like_mujoco"] is False
    assert report["ok"] is False
    assert checks["arm_fixed_base"] and checks["arm_mount_still"] and checks["turned_root_quat_roundtrip"]
    assert set(report["fixed_base"]["max_dev"]) >= {"dof_pos", "qpos"}
    json.dumps(report)  # the report is plain JSON


@pytest.mark.parametrize("lab", [2, 3])
def test_script_runs_on_the_real_worker_over_the_sdk_stubs(monkeypatch, tmp_path, lab):
    """The whole acceptance run with the real worker.py on the SDK stubs (kinematic stub physics: the
    dynamics checks and the frame's content are not judged; the generation check is): a few steps of
    each part."""
    from isaacsim_testing import USD_EXTRA
    from isaacsim_testing.stub_sdk import LAB_ENV
    from isaacsim_testing.stub_sdk_run import StubSdkIsaacSim

    from unisim_isaacsim._runtime import HOME_ENV, PYTHON_ENV

    import_or_skip_outside_ci("unisim_mujoco", "the parity step runs MuJoCo (pip install -e plugins/unisim_mujoco)")
    import_or_skip_outside_ci("physx_usd_schemas", USD_EXTRA)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv(HOME_ENV, raising=False)
    monkeypatch.setenv(PYTHON_ENV, sys.executable)
    monkeypatch.setenv(LAB_ENV, str(lab))
    script = _script()
    report = script.run(2, "cuda:0", backend_cls=StubSdkIsaacSim, expect_isaaclab=lab,
                        horizons=script.Horizons(parity=5, arm=5, terrain=5, settle=2, lift=3))
    checks = report["checks"]
    physics = {"stands_like_mujoco", "arm_holds_like_mujoco", "frame_nonblank", "step_finite_and_moves",
               "feet_carry_the_weight"}  # the stub's contact model rests box colliders only
    physics |= {k for k in checks if k.endswith("_like_mujoco") or k.endswith("match_mujoco")
                or k.endswith("matches_mujoco")}  # the stub's kinematics is not MuJoCo's (no gravity, no joints)
    judged = {k: v for k, v in checks.items() if isinstance(v, bool) and k not in physics}
    assert checks["contact_forces_declared"] and len(report["feet_contact_fz_n"]) == 2
    assert judged and all(judged.values()), checks
    assert checks["isaaclab_generation"] and checks["arm_fixed_base"]
    # every capability cell ran on the real worker (its physics judged on a GPU only)
    assert checks["capabilities_declared"] and checks["physics_snapshot_restores_reads"]
    assert {"body_force_flight_like_mujoco", "body_torque_flight_like_mujoco", "push_flight_like_mujoco",
            "site_jacobian_matches_mujoco", "sensors_kinematic_match_mujoco",
            "init_randomization_mass_and_gravity_flight_like_mujoco", "init_randomization_reads_back"} <= set(checks)
    # the height field: the worker built the scene with its mesh; the host's scan and spawn data are MuJoCo's
    assert checks["terrain_declared"] and checks["height_scan_matches_mujoco"]
    assert checks["terrain_spawn_data_matches_mujoco"] and "terrain_ball_rests_on_the_field_like_mujoco" in checks
    # the mocap platform: poses, filtered forces and torques judged; the lift's dynamics on a GPU only
    assert checks["mocap_declared"] and checks["contact_filters_declared"] and checks["contact_torques_declared"]
    assert checks["mocap_per_env_write_reads_back"] and checks["mocap_holds_the_written_pose"]
    assert checks["contact_torques_resting_box_about_its_com"]
    assert {"contact_filters_box_on_platform_like_mujoco", "contact_torques_platform_like_mujoco",
            "mocap_platform_lifts_the_box_like_mujoco"} <= set(checks)
