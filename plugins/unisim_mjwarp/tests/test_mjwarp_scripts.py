"""The GPU acceptance script's paths that run without a GPU: the clear refusal when warp sees no
CUDA device, and its whole run (checks and table) on warp's CPU device."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "gpu_acceptance.py"


@pytest.fixture(scope="module")
def acceptance():
    spec = importlib.util.spec_from_file_location("mjwarp_gpu_acceptance", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_exits_2_without_cuda():
    """With no CUDA device visible (hidden from the driver on a GPU machine) it says so and exits 2."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    run = subprocess.run([sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stderr[-2000:]
    assert "no CUDA device visible to warp: nothing to accept here" in run.stderr


def test_cpu_run_checks_and_prints_the_table(acceptance, tmp_path, capsys):
    out = tmp_path / "report.json"
    rc = acceptance.main([str(out), "--device", "cpu", "--envs", "2", "--seconds", "0.05"])
    report = json.loads(out.read_text())
    text = capsys.readouterr().out
    assert rc == 0, report
    capture = report["checks"]["graph_capture"]
    assert capture["ok"] and capture["graph"] and capture["max_qpos_dev"] < 1e-4, capture
    assert report["checks"]["device_arrays"]["dlpack_device"] == 1 and report["checks"]["device_arrays"]["live"]
    assert report["checks"]["parity_with_mujoco"]["verdict"] == "PASS"
    [row] = report["table"]
    assert row["num_envs"] == 2 and row["device"] == "cpu" and row["raw_ms"] > 0 and row["mujoco_ms"] > 0
    assert "raw/contract" in text and "PASSED" in text
