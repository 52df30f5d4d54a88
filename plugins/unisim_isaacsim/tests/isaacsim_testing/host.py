"""The Isaac Sim host for worker modules of this test tree (not in the wheel).

The worker runs this interpreter with this process's environment (the venv has every package: the
production launch's package folder, :class:`~unisim_isaacsim._launch.WorkerPath`, is not used; its
``PYTHONPATH`` gains the directory that holds :mod:`isaacsim_testing`) and, when its module serves
several INITs (``factory.reusable``), the core's worker pool hands it the next backend of the same
environment (``UNISIM_WORKER_POOL``): the tests pay for one interpreter and its imports per pool rather
than per backend.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from unisim_core.plugin.worker.backend import WorkerLaunch
from unisim_isaacsim._backend import IsaacSimBackend
from unisim_isaacsim._launch import FALLBACK_ENV

__all__ = ["TESTS_DIR", "LocalWorkerHost"]

#: ``plugins/unisim_isaacsim/tests``: the import root of :mod:`isaacsim_testing`.
TESTS_DIR = Path(__file__).resolve().parents[1]


class LocalWorkerHost(IsaacSimBackend):
    """:class:`IsaacSimBackend` whose ``worker_module`` (set by a subclass) is importable from :data:`TESTS_DIR`."""

    #: Variables that differ between tests without changing the worker (pytest's current test id, a test's
    #: HOME): left out of the worker's environment, which keys the pool.
    VOLATILE_ENV = ("PYTEST_CURRENT_TEST", "HOME", FALLBACK_ENV)

    def _worker_launch(self, options: Mapping[str, Any]) -> WorkerLaunch:
        launch = super()._worker_launch(options)
        env = {k: v for k, v in os.environ.items() if k not in self.VOLATILE_ENV}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH", ""), str(TESTS_DIR)) if p)
        return attrs.evolve(launch, env=env, reuse=True)
