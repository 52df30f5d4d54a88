"""SDK STUBS that let the real Isaac Sim worker (:mod:`unisim_isaacsim.worker`) execute without Isaac Sim.

``packages/`` holds fake ``isaaclab``, ``isaaclab_physx``, ``isaacsim``, ``omni`` and ``torch``
packages; :func:`install` puts it first on ``sys.path`` (only the harness calls it, in the worker
process: :mod:`isaacsim_testing.stub_sdk_worker`). ``pxr`` is the real OpenUSD
(``usd-core`` + ``physx-usd-schemas``). The stubs mirror the signatures the worker calls and
enforce the preconditions readable in the sources of Isaac Lab 2.3.2 (``isaaclab==2.3.2.post1``,
extension 0.54.2), Isaac Lab 3.0.0 and Isaac Sim 5.1; each rule cites its upstream file. The
physics is a STUB (:mod:`.engine`): joints move kinematically toward their targets, nothing
collides; it proves that every line of the worker runs and that the preconditions hold, never
that PhysX agrees with MuJoCo (that is the GPU acceptance run's job).

``UNISIM_STUB_ISAACLAB`` (``2`` or ``3``) selects the Isaac Lab generation the stubs mimic;
``UNISIM_STUB_FAIL_EXTENSIONS`` (comma-separated) names Kit extensions that refuse to enable.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["LAB_ENV", "FAIL_EXT_ENV", "PACKAGES", "install", "lab_major"]

LAB_ENV = "UNISIM_STUB_ISAACLAB"
FAIL_EXT_ENV = "UNISIM_STUB_FAIL_EXTENSIONS"
PACKAGES = Path(__file__).resolve().parent / "packages"


def lab_major() -> int:
    """The Isaac Lab generation the stubs mimic (``UNISIM_STUB_ISAACLAB``, default 2)."""
    value = os.environ.get(LAB_ENV, "2")
    if value not in ("2", "3"):
        raise ValueError(f"{LAB_ENV}: expected '2' or '3', got {value!r}")
    return int(value)


def install() -> None:
    """Put the stub packages first on ``sys.path`` (before any real ``torch``); call before importing them."""
    clash = [m for m in ("torch", "isaaclab", "isaacsim", "omni") if m in sys.modules]
    if clash:
        raise RuntimeError(f"install the SDK stubs before importing {clash}")
    lab_major()
    sys.path.insert(0, str(PACKAGES))
