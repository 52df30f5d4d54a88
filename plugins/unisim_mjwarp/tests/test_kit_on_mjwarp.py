"""The conformance kit on MuJoCo Warp (warp's CPU device): one kit run, every layer with the parity
layer against CPU MuJoCo, read by the tests below (one process loads warp's kernels once)."""

from __future__ import annotations

import pytest

from unisim_conformance.runner import run_kit


@pytest.fixture(scope="module")
def outcomes():
    """MuJoCo Warp on warp's CPU device, CPU MuJoCo (float64) as parity reference. The slowest kit run
    here (~100 kernel launches per substep on a CPU: minutes on 2 busy cores with a warm warp cache)."""
    return run_kit("--unisim-backend=mjwarp", "--unisim-option", "device='cpu'", "--unisim-reference=mujoco",
                   timeout=1500).assert_green()


def test_kit_passes_on_mjwarp_on_the_cpu(outcomes):
    """Every layer, no expected failures; the device arrays alias the engine state."""
    assert "xfailed" not in outcomes.values()
    assert outcomes["capabilities::declared_works[device_arrays-qpos_live]"] == "passed"
    assert {v for k, v in outcomes.items() if k.startswith("coverage::scene_coverage[")} == {"passed"}


def test_mjwarp_parity_against_mujoco(outcomes):
    """The parity layer: float32 MuJoCo Warp within its tiers on the four parity scenes."""
    assert [v for k, v in outcomes.items() if k.startswith("parity::")] == ["passed"] * 4
