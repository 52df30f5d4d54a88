"""Test support for the Isaac Sim backend without Isaac Sim (test tree only, not in the wheel): the protocol test double
(``fake_isaac_worker``), the SDK stubs that run the real worker (``stub_sdk``, ``stub_sdk_run``)."""

from __future__ import annotations

import os
from types import ModuleType

__all__ = ["USD_EXTRA", "import_or_skip_outside_ci"]

#: How to install what the stage tests and the SDK stubs need.
USD_EXTRA = "pip install 'unisim-isaacsim[usd]' (usd-core, physx-usd-schemas)"


def import_or_skip_outside_ci(module: str, install: str) -> ModuleType:
    """Import ``module`` for a test module; outside CI a missing one skips it (saying ``install``).

    CI (``CI`` set) installs every such package, so there a missing one is an ``ImportError``
    that fails collection instead of silently skipping the module's tests.
    """
    import importlib

    import pytest

    if os.environ.get("CI"):
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=f"needs {module}: {install}")
