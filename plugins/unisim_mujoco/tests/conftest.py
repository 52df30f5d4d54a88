"""Shared scenes and factories for the unisim-mujoco tests (real MuJoCo everywhere)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import unisim_core
from unisim_core import SceneCfg

from unisim_mujoco import MujocoBackend

CORE_SCENES = Path(unisim_core.__file__).parent / "scenes"
try:
    import unisim_conformance

    KIT_SCENES = Path(unisim_conformance.__file__).parent / "scenes"
except ImportError:  # source checkout without the kit installed
    KIT_SCENES = Path(__file__).resolve().parents[3] / "conformance" / "unisim_conformance" / "scenes"

QUADRUPED = CORE_SCENES / "quadruped.xml"
QUADRUPED_HFIELD = CORE_SCENES / "quadruped_hfield.xml"


def kit(name: str) -> Path:
    path = KIT_SCENES / name
    if not path.is_file():
        pytest.skip(f"conformance scene {name} not found at {path}")
    return path


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


def home_ctrl(sim) -> np.ndarray:
    return np.tile(sim.get_keyframe_qpos("home")[7:], (sim.num_envs, 1))
