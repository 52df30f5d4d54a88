"""Reference trajectories recorded from MuJoCo, shipped with the kit (``*.npz`` beside this file).

Each scenario is a few seconds of one kit scene, two envs with different initial states, under
scripted controls and velocity kicks. A file holds everything a backend needs to replay it and
everything it is compared on, so replaying needs no second engine:

- ``scene`` (name), ``sim_dt`` (s), ``substeps`` (substeps per sample), ``tier``;
- ``qpos0 (E, nq)``, ``qvel0 (E, nv)``: the state set at t = 0 (``set_state``);
- ``ctrl (S, E, nu)``: ctrl held over sample interval ``i`` (``step(ctrl[i], substeps)``);
- ``kick (S, E, nv)``: added to qvel before interval ``i`` (``set_state`` with the backend's own
  qpos and qvel + kick; zero rows are no kick);
- ``qpos``, ``qvel``, ``body_pos (S+1, E, nbody, 3)``, ``body_quat`` (wxyz), ``sensors
  (S+1, E, nsensordata)``: MuJoCo's state after each interval (index 0 = the initial state);
- ``body_names``, ``sensor_names``, ``sensor_dims`` (MJCF order, world excluded).

Regenerate with ``python -m unisim_conformance.reference.record`` (needs ``mujoco``); the
scenario definitions are in :mod:`unisim_conformance.reference.scenarios`.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import numpy as np

__all__ = ["REFERENCE_DIR", "TIERS", "Tier", "Trajectory", "load", "list_references"]

REFERENCE_DIR = Path(__file__).parent


@attrs.frozen
class Tier:
    """Tolerances of one tier (absolute): positions in m, joint angles in rad, velocities in m/s or
    rad/s, body orientations as rotation angle in rad; sensors relative to the sensor's range over
    the trajectory (``sensor_rel * max(1, range)``)."""

    name: str
    qpos: float
    qvel: float
    body_pos: float
    body_angle: float
    sensor_rel: float
    why: str


TIERS = {
    "tight": Tier("tight", qpos=5e-3, qvel=5e-2, body_pos=5e-3, body_angle=5e-3, sensor_rel=2e-2,
                  why="smooth dynamics without contacts: MotrixSim (float32) stays within 2e-4 rad of "
                      "MuJoCo; an explicit treatment of actuator damping (the analytic fake; MuJoCo's "
                      "implicitfast is implicit in it) drifts 2.3e-3 rad / 2.6e-2 rad/s after a kick"),
    "contact": Tier("contact", qpos=1e-2, qvel=5e-1, body_pos=1e-2, body_angle=2e-2, sensor_rel=2.5e-1,
                    why="contacts and friction constraints are solved differently per engine (soft vs "
                        "hard, warm starts): the same stance and motion within 1 cm / 0.02 rad (MotrixSim: "
                        "5.1e-3 rad, 2.5 mm); velocities spike at impacts (0.41 rad/s at a foot touchdown); "
                        "accelerometers are not compared in this tier"),
}


@attrs.frozen
class Trajectory:
    """One loaded reference file (see the module docstring for the arrays)."""

    name: str
    scene: str
    sim_dt: float
    substeps: int
    tier: Tier
    arrays: dict

    def __getitem__(self, key: str) -> np.ndarray:
        return self.arrays[key]


def list_references() -> list[str]:
    """Names of the shipped reference trajectories."""
    return sorted(p.stem for p in REFERENCE_DIR.glob("*.npz"))


def load(name: str) -> Trajectory:
    """Load ``<name>.npz`` (``KeyError`` listing the shipped names otherwise)."""
    path = REFERENCE_DIR / f"{name}.npz"
    if not path.is_file():
        raise KeyError(f"unknown reference trajectory {name!r}; shipped: {list_references()}")
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    meta = {k: arrays.pop(k).item() for k in ("scene", "sim_dt", "substeps", "tier")}
    return Trajectory(name, str(meta["scene"]), float(meta["sim_dt"]), int(meta["substeps"]),
                      TIERS[str(meta["tier"])], arrays)
