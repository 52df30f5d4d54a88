"""The conformance kit on MuJoCo, in process and in a worker process (``pytest plugins/unisim_mujoco``
runs it with the kit's session guards)."""

from __future__ import annotations

from unisim_conformance.runner import run_kit


def test_kit_passes_on_mujoco_with_no_expected_failures():
    outcomes = run_kit("--unisim-backend=mujoco").assert_green()
    assert "xfailed" not in outcomes.values()
    assert outcomes["capabilities::declared_works[height_scan-heights]"] == "passed"


def test_kit_passes_on_mujoco_in_a_worker_process():
    run_kit("--unisim-backend=mujoco", "--unisim-option", "isolation=subprocess").assert_green()
