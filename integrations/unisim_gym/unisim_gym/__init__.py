"""gymnasium and rsl_rl adapters over any UniSim backend, and a quadruped velocity-tracking task.

``import unisim_gym`` needs gymnasium only; ``RslRlVecEnv``, ``ppo_runner_cfg`` and ``load_policy``
import torch and rsl-rl-lib on first access (the ``rsl_rl`` extra) and raise ``OptionalDependencyError``
naming it otherwise.
"""

from ._evaluate import VelocityEvaluation, evaluate_velocity_policy
from ._locomotion import DEFAULT_REWARD_WEIGHTS, OBSERVATION_LAYOUT, VelocityTrackingCfg, VelocityTrackingTask
from ._task import StepResult, Task
from ._vector_env import UniSimVectorEnv

__all__ = ["UniSimVectorEnv", "Task", "StepResult", "VelocityTrackingCfg", "VelocityTrackingTask",
           "VelocityEvaluation", "evaluate_velocity_policy", "DEFAULT_REWARD_WEIGHTS", "OBSERVATION_LAYOUT",
           "RslRlVecEnv", "ppo_runner_cfg", "load_policy"]
__version__ = "0.1.0"


def __getattr__(name: str):
    if name in ("RslRlVecEnv", "ppo_runner_cfg", "load_policy"):
        from . import _rsl_rl

        return getattr(_rsl_rl, name)
    raise AttributeError(f"module 'unisim_gym' has no attribute {name!r}")
