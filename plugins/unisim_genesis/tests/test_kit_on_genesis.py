"""The conformance kit on Genesis (its CPU backend), every layer, in two kit runs of about equal
length (one per file, so that ``-n 2 --dist loadfile`` runs them side by side: Genesis builds a
scene in ~2 s of single-threaded Python per check): this file's run holds the trajectories against
MuJoCo's references, the parity layer against CPU MuJoCo, coverage, surface and bad input
(``genesis_testutil.KIT_HALF``); test_kit_on_genesis_dynamics.py the rest."""

from __future__ import annotations

import pytest
from genesis_testutil import KIT_HALF, require_genesis

from unisim_conformance.runner import run_kit

require_genesis()


@pytest.fixture(scope="module")
def outcomes():
    return run_kit("--unisim-backend=genesis", "--unisim-reference=mujoco", "-m", KIT_HALF,
                   timeout=1800).assert_green()


def test_kit_passes_on_genesis_on_the_cpu(outcomes):
    """Genesis on its CPU backend (float64), the kit's few envs: every scene loads (hfield_terrain's field
    as a terrain entity); the four measured reference deviations (one id per quantity) are strict xfails
    (docs/genesis.md)."""
    assert {v for k, v in outcomes.items() if k.startswith("coverage::scene_coverage[")} == {"passed"}
    assert sorted(k for k, v in outcomes.items() if v == "xfailed" and not k.startswith("parity::")) == [
        "reference::trajectory[quadruped-qpos]", "reference::trajectory[sensor_probe-body_pos]",
        "reference::trajectory[sensor_probe-qpos]", "reference::trajectory[sensor_probe-sensors]"]


def test_genesis_parity_against_mujoco(outcomes):
    """The parity layer with CPU MuJoCo as reference: three scenes within their tiers; the
    quadruped's measured abduction-joint creep (0.0143 rad > 0.01) is a declared deviation."""
    parity = {k: v for k, v in outcomes.items() if k.startswith("parity::")}
    assert sum(v == "passed" for v in parity.values()) == 3 and len(parity) == 4
    assert parity["parity::trajectory_parity[quadruped]"] == "xfailed"
