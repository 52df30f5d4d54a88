"""``RslRlVecEnv``: rsl-rl-lib's ``VecEnv`` interface over a :class:`UniSimVectorEnv` (torch tensors on ``device``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from unisim_core import OptionalDependencyError

try:
    import torch
    from rsl_rl.env import VecEnv
    from tensordict import TensorDict
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise OptionalDependencyError(
        f"unisim_gym.RslRlVecEnv needs torch and rsl-rl-lib ({exc.name} is missing): "
        "pip install 'unisim-gym[rslrl]'"
    ) from exc

from ._torch import TorchVecEnv
from ._vector_env import UniSimVectorEnv, check_same_step_env

__all__ = ["RslRlVecEnv", "ppo_runner_cfg", "load_policy"]


class RslRlVecEnv(VecEnv):
    """rsl_rl ``VecEnv`` view of a same-step :class:`UniSimVectorEnv`: same episodes, torch tensors on ``device``.

    - ``device``: where observations, rewards and dones live (default: the backend's, see
      :class:`TorchVecEnv`); pass the runner the same ``device`` (``rsl_rl``'s ``OnPolicyRunner(...,
      device=env.device)``). The conversions are :class:`TorchVecEnv`'s (``self.torch_env``).
    - Observations: ``TensorDict({"policy": (num_envs, obs_dim)})``; use ``obs_groups =
      {"actor": ["policy"], "critic": ["policy"]}`` in the runner config.
    - ``step`` returns ``dones = terminated | truncated`` and ``extras["time_outs"]`` (the truncated
      envs, which PPO bootstraps) and ``extras["log"]`` (mean of each weighted reward term, keys
      ``"/reward/<name>"``), as ``rsl_rl.env.VecEnv`` documents.
    - ``episode_length_buf`` reads ``env.episode_length`` (on the CPU it shares its memory);
      rsl_rl's ``init_at_random_ep_len`` writes it. Actions are clipped to the env's action space.
    """

    def __init__(self, env: UniSimVectorEnv, *, seed: int | None = None,
                 device: str | torch.device | None = None) -> None:
        check_same_step_env(env, "rsl_rl")
        self.env = env
        self.torch_env = TorchVecEnv(env, device=device)
        self.device = self.torch_env.device
        self.num_envs = env.num_envs
        self.num_actions = int(env.single_action_space.shape[0])
        self.max_episode_length = env.max_episode_steps
        self.cfg = getattr(env.task, "cfg", {})
        obs, _ = self.torch_env.reset(seed=seed)
        self._obs = self._wrap(obs)

    @property
    def episode_length_buf(self) -> torch.Tensor:
        """``(num_envs,)`` int64 control steps into each episode (``env.episode_length``, on ``device``)."""
        return torch.from_numpy(self.env.episode_length).to(self.device)

    @episode_length_buf.setter
    def episode_length_buf(self, value: torch.Tensor) -> None:
        self.env.episode_length[:] = np.asarray(value.cpu(), dtype=np.int64)

    def _wrap(self, obs: torch.Tensor) -> TensorDict:
        return TensorDict({"policy": obs}, batch_size=[self.num_envs], device=self.device)

    def get_observations(self) -> TensorDict:
        return self._obs

    def step(self, actions: torch.Tensor) -> tuple[TensorDict, torch.Tensor, torch.Tensor, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.torch_env.step(actions)
        self._obs = self._wrap(obs)
        extras = {"time_outs": truncated,
                  "log": {f"/reward/{k}": float(v.mean()) for k, v in info["reward_terms"].items()}}
        return self._obs, reward, terminated | truncated, extras

    def close(self) -> None:
        self.env.close()


def ppo_runner_cfg(*, num_steps_per_env: int = 24, hidden_dims: tuple[int, ...] = (128, 128, 128),
                   learning_rate: float = 1e-3, entropy_coef: float = 0.01) -> dict[str, Any]:
    """``OnPolicyRunner`` config (rsl-rl-lib 5.x layout) for the velocity task: PPO with an
    adaptive learning rate, ELU MLPs, empirical observation normalization and a Gaussian policy."""
    model = {"class_name": "rsl_rl.models.MLPModel", "hidden_dims": list(hidden_dims), "activation": "elu",
             "obs_normalization": True}
    return {
        "num_steps_per_env": num_steps_per_env,
        "save_interval": 10**9,
        "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
        "actor": {**model, "distribution_cfg": {"class_name": "rsl_rl.modules.distribution.GaussianDistribution",
                                                "init_std": 1.0}},
        "critic": dict(model),
        "algorithm": {"class_name": "rsl_rl.algorithms.PPO", "num_learning_epochs": 5, "num_mini_batches": 4,
                      "clip_param": 0.2, "gamma": 0.99, "lam": 0.95, "value_loss_coef": 1.0,
                      "entropy_coef": entropy_coef, "learning_rate": learning_rate, "max_grad_norm": 1.0,
                      "schedule": "adaptive", "desired_kl": 0.01},
    }


def load_policy(path: str | Path) -> Callable[[np.ndarray], np.ndarray]:
    """A TorchScript policy (as ``OnPolicyRunner.export_policy_to_jit`` writes it) as a numpy function
    ``obs (n, obs_dim) float32 -> actions (n, num_actions)``, on the CPU, one torch thread."""
    torch.set_num_threads(1)  # small MLPs: more threads only contend with the engine
    model = torch.jit.load(str(path), map_location="cpu").eval()

    def policy(obs: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return model(torch.from_numpy(obs)).numpy()

    return policy
