"""The conformance kit on Newton (warp's CPU device): one kit run, every layer with the parity layer
against CPU MuJoCo, read by the tests below (one process loads warp's kernels once)."""

from __future__ import annotations

import pytest

from unisim_conformance.runner import run_kit


@pytest.fixture(scope="module")
def outcomes():
    """Newton (SolverMuJoCo) on warp's CPU device, CPU MuJoCo (float64) as parity reference."""
    return run_kit("--unisim-backend=newton", "--unisim-option", "device='cpu'", "--unisim-reference=mujoco",
                   timeout=1800).assert_green()


def test_kit_passes_on_newton_on_the_cpu(outcomes):
    """Every layer on every kit scene, no expected failures."""
    assert {v for k, v in outcomes.items() if k.startswith("coverage::scene_coverage[")} == {"passed"}
    assert "xfailed" not in outcomes.values()


def test_newton_parity_against_mujoco(outcomes):
    """The parity layer: float32 Newton within its tiers on the four parity scenes."""
    assert [v for k, v in outcomes.items() if k.startswith("parity::")] == ["passed"] * 4
