"""Acceptance: a fresh virtual environment with only unisim-contract installed."""

from __future__ import annotations

import subprocess
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_core_alone_lists_fake_and_imports_no_engine(tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    install = subprocess.run([str(py), "-m", "pip", "install", "--quiet", str(ROOT)], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-3000:]
    code = ("import sys, unisim_core; rows = unisim_core.list_backends();"
            "print([(r.name, r.status) for r in rows]);"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('mujoco', 'motrixsim', 'torch', 'ray', 'pxr', 'omni', 'isaacsim')))")
    out = subprocess.run([str(py), "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["[('fake', 'ok')]", "[]"]
    cli = subprocess.run([str(env_dir / "bin" / "unisim"), "backends"], capture_output=True, text=True, cwd=tmp_path)
    assert cli.returncode == 0, cli.stderr
    assert any(line.split()[:1] == ["fake"] and " ok " in f" {line} " for line in cli.stdout.splitlines())
