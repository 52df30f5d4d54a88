"""Runtime discovery against temp directories holding real executable launcher scripts."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from unisim_core.contract.errors import OptionalDependencyError
from unisim_isaacsim._runtime import (
    HOME_ENV,
    PYTHON_ENV,
    RuntimeInfo,
    default_homes,
    find_runtime,
    require_runtime,
)


def _launcher(root: Path, *, executable: bool = True) -> Path:
    """A real ``python.sh`` shell script under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    script = root / "python.sh"
    script.write_text('#!/bin/sh\necho "fake isaac-sim python $@"\n')
    script.chmod(0o755 if executable else 0o644)
    return script


@pytest.fixture
def user_home(tmp_path):
    home = tmp_path / "user"
    home.mkdir()
    return home


def test_python_variable_wins(tmp_path, user_home):
    python = _launcher(tmp_path / "custom")
    _launcher(user_home / "isaacsim")
    runtime = find_runtime({PYTHON_ENV: str(python), "HOME": str(user_home)})
    assert runtime == RuntimeInfo(python=python, home=None, source=PYTHON_ENV)
    done = subprocess.run([runtime.python, "-c", "x"], capture_output=True, text=True, check=True)
    assert done.stdout == "fake isaac-sim python -c x\n"


def test_python_variable_with_home(tmp_path, user_home):
    python = _launcher(tmp_path / "isaac")
    environ = {PYTHON_ENV: str(python), HOME_ENV: str(tmp_path / "isaac"), "HOME": str(user_home)}
    assert find_runtime(environ) == RuntimeInfo(python, tmp_path / "isaac", PYTHON_ENV)


def test_home_variable_uses_its_launcher(tmp_path, user_home):
    python = _launcher(tmp_path / "isaac")
    runtime = find_runtime({HOME_ENV: str(tmp_path / "isaac"), "HOME": str(user_home)})
    assert runtime == RuntimeInfo(python=python, home=tmp_path / "isaac", source=HOME_ENV)


@pytest.mark.parametrize(
    ("make_environ", "reason"),
    [
        (lambda t: {PYTHON_ENV: str(t / "missing.sh")}, f"{PYTHON_ENV}=.* is not an executable"),
        (
            lambda t: {PYTHON_ENV: str(_launcher(t / "noexec", executable=False))},
            f"{PYTHON_ENV}=.* is not an executable",
        ),
        (lambda t: {PYTHON_ENV: str(t)}, f"{PYTHON_ENV}=.* is not an executable"),
        (lambda t: {HOME_ENV: str(t / "nowhere")}, f"{HOME_ENV}=.* is not a directory"),
        (lambda t: {HOME_ENV: str(t)}, f"{HOME_ENV}=.* has no executable python.sh"),
    ],
)
def test_explicit_but_invalid_variable_never_falls_back(tmp_path, user_home, make_environ, reason):
    _launcher(user_home / "isaacsim")  # a valid default that must not be picked
    environ = {**make_environ(tmp_path), "HOME": str(user_home)}
    assert find_runtime(environ) is None
    with pytest.raises(OptionalDependencyError, match=reason):
        require_runtime(environ)


def test_default_home_candidate(user_home):
    python = _launcher(user_home / "isaacsim")
    runtime = find_runtime({"HOME": str(user_home)})
    assert runtime == RuntimeInfo(python=python, home=user_home / "isaacsim", source="default")


def test_default_candidates_order(user_home):
    pkg = user_home / ".local/share/ov/pkg"
    for version in ("isaac-sim-4.9.0", "isaac-sim-4.10.0", "isaac-sim-2023.1.1"):
        (pkg / version).mkdir(parents=True)
    assert default_homes({"HOME": str(user_home)}) == [
        user_home / "isaacsim",
        Path("/isaac-sim"),
        pkg / "isaac-sim-2023.1.1",
        pkg / "isaac-sim-4.10.0",
        pkg / "isaac-sim-4.9.0",
    ]


@pytest.mark.skipif(Path("/isaac-sim/python.sh").exists(), reason="a real /isaac-sim is present")
def test_omniverse_launcher_install_picks_highest_version(user_home):
    pkg = user_home / ".local/share/ov/pkg"
    _launcher(pkg / "isaac-sim-4.2.0")
    newest = _launcher(pkg / "isaac-sim-4.10.0")
    (pkg / "isaac-sim-5.0.0").mkdir()  # no launcher: skipped
    runtime = find_runtime({"HOME": str(user_home)})
    assert runtime == RuntimeInfo(python=newest, home=pkg / "isaac-sim-4.10.0", source="default")


@pytest.mark.skipif(Path("/isaac-sim/python.sh").exists(), reason="a real /isaac-sim is present")
def test_nothing_found_raises_with_setup_hint(user_home):
    environ = {"HOME": str(user_home)}
    assert find_runtime(environ) is None
    with pytest.raises(OptionalDependencyError) as info:
        require_runtime(environ)
    message = str(info.value)
    assert PYTHON_ENV in message and HOME_ENV in message
    assert str(user_home / "isaacsim") in message and "/isaac-sim" in message
    assert isinstance(info.value, ImportError)


def test_import_or_skip_outside_ci_fails_in_ci_and_skips_elsewhere(monkeypatch):
    from isaacsim_testing import import_or_skip_outside_ci

    monkeypatch.setenv("CI", "1")
    with pytest.raises(ImportError, match="no_such_module_for_unisim"):
        import_or_skip_outside_ci("no_such_module_for_unisim", "pip install nothing")
    assert import_or_skip_outside_ci("json", "stdlib").dumps([1]) == "[1]"
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="needs no_such_module_for_unisim: pip install nothing"):
        import_or_skip_outside_ci("no_such_module_for_unisim", "pip install nothing")
