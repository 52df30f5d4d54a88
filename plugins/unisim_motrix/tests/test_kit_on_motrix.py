"""The conformance kit on MotrixSim: one kit run, every layer with the parity layer against
comparably configured MuJoCo, read by the tests below."""

from __future__ import annotations

import pytest

from unisim_conformance.runner import run_kit


@pytest.fixture(scope="module")
def outcomes():
    return run_kit("--unisim-backend=motrix", "--unisim-reference=mujoco", timeout=900).assert_green()


def test_kit_passes_on_motrix_with_its_declared_deviations(outcomes):
    assert outcomes["determinism::reset_reproduces_trajectory[qpos_trajectory]"] == "xfailed"


def test_motrix_parity_against_comparably_configured_mujoco(outcomes):
    """Plain MuJoCo (the scenes' implicitfast integrator, explicit inertials, the same dt) as reference."""
    assert [v for k, v in outcomes.items() if k.startswith("parity::")] == ["passed"] * 4
