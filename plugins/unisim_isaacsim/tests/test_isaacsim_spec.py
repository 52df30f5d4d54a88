"""Registry and CLI: isaacsim is installed as a light plugin; its runtime may be missing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from unisim_core.contract import registry
from unisim_core.contract.errors import OptionalDependencyError
from unisim_isaacsim._runtime import HOME_ENV, PYTHON_ENV


@pytest.fixture
def no_runtime(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv(PYTHON_ENV, raising=False)
    monkeypatch.delenv(HOME_ENV, raising=False)
    registry.reset_registry()
    yield monkeypatch
    registry.reset_registry()


def test_listed_as_missing_dependency_with_the_hint(no_runtime):
    rec = {r.name: r for r in registry.list_backends()}["isaacsim"]
    assert rec.distribution == "unisim-isaacsim"
    assert rec.status == "missing_dependency"
    assert rec.reason.startswith("Isaac Sim runtime not found")
    assert PYTHON_ENV in rec.reason and HOME_ENV in rec.reason
    with pytest.raises(OptionalDependencyError, match="installed but cannot run"):
        registry.get_backend_class("isaacsim")
    diag = registry.plugin_diagnostics("isaacsim")
    assert diag["isaacsim runtime"] == "not found"


def test_listed_ok_once_a_runtime_is_found(no_runtime):
    no_runtime.setenv(PYTHON_ENV, sys.executable)
    registry.reset_registry()
    rec = {r.name: r for r in registry.list_backends()}["isaacsim"]
    assert rec.status == "ok", rec.reason
    from unisim_isaacsim._backend import IsaacSimBackend

    assert registry.get_backend_class("isaacsim") is IsaacSimBackend


def test_cli_backends_row(no_runtime):
    out = subprocess.run([sys.executable, "-m", "unisim_core.tools.cli", "backends"], capture_output=True, text=True,
                         check=True).stdout
    row = next(line for line in out.splitlines() if line.startswith("isaacsim"))
    assert "missing_dependency" in row and "Isaac Sim runtime not found" in row


def test_listing_imports_neither_the_backend_module_nor_an_sdk(no_runtime):
    code = ("import sys; from unisim_core import registry; registry.list_backends(); "
            "bad = ('unisim_isaacsim._backend', 'isaac', 'omni', 'pxr'); "
            "print(sorted(m for m in sys.modules if m.startswith(bad)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
