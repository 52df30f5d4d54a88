"""Shared fixtures: real MotrixSim, the portable scenes, and a raw-MuJoCo reference."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

from unisim_core import SceneCfg
from unisim_motrix import MotrixBackend, MotrixModellingWarning

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CONF = os.path.join(ROOT, "conformance", "unisim_conformance", "scenes")
CORE = os.path.join(ROOT, "unisim_core", "scenes")


def scene_path(name: str) -> str:
    for d in (CONF, CORE):
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    raise FileNotFoundError(name)


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


def home_state(b, n=None):
    n = b.num_envs if n is None else n
    return np.tile(b.get_default_qpos().astype(np.float64), (n, 1)), np.zeros((n, b.nv))
