"""Fixtures of the unisim-newton tests: real Newton on warp's CPU device, few worlds.

Kernels compile once per machine (warp's cache); backends are small so a warm run stays short.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from newton_testutil import QUADRUPED

from unisim_conformance import scene_path
from unisim_core import SceneCfg
from unisim_newton import NewtonBackend


@pytest.fixture
def make():
    """``make(scene, num_envs=2, sim_dt=0.002, **options)``: a CPU backend, closed after the test.

    ``scene`` is a kit scene name or a path."""
    made = []

    def factory(scene, num_envs=2, sim_dt=0.002, **options):
        path = scene if Path(str(scene)).suffix == ".xml" else scene_path(scene)
        options.setdefault("device", "cpu")
        options.setdefault("np_dtype", np.float64)
        sim = NewtonBackend(SceneCfg(str(path)), num_envs, sim_dt, **options)
        made.append(sim)
        return sim

    yield factory
    for sim in made:
        sim.close()


@pytest.fixture(scope="session")
def quadruped():
    """One 2-world quadruped on the CPU (home keyframe) for the read-mostly tests (reset it before use)."""
    sim = NewtonBackend(SceneCfg(str(QUADRUPED), default_keyframe="home"), 2, 0.002, device="cpu",
                        np_dtype=np.float64)
    yield sim
    sim.close()
