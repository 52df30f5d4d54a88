"""Runs scripts/gpu_acceptance.py where Isaac Sim and an NVIDIA GPU are present; skips elsewhere."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from unisim_isaacsim.runtime import find_runtime

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "gpu_acceptance.py"
REASON = "needs Isaac Sim 5.1 (set UNISIM_ISAACSIM_PYTHON to its python.sh) and an NVIDIA RTX GPU"


def _gpu_present() -> bool:
    smi = shutil.which("nvidia-smi")
    return smi is not None and subprocess.run([smi, "-L"], capture_output=True).returncode == 0


@pytest.mark.skipif(find_runtime() is None or not _gpu_present(), reason=REASON)
def test_gpu_acceptance(tmp_path):
    report_path = tmp_path / "isaacsim_acceptance.json"
    proc = subprocess.run([sys.executable, str(SCRIPT), str(report_path)], capture_output=True, text=True,
                          timeout=330)
    report = json.loads(report_path.read_text())
    assert proc.returncode == 0 and report["ok"], json.dumps(report, indent=2)[-4000:] + proc.stderr[-2000:]
    assert report["timings_s"]["total"] < 300


def test_script_reports_a_missing_runtime(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("UNISIM_ISAACSIM_PYTHON", raising=False)
    monkeypatch.delenv("UNISIM_ISAACSIM_HOME", raising=False)
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, str(SCRIPT), str(out)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "Isaac Sim runtime not found" in json.loads(out.read_text())["skipped"]
