"""``SB3VecEnv``: Stable-Baselines3's ``VecEnv`` over a :class:`UniSimVectorEnv` (numpy, no copies per env)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from unisim_core import InvalidInputError, OptionalDependencyError

try:
    from stable_baselines3.common.vec_env import VecEnv
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise OptionalDependencyError(
        f"unisim_gym.SB3VecEnv needs stable-baselines3 ({exc.name} is missing): pip install 'unisim-gym[sb3]'"
    ) from exc

from ._vector_env import UniSimVectorEnv, check_same_step_env

__all__ = ["SB3VecEnv"]


class SB3VecEnv(VecEnv):
    """Stable-Baselines3 ``VecEnv`` view of a same-step :class:`UniSimVectorEnv`.

    - ``step_wait`` returns ``(obs, rewards, dones, infos)`` with ``dones = terminated | truncated``;
      an env that finished has ``infos[i]["terminal_observation"]`` (its last observation; the
      returned row is already the next episode's first) and ``infos[i]["TimeLimit.truncated"]``
      (truncated and not terminated: SB3 bootstraps those), plus ``"diverged"``. Rewards float32.
    - ``seed(s)`` (SB3's ``VecEnv.seed``: seeds ``s, s+1, ...``) reaches the next ``reset`` as
      gymnasium's list of per-env seeds; ``reset()`` returns the observation only (infos in
      ``reset_infos``).
    - ``get_attr``/``set_attr``/``env_method`` go through the env's batched ``get_attr``/
      ``set_attr``/``call`` (env, then task); ``indices`` select envs. Setting a shared attribute
      for a subset of envs is refused (one task for the batch).
    - ``render_mode`` is the env's; ``get_images()`` its ``render()`` frames.
    """

    def __init__(self, env: UniSimVectorEnv) -> None:
        check_same_step_env(env, "SB3")
        self.env = env
        self.render_mode = env.render_mode
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)
        self.metadata = {"render_modes": env.metadata["render_modes"], "render_fps": env.metadata["render_fps"]}
        self._actions: np.ndarray | None = None

    def reset(self) -> np.ndarray:
        seeds = None if all(s is None for s in self._seeds) else [0 if s is None else int(s) for s in self._seeds]
        obs, info = self.env.reset(seed=seeds)
        self.reset_infos = [dict() for _ in range(self.num_envs)]
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        if self._actions is None:
            raise RuntimeError("step_wait: call step_async(actions) first")
        obs, reward, terminated, truncated, info = self.env.step(self._actions)
        self._actions = None
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            final_obs, diverged = info["final_obs"], info["final_info"]["diverged"]
            for i in np.flatnonzero(dones):
                infos[i] = {"terminal_observation": final_obs[i], "TimeLimit.truncated": bool(truncated[i]),
                            "diverged": bool(diverged[i])}
        return obs, reward, dones, infos

    def close(self) -> None:
        self.env.close()

    def get_images(self) -> Sequence[np.ndarray | None]:
        frames = self.env.render()
        return [None] * self.num_envs if frames is None else list(frames)

    def _indices(self, indices: None | int | Iterable[int]) -> list[int]:
        ids = list(self._get_indices(indices))
        bad = [i for i in ids
               if isinstance(i, bool) or not isinstance(i, int | np.integer) or not 0 <= i < self.num_envs]
        if bad:
            raise InvalidInputError(f"indices: expected env indices in [0, {self.num_envs}), got {bad!r}")
        return ids

    def get_attr(self, attr_name: str, indices: None | int | Iterable[int] = None) -> list[Any]:
        values = self.env.get_attr(attr_name)
        return [values[i] for i in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: None | int | Iterable[int] = None) -> None:
        ids = self._indices(indices)
        values = list(self.env.get_attr(attr_name))
        for i in ids:
            values[i] = value
        self.env.set_attr(attr_name, value if len(ids) == self.num_envs else values)

    def env_method(self, method_name: str, *method_args: Any, indices: None | int | Iterable[int] = None,
                   **method_kwargs: Any) -> list[Any]:
        results = self.env.call(method_name, *method_args, **method_kwargs)
        return [results[i] for i in self._indices(indices)]

    def env_is_wrapped(self, wrapper_class: type, indices: None | int | Iterable[int] = None) -> list[bool]:
        """Always ``False``: the envs are rows of one batch, no per-env gymnasium wrapper exists."""
        return [False] * len(self._indices(indices))
