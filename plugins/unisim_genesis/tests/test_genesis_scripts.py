"""The GPU acceptance script's paths that run without a GPU: the refusal when torch sees no CUDA
device, and its whole run (checks, table, report) on Genesis' CPU backend."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from genesis_testutil import require_genesis

require_genesis()

import torch  # noqa: E402

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "gpu_acceptance.py"


@pytest.fixture(scope="module")
def acceptance():
    spec = importlib.util.spec_from_file_location("genesis_gpu_acceptance", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA: the refusal path does not apply")
def test_exits_2_without_cuda(acceptance, capsys):
    assert acceptance.main([]) == 2
    assert "no CUDA device visible to torch" in capsys.readouterr().err


def test_cpu_run_checks_and_prints_the_table(acceptance, quadruped, tmp_path, capsys):
    out = tmp_path / "report.json"
    rc = acceptance.main([str(out), "--device", "cpu", "--envs", "3", "--seconds", "0.05"])
    report = json.loads(out.read_text())
    assert rc == 0, report
    assert report["checks"]["pd_stand"]["ok"] and report["checks"]["set_state_isolation"]["ok"]
    assert report["device"] == "cpu" and report["env_steps_per_s"] > 0
    assert "PASSED" in capsys.readouterr().out
