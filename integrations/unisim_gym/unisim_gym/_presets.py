"""Ready-made task configs: the Go1 torque robot on generated rough terrain (docs/tasks.md builds it step by step)."""

from __future__ import annotations

from typing import Any

import attrs

from ._locomotion import VelocityTrackingCfg
from ._observations import NoiseCfg, ObsTermCfg
from ._robot import GO1
from ._terrain import FlatCfg, RandomRoughCfg, SlopeCfg, StairsCfg, TerrainGeneratorCfg

__all__ = ["GO1_OBSERVATIONS", "GO1_TERRAIN", "go1_rough_cfg"]

#: Isaac Lab's velocity-task noise (uniform, additive) on the proprioceptive terms.
GO1_OBSERVATIONS = (
    ObsTermCfg(name="base_lin_vel_b", noise=NoiseCfg(additive=0.1)),
    ObsTermCfg(name="base_ang_vel_b", noise=NoiseCfg(additive=0.2)),
    ObsTermCfg(name="projected_gravity", noise=NoiseCfg(additive=0.05)),
    ObsTermCfg(name="command"),
    ObsTermCfg(name="dof_pos_rel", noise=NoiseCfg(additive=0.01)),
    ObsTermCfg(name="dof_vel", noise=NoiseCfg(additive=1.5)),
    ObsTermCfg(name="last_action"),
)

#: Six levels of 6 m x 6 m sub-terrains a blind quadruped can learn on: flat, random rough
#: (1-5 cm), slopes up and down (0-25 %), stairs up and down (2-10 cm risers).
GO1_TERRAIN = TerrainGeneratorCfg(
    sub_terrains={"flat": FlatCfg(proportion=0.15), "random_rough": RandomRoughCfg(proportion=0.35,
                                                                                    noise_range=(0.01, 0.05)),
                  "slope_up": SlopeCfg(proportion=0.15, slope_range=(0.0, 0.25)),
                  "slope_down": SlopeCfg(proportion=0.15, slope_range=(0.0, 0.25), inverted=True),
                  "stairs_up": StairsCfg(proportion=0.1, step_height_range=(0.02, 0.10)),
                  "stairs_down": StairsCfg(proportion=0.1, step_height_range=(0.02, 0.10), inverted=True)},
    size=(6.0, 6.0), num_rows=6, num_cols=6, horizontal_scale=0.1, border_width=2.0, seed=0)


def go1_rough_cfg(**overrides: Any) -> VelocityTrackingCfg:
    """Go1 (torque motors, DC motor model, 0-2 substeps of target delay) on ``GO1_TERRAIN`` with
    observation noise, friction/mass randomization and pushes, 50 Hz control (0.005 s x 4),
    20 s episodes, contacts from geometry (the same on every engine); ``overrides`` replace fields
    (``randomize=False`` for evaluation)."""
    cfg = VelocityTrackingCfg(
        robot=GO1, observations=GO1_OBSERVATIONS, terrain=GO1_TERRAIN, sim_dt=0.005, decimation=4,
        episode_length_s=20.0, lin_vel_x=(-1.0, 1.0), lin_vel_y=(-0.5, 0.5), ang_vel_z=(-1.0, 1.0),
        base_mass_add=(-1.0, 2.0), contact_sensing=False, feet_air_time_threshold=0.2,
        reward_weights={"track_lin_vel_xy": 1.5, "track_ang_vel_z": 0.75, "lin_vel_z": -1.0, "orientation": -0.5,
                        "torques": -2e-5, "feet_air_time": 0.25, "termination": -1.0})
    return attrs.evolve(cfg, **overrides)
