"""The GPU acceptance script's paths that run without a GPU: the clear refusal when warp sees no
CUDA device, and its whole run (check and table) on warp's CPU device."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import warp as wp

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "gpu_acceptance.py"


@pytest.fixture(scope="module")
def acceptance():
    spec = importlib.util.spec_from_file_location("newton_gpu_acceptance", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(wp.get_cuda_device_count() > 0, reason="this machine has CUDA: the refusal path does not apply")
def test_exits_2_without_cuda(acceptance, capsys):
    assert acceptance.main([]) == 2
    assert "no CUDA device visible to warp" in capsys.readouterr().err


def test_cpu_run_checks_and_prints_the_table(acceptance, tmp_path, capsys):
    out = tmp_path / "report.json"
    rc = acceptance.main([str(out), "--device", "cpu", "--envs", "2", "--seconds", "0.05"])
    report = json.loads(out.read_text())
    text = capsys.readouterr().out
    assert rc == 0, report
    assert report["checks"]["stands_like_mujoco"]["verdict"] == "PASS"
    [row] = report["table"]
    assert row["num_envs"] == 2 and row["device"] == "cpu" and row["raw_ms"] > 0 and row["mujoco_ms"] > 0
    assert "raw/contract" in text and "PASSED" in text


@pytest.mark.gpu
@pytest.mark.skipif(wp.get_cuda_device_count() == 0, reason="needs a CUDA device (the GPU acceptance run itself)")
def test_gpu_acceptance_passes_on_cuda(acceptance, tmp_path):
    rc = acceptance.main([str(tmp_path / "report.json"), "--envs", "64", "256", "--seconds", "0.5"])
    assert rc == 0, json.loads((tmp_path / "report.json").read_text())
