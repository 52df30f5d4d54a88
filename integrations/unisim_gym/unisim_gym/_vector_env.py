"""``UniSimVectorEnv``: a gymnasium 1.x ``VectorEnv`` over any UniSim backend."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium.spaces import Box
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from unisim_core import InvalidInputError, InvalidTypeError, SimBackend, create_backend

from ._task import Task

__all__ = ["UniSimVectorEnv"]


class UniSimVectorEnv(VectorEnv):
    """``num_envs`` copies of a :class:`Task` on one backend, batched numpy in and out.

    - ``backend``: an entry-point name (``"mujoco"``, ``"motrix"``, ``"ray"``, ...), an import
      path ``"pkg.module:Class"`` or a ``SimBackend`` subclass: switching engines is this one
      argument. ``backend_options`` go to ``create_backend`` (typed per backend; unknown ones
      raise ``TypeError``). ``seed`` seeds the backend's own generator (``push_robots``) and,
      until ``reset(seed=...)``, the env's.
    - Spaces: ``single_action_space`` is the task's action box, derived from the model's actuator
      ctrl ranges; ``single_observation_space`` is an unbounded float32 box.
    - **Autoreset: same-step** (``metadata["autoreset_mode"] == AutoresetMode.SAME_STEP``). An env
      whose episode ends in ``step`` is reset inside that call: the returned observation is the
      first one of its next episode, ``info["final_obs"]`` (object array, one row per env, ``None``
      where the episode goes on; mask ``info["_final_obs"]``) holds the last observation of the
      ended episode and ``info["final_info"]`` its ``diverged`` flag (mask ``"_final_info"``).
      Every step carries ``info["reward_terms"]`` (``{name: (num_envs,)}``, already weighted).
    - Episodes end with ``terminated`` (the task's termination, or a diverged env) or
      ``truncated`` (``episode_length_s`` reached, ``max_episode_steps`` control steps).
    - **Divergence**: the backend is created with ``divergence="reset"`` unless ``backend_options``
      names a policy. An env the backend reports diverged (``get_diverged_envs``: its state became
      non-finite or left the engine's bound, and the backend reset it) is terminated with
      ``final_info["diverged"]``, a zero reward and a zeroed final observation, then reset by the
      task: the run goes on. Under ``divergence="raise"`` the backend's ``DivergenceError`` (an
      ``EngineError``) propagates, as does any other ``EngineError``: the run stops with its message.
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, task: Task, backend: str | type[SimBackend] = "mujoco", num_envs: int = 64, *,
                 seed: int = 0, backend_options: Mapping[str, Any] | None = None) -> None:
        if not isinstance(task, Task):
            raise InvalidTypeError(f"task: expected a unisim_gym.Task, got {type(task).__name__}")
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise InvalidInputError(f"seed: expected a non-negative int, got {seed!r}")
        options = dict(backend_options or {})
        options.setdefault("seed", int(seed))
        options.setdefault("divergence", "reset")
        self.task = task
        self.backend = create_backend(backend, task.scene, num_envs, task.sim_dt, **options)
        try:
            self.num_envs = self.backend.num_envs
            self._np_random, self._np_random_seed = np.random.default_rng(seed), int(seed)
            obs_dim = task.bind(self.backend, self._np_random)
            low, high = task.action_bounds()
        except BaseException:
            self.backend.close()
            raise
        self.single_action_space = Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)
        self.single_observation_space = Box(-np.inf, np.inf, (obs_dim,), dtype=np.float32)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.control_dt = task.sim_dt * task.decimation
        self.max_episode_steps = max(1, round(task.episode_length_s / self.control_dt))
        #: Control steps taken in each env's current episode, ``(num_envs,)`` int64.
        self.episode_length = np.zeros(self.num_envs, dtype=np.int64)
        self._steps = 0
        self._obs: np.ndarray | None = None

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """Start a new episode in every env; ``seed`` reseeds the env's generator (commands, resets)."""
        super().reset(seed=seed, options=options)
        if seed is not None:
            self.task.reseed(self._np_random)
        all_ids = np.arange(self.num_envs)
        self.task.reset(all_ids)
        self.episode_length[:] = 0
        self._obs = self.task.observe()
        return self._obs.copy(), {}

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Apply ``actions (num_envs, num_actions)``, clipped to the action space, for one control step."""
        if self._obs is None:
            raise RuntimeError("step: call reset() before the first step")
        action = np.asarray(actions, dtype=np.float32)
        if action.shape != self.action_space.shape or not np.isfinite(action).all():
            raise InvalidInputError(f"actions: expected finite values of shape {self.action_space.shape}, "
                                    f"got shape {action.shape}" + ("" if action.shape != self.action_space.shape
                                                                  else " with non-finite entries"))
        action = np.clip(action, self.single_action_space.low, self.single_action_space.high)
        self.task.before_step(self._steps)
        self.backend.step(self.task.ctrl_from_action(action), self.task.decimation)
        diverged = self.backend.get_diverged_envs()  # already reset to the default state by the backend
        self._steps += 1
        self.episode_length += 1
        reward, terminated, terms = self.task.evaluate(action)
        obs = self.task.observe()
        reward = np.where(diverged, 0.0, reward).astype(np.float32)
        terminated = terminated | diverged
        truncated = (self.episode_length >= self.max_episode_steps) & ~terminated
        infos: dict[str, Any] = {"reward_terms": terms}
        done = terminated | truncated
        if done.any():
            ids = np.flatnonzero(done)
            final_obs = np.full(self.num_envs, None, dtype=object)
            for i in ids:
                final_obs[i] = np.zeros_like(obs[i]) if diverged[i] else obs[i].copy()
            infos.update(final_obs=final_obs, _final_obs=done.copy(),
                         final_info={"diverged": diverged.copy(), "_diverged": done.copy()}, _final_info=done.copy())
            self.task.reset(ids)
            self.episode_length[ids] = 0
            obs = self.task.observe()
        self._obs = obs
        return obs.copy(), reward, terminated, truncated, infos

    def close_extras(self, **kwargs: Any) -> None:
        """Close the backend."""
        self.backend.close()
