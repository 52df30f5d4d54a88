"""Shared fixtures: real MotrixSim, the portable scenes, and a raw-MuJoCo reference."""

from __future__ import annotations

import warnings

import pytest
from motrix_testutil import scene_path

from unisim_core import SceneCfg
from unisim_motrix import MotrixBackend, MotrixModellingWarning


@pytest.fixture
def make():
    made = []

    def _make(name: str, num_envs: int = 2, sim_dt: float | None = None, keyframe=None, **options):
        dt = sim_dt if sim_dt is not None else {"pendulum.xml": 0.001, "double_pendulum.xml": 0.001}.get(name, 0.002)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MotrixModellingWarning)
            b = MotrixBackend(SceneCfg(scene_path(name), default_keyframe=keyframe), num_envs, dt, **options)
        made.append(b)
        return b

    yield _make
    for b in made:
        b.close()
