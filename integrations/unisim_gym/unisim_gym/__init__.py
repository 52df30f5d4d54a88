"""gymnasium, Stable-Baselines3, rsl_rl and torch adapters over any UniSim backend, and the tasks
written once against the contract (quadruped velocity tracking, gymnasium's ``Ant-v5``).

``import unisim_gym`` needs gymnasium only, and registers the gymnasium ids ``UniSim/Ant-v0``,
``UniSim/Ant-v1`` (with Ant-v5's contact terms) and ``UniSim/QuadrupedVelocity-v0``
(``gymnasium.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point", backend=...)``).
``SB3VecEnv`` imports stable-baselines3 on first access (the ``sb3`` extra); ``TorchVecEnv``,
``RslRlVecEnv``, ``ppo_runner_cfg`` and ``load_policy`` import torch (and rsl-rl-lib) on first
access (the ``rslrl`` extra); each raises ``OptionalDependencyError`` naming its extra otherwise.
``evaluate_sim2sim`` (``unisim eval``) imports torch only for a TorchScript policy, onnxruntime only
for an ONNX one; ``export_policy`` imports torch when called.
"""

from ._ant import ANT_XML, AntCfg, AntTask
from ._evaluate import VelocityEvaluation, evaluate_velocity_policy
from ._export import export_policy, manifest_for_task
from ._locomotion import (
    DEFAULT_OBSERVATIONS,
    DEFAULT_REWARD_WEIGHTS,
    OBSERVATION_LAYOUT,
    OBSERVATION_TERMS,
    VelocityTrackingCfg,
    VelocityTrackingTask,
)
from ._observations import NoiseCfg, ObservationManager, ObsTermCfg
from ._presets import GO1_OBSERVATIONS, GO1_TERRAIN, go1_rough_cfg
from ._registry import ANT_CONTACT_ID, ANT_ID, QUADRUPED_ID, register
from ._robot import GO1, GO1_XML, QUADRUPED, RobotCfg, build_scene
from ._sim2sim import evaluate_sim2sim, load_policy_file
from ._task import StepResult, Task
from ._terrain import (
    ROUGH_TERRAINS,
    FlatCfg,
    GeneratedTerrain,
    RandomRoughCfg,
    SlopeCfg,
    StairsCfg,
    SteppingStonesCfg,
    SubTerrainCfg,
    TerrainCurriculum,
    TerrainGeneratorCfg,
    generate_terrain,
)
from ._vector_env import UniSimVectorEnv

__all__ = ["UniSimVectorEnv", "Task", "StepResult", "VelocityTrackingCfg", "VelocityTrackingTask",
           "VelocityEvaluation", "evaluate_velocity_policy", "DEFAULT_REWARD_WEIGHTS", "OBSERVATION_LAYOUT",
           "DEFAULT_OBSERVATIONS", "OBSERVATION_TERMS", "NoiseCfg", "ObsTermCfg", "ObservationManager",
           "RobotCfg", "QUADRUPED", "go1_rough_cfg", "GO1_OBSERVATIONS", "GO1_TERRAIN", "GO1", "GO1_XML", "build_scene",
           "TerrainGeneratorCfg", "SubTerrainCfg", "FlatCfg", "RandomRoughCfg", "SlopeCfg", "StairsCfg",
           "SteppingStonesCfg", "ROUGH_TERRAINS", "GeneratedTerrain", "generate_terrain", "TerrainCurriculum",
           "AntCfg", "AntTask", "ANT_XML", "ANT_ID", "ANT_CONTACT_ID", "QUADRUPED_ID",
           "SB3VecEnv", "TorchVecEnv", "RslRlVecEnv", "ppo_runner_cfg", "load_policy",
           "evaluate_sim2sim", "load_policy_file", "export_policy", "manifest_for_task"]
__version__ = "0.1.0"

register()

_LAZY = {"SB3VecEnv": "_sb3", "TorchVecEnv": "_torch", "RslRlVecEnv": "_rsl_rl", "ppo_runner_cfg": "_rsl_rl",
         "load_policy": "_rsl_rl"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'unisim_gym' has no attribute {name!r}")
