"""Scene paths and helpers of the unisim-mujoco tests (a uniquely named module, importable from any rootdir)."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest

import unisim_core

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


def home_ctrl(sim) -> np.ndarray:
    return np.tile(sim.get_keyframe_qpos("home")[7:], (sim.num_envs, 1))


def reference(path: str | Path, sim_dt: float) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """Raw MuJoCo built from the file itself, never from the backend's compiled model (so a loader bug
    is not shared by both sides): ``from_xml_path`` with the contract's time step, and fresh data."""
    m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.timestep = sim_dt
    return m, mujoco.MjData(m)
