"""The conformance kit on MuJoCo Warp (warp's CPU device)."""

from __future__ import annotations

from kit_runs import assert_green, run_kit


def test_kit_passes_on_mjwarp_on_the_cpu():
    """MuJoCo Warp on warp's CPU device: every layer, no expected failures; the device arrays
    alias the engine state. The slowest kit run here (~100 kernel launches per substep on a CPU:
    about 4-5 min on 2 busy cores with a warm warp cache)."""
    outcomes = assert_green(run_kit("--unisim-backend=mjwarp", "--unisim-option", "device='cpu'", timeout=1200))
    assert "xfailed" not in outcomes.values()
    assert outcomes["capabilities::declared_works[device_arrays-qpos_live]"] == "passed"
    assert {v for k, v in outcomes.items() if k.startswith("coverage::scene_coverage[")} == {"passed"}


def test_mjwarp_parity_against_mujoco():
    """The kit's parity layer with CPU MuJoCo (float64) as reference: float32 MuJoCo Warp within its tiers."""
    outcomes = assert_green(run_kit("--unisim-backend=mjwarp", "--unisim-option", "device='cpu'",
                                     "--unisim-reference=mujoco", "-m", "parity"))
    assert sum(v == "passed" for v in outcomes.values()) == 4
