"""Fixtures of the unisim-mjwarp tests: real MuJoCo Warp on warp's CPU device, few worlds.

Kernels compile once per machine (warp's cache); backends are small so a warm run stays short.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from mjwarp_testutil import QUADRUPED

from unisim_conformance import scene_path
from unisim_core import SceneCfg
from unisim_mjwarp import MjwarpBackend


@pytest.fixture
def make():
    """``make(scene, num_envs=2, sim_dt=0.002, **options)``: a CPU backend, closed after the test.

    ``scene`` is a kit scene name or a path."""
    made = []

    def factory(scene, num_envs=2, sim_dt=0.002, **options):
        path = scene if Path(str(scene)).suffix == ".xml" else scene_path(scene)
        options.setdefault("device", "cpu")
        options.setdefault("np_dtype", np.float64)
        sim = MjwarpBackend(SceneCfg(str(path)), num_envs, sim_dt, **options)
        made.append(sim)
        return sim

    yield factory
    for sim in made:
        sim.close()


@pytest.fixture(scope="session")
def quadruped():
    """One 4-world quadruped on the CPU for the read-mostly tests (reset it before use)."""
    sim = MjwarpBackend(SceneCfg(str(QUADRUPED)), 4, 0.005, device="cpu", np_dtype=np.float64)
    yield sim
    sim.close()
