"""``Task``: what a vector env computes from a backend, written once against the ``SimBackend`` contract."""

from __future__ import annotations

import abc

import numpy as np

from unisim_core import SceneCfg, SimBackend

__all__ = ["Task", "StepResult"]

#: ``(reward (num_envs,), terminated (num_envs,) bool, reward terms {name: (num_envs,)})``.
StepResult = tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]


class Task(abc.ABC):
    """Observation, reward, termination and reset logic over a :class:`SimBackend`.

    A task never names an engine: it reads the contract's getters and model tables and writes
    through ``set_state``/``step``/the randomization API, so the same task runs on every backend.
    ``UniSimVectorEnv`` drives it: ``bind`` once, then per control step ``ctrl_from_action``,
    ``before_step``, ``backend.step(ctrl, decimation)``, ``evaluate``, ``reset`` of the finished
    envs and ``observe``.
    """

    #: Physics time step (s) and substeps per control step; the control period is their product.
    sim_dt: float
    decimation: int
    #: Episode length (s); an episode that reaches it is truncated.
    episode_length_s: float

    @property
    @abc.abstractmethod
    def scene(self) -> SceneCfg:
        """The scene every env simulates."""

    @abc.abstractmethod
    def bind(self, backend: SimBackend, rng: np.random.Generator) -> int:
        """Resolve names to ids on ``backend`` (cold path); return the observation size."""

    @abc.abstractmethod
    def action_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` of one env's action, each ``(num_actions,)``, from the model's ctrl ranges."""

    @abc.abstractmethod
    def ctrl_from_action(self, action: np.ndarray) -> np.ndarray:
        """``(num_envs, num_actuators)`` controls for a clipped ``(num_envs, num_actions)`` action."""

    def before_step(self, step_count: int) -> None:
        """Stage pushes or interval randomization for the next ``backend.step`` (default: nothing)."""

    @abc.abstractmethod
    def evaluate(self, action: np.ndarray) -> StepResult:
        """Reward, termination and reward terms after a step taken with ``action``."""

    @abc.abstractmethod
    def reset(self, env_ids: np.ndarray) -> None:
        """Start new episodes in ``env_ids`` (state, commands, per-episode randomization)."""

    @abc.abstractmethod
    def observe(self) -> np.ndarray:
        """``(num_envs, observation size)`` float32 observations of the current state."""

    def reseed(self, rng: np.random.Generator) -> None:
        """Use ``rng`` from now on (``reset(seed=...)``); tasks that draw randomness override this."""

    def observation_bounds(self, obs_dim: int) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` of one env's observation, each ``(obs_dim,)``; ``±inf`` where no bound is
        known (default: unbounded). Called after ``bind``."""
        return np.full(obs_dim, -np.inf), np.full(obs_dim, np.inf)
