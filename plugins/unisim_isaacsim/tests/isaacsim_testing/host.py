"""The Isaac Sim host for worker modules of this test tree (not in the wheel): the worker's
``PYTHONPATH`` gains the directory that holds :mod:`isaacsim_testing`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from unisim_core.worker.backend import WorkerLaunch
from unisim_isaacsim._backend import IsaacSimBackend

__all__ = ["TESTS_DIR", "LocalWorkerHost"]

#: ``plugins/unisim_isaacsim/tests``: the import root of :mod:`isaacsim_testing`.
TESTS_DIR = Path(__file__).resolve().parents[1]


class LocalWorkerHost(IsaacSimBackend):
    """:class:`IsaacSimBackend` whose ``worker_module`` (set by a subclass) is importable from :data:`TESTS_DIR`."""

    def _worker_launch(self, options: Mapping[str, Any]) -> WorkerLaunch:
        launch = super()._worker_launch(options)
        env = dict(launch.env if launch.env is not None else os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH", ""), str(TESTS_DIR)) if p)
        return attrs.evolve(launch, env=env)
