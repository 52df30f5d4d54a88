"""The conformance kit on MotrixSim, and its parity against comparably configured MuJoCo."""

from __future__ import annotations

from pathlib import Path

from unisim_conformance.runner import run_kit

XFAIL = Path(__file__).resolve().parents[1] / "conformance_xfail.txt"


def test_kit_passes_on_motrix_with_its_listed_expected_failure():
    outcomes = run_kit("--unisim-backend=motrix", f"--unisim-xfail={XFAIL}").assert_green()
    assert outcomes["determinism::reset_reproduces_trajectory[qpos_trajectory]"] == "xfailed"


def test_motrix_parity_against_comparably_configured_mujoco():
    """Plain MuJoCo (the scenes' implicitfast integrator, explicit inertials, the same dt) as reference."""
    outcomes = run_kit("--unisim-backend=motrix", "--unisim-reference=mujoco", "-m", "parity").assert_green()
    assert sum(v == "passed" for v in outcomes.values()) == 4
