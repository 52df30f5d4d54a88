"""Discovery of the Isaac Sim runtime the worker process runs in.

Resolution order, first match wins, and an explicitly set variable never falls back:

1. ``UNISIM_ISAACSIM_PYTHON``: the Isaac Sim interpreter launcher (e.g. ``<home>/python.sh``).
2. ``UNISIM_ISAACSIM_HOME``: the installation root; its ``python.sh`` is the interpreter.
3. Default roots, each needing an executable ``python.sh``: ``~/isaacsim``, ``/isaac-sim``,
   then ``~/.local/share/ov/pkg/isaac-sim-*`` (highest version first).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

import attrs

from unisim_core.contract.errors import OptionalDependencyError

PYTHON_ENV = "UNISIM_ISAACSIM_PYTHON"
HOME_ENV = "UNISIM_ISAACSIM_HOME"
LAUNCHER = "python.sh"


@attrs.frozen
class RuntimeInfo:
    """A discovered Isaac Sim runtime: its interpreter, its root (when known) and how found."""

    python: Path
    home: Path | None
    source: str  # PYTHON_ENV, HOME_ENV or "default"


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _version_key(path: Path) -> list[tuple[int, int | str]]:
    """Natural sort key so ``isaac-sim-4.10.0`` ranks above ``isaac-sim-4.9.0``."""
    return [(0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", path.name)]


def default_homes(environ: Mapping[str, str] = os.environ) -> list[Path]:
    """Default installation roots in search order; ``~`` is ``environ['HOME']`` when set."""
    user_home = Path(environ["HOME"]) if environ.get("HOME") else Path.home()
    ov_pkgs = sorted(
        (user_home / ".local/share/ov/pkg").glob("isaac-sim-*"), key=_version_key, reverse=True
    )
    return [user_home / "isaacsim", Path("/isaac-sim"), *ov_pkgs]


def _discover(environ: Mapping[str, str]) -> tuple[RuntimeInfo | None, str]:
    """The runtime and ``""``, or ``None`` and why nothing was found."""
    python_var = environ.get(PYTHON_ENV, "")
    home_var = environ.get(HOME_ENV, "")
    home = Path(home_var).expanduser() if home_var else None
    if home is not None and not home.is_dir():
        return None, f"{HOME_ENV}={home_var!r} is not a directory"
    if python_var:
        python = Path(python_var).expanduser()
        if not _is_executable(python):
            return None, f"{PYTHON_ENV}={python_var!r} is not an executable file"
        return RuntimeInfo(python=python, home=home, source=PYTHON_ENV), ""
    if home is not None:
        if not _is_executable(home / LAUNCHER):
            return None, f"{HOME_ENV}={home_var!r} has no executable {LAUNCHER}"
        return RuntimeInfo(python=home / LAUNCHER, home=home, source=HOME_ENV), ""
    for candidate in default_homes(environ):
        if _is_executable(candidate / LAUNCHER):
            return RuntimeInfo(python=candidate / LAUNCHER, home=candidate, source="default"), ""
    searched = ", ".join(str(c) for c in default_homes(environ))
    return None, f"neither {PYTHON_ENV} nor {HOME_ENV} is set; no {LAUNCHER} in {searched}"


def find_runtime(environ: Mapping[str, str] = os.environ) -> RuntimeInfo | None:
    """Return the Isaac Sim runtime, or ``None`` when none is found (never raises)."""
    return _discover(environ)[0]


def require_runtime(environ: Mapping[str, str] = os.environ) -> RuntimeInfo:
    """Return the Isaac Sim runtime or raise ``OptionalDependencyError`` with a setup hint."""
    runtime, reason = _discover(environ)
    if runtime is not None:
        return runtime
    raise OptionalDependencyError(
        f"Isaac Sim runtime not found: {reason}. Set {PYTHON_ENV} to the Isaac Sim "
        f"interpreter (e.g. <isaac-sim>/{LAUNCHER}) or {HOME_ENV} to the installation root."
    )
