"""The conformance kit on Newton (warp's CPU device)."""

from __future__ import annotations

from unisim_conformance.runner import run_kit


def test_kit_passes_on_newton_on_the_cpu():
    """Newton (SolverMuJoCo) on warp's CPU device: every layer on every kit scene, no expected failures."""
    outcomes = run_kit("--unisim-backend=newton", "--unisim-option", "device='cpu'", timeout=1500).assert_green()
    assert {v for k, v in outcomes.items() if k.startswith("coverage::scene_coverage[")} == {"passed"}
    assert "xfailed" not in outcomes.values()


def test_newton_parity_against_mujoco():
    """The kit's parity layer with CPU MuJoCo (float64) as reference: float32 Newton within its tiers."""
    outcomes = run_kit("--unisim-backend=newton", "--unisim-option", "device='cpu'",
                       "--unisim-reference=mujoco", "-m", "parity").assert_green()
    assert sum(v == "passed" for v in outcomes.values()) == 4
