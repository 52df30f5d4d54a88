"""Fixtures of the unisim-mujoco tests (real MuJoCo everywhere)."""

from __future__ import annotations

import numpy as np
import pytest

from unisim_core import SceneCfg
from unisim_mujoco import MujocoBackend


@pytest.fixture
def make():
    """``make(path, num_envs=1, sim_dt=None, **options)`` -> backend, closed after the test."""
    made = []

    def factory(path, num_envs=1, sim_dt=0.002, scene_kwargs=None, **options):
        options.setdefault("np_dtype", np.float64)
        options.setdefault("threads", 2)
        sim = MujocoBackend(SceneCfg(str(path), **(scene_kwargs or {})), num_envs, sim_dt, **options)
        made.append(sim)
        return sim

    yield factory
    for sim in made:
        sim.close()

