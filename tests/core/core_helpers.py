"""Helpers shared by the core tests (a uniquely named module, imported by the tests)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from unisim_core.contract.config import SceneCfg
from unisim_core.plugin.fake import FakeBackend

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE = ROOT / "conformance" / "unisim_conformance" / "scenes"
SCENES = {p.stem: p for p in CONFORMANCE.glob("*.xml")}
SCENES["quadruped"] = ROOT / "unisim_core" / "scenes" / "quadruped.xml"
G = 9.81


def make(scene: str | Path, num_envs: int = 2, sim_dt: float = 0.002, **options) -> FakeBackend:
    """A float64 FakeBackend (exact comparisons) unless ``np_dtype`` is given."""
    options.setdefault("np_dtype", np.float64)
    path = SCENES[scene] if isinstance(scene, str) else scene
    return FakeBackend(SceneCfg(model_file=str(path)), num_envs, sim_dt, **options)


def write_scene(tmp_path: Path, body: str, name: str = "scene.xml") -> Path:
    """Write an MJCF file whose ``<mujoco>`` content is ``body``."""
    path = tmp_path / name
    path.write_text(f'<mujoco model="t">\n{body}\n</mujoco>\n')
    return path


def yaw90() -> np.ndarray:
    """wxyz quaternion of a 90 degree rotation about world z."""
    return np.array([np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)])
