"""The conformance kit on the in-process engines and a worker process (MuJoCo, MotrixSim)."""

from __future__ import annotations

from kit_runs import MOTRIX_XFAIL, assert_green, run_kit


def test_kit_passes_on_mujoco_with_no_expected_failures():
    outcomes = assert_green(run_kit("--unisim-backend=mujoco"))
    assert "xfailed" not in outcomes.values()
    assert outcomes["capabilities::declared_works[height_scan-heights]"] == "passed"


def test_kit_passes_on_mujoco_in_a_worker_process():
    assert_green(run_kit("--unisim-backend=mujoco", "--unisim-option", "isolation=subprocess"))


def test_kit_passes_on_motrix_with_its_listed_expected_failure():
    outcomes = assert_green(run_kit("--unisim-backend=motrix", f"--unisim-xfail={MOTRIX_XFAIL}"))
    assert outcomes["determinism::reset_reproduces_trajectory[qpos_trajectory]"] == "xfailed"


def test_motrix_parity_against_comparably_configured_mujoco():
    """Plain MuJoCo (the scenes' implicitfast integrator, explicit inertials, the same dt) as reference."""
    run = run_kit("--unisim-backend=motrix", "--unisim-reference=mujoco", "-m", "parity")
    outcomes = assert_green(run)
    assert sum(v == "passed" for v in outcomes.values()) == 4
