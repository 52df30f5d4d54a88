"""``evaluate_velocity_policy``: the sim2sim metrics of a policy with any task on one backend."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import attrs
import numpy as np

from unisim_core import InvalidInputError, SimBackend

from ._locomotion import VelocityTrackingCfg, VelocityTrackingTask
from ._task import Task
from ._vector_env import UniSimVectorEnv

__all__ = ["VelocityEvaluation", "evaluate_velocity_policy"]


@attrs.frozen(kw_only=True)
class VelocityEvaluation:
    """Metrics of one evaluation run (see :func:`evaluate_velocity_policy`).

    - ``mean_return``: mean return of the episodes that ended in the run (the task's reward).
    - ``lin_vel_error``: mean over env-steps of ``|cmd_xy - v_xy|`` (base frame), m/s (NaN for a
      task without a velocity command: one without ``lin_vel_error``).
    - ``ang_vel_error``: mean over env-steps of ``|cmd_wz - w_z|``, rad/s (NaN likewise).
    - ``falls_per_100``: terminated (base contact, tilt or diverged) episodes per 100 ended episodes.
    - ``steps_per_s``: env control steps per wall-clock second, policy inference included.
    """

    backend: str
    episodes: int
    mean_return: float
    lin_vel_error: float
    ang_vel_error: float
    falls_per_100: float
    diverged: int
    steps_per_s: float


def evaluate_velocity_policy(policy: Callable[[np.ndarray], np.ndarray], backend: str | type[SimBackend] = "mujoco",
                             *, num_envs: int = 32, episodes_per_env: int = 2, seed: int = 0,
                             cfg: VelocityTrackingCfg | None = None, task: Task | Callable[[], Task] | None = None,
                             backend_options: Mapping[str, Any] | None = None,
                             on_step: Callable[[UniSimVectorEnv], None] | None = None) -> VelocityEvaluation:
    """Run ``policy(obs (num_envs, obs_dim)) -> actions (num_envs, num_actions)`` for
    ``episodes_per_env`` episode lengths on ``backend`` and measure it.

    The task is ``task`` (any :class:`Task`, unbound, or a function making one: pass a function
    to evaluate on several backends), else ``VelocityTrackingTask(cfg)``; the default ``cfg`` is the
    shipped quadruped's training task without randomization (nominal friction and mass, no
    pushes): commands are still drawn from the training ranges, seeded by ``seed``, so every
    backend sees the same command sequence for the same ``seed``. ``on_step(env)`` runs after
    every control step (e.g. to capture video frames).
    """
    if task is None:
        task = VelocityTrackingTask(cfg if cfg is not None else VelocityTrackingCfg(randomize=False))
    elif cfg is not None:
        raise InvalidInputError("cfg: pass either a task or a VelocityTrackingCfg, not both")
    task = task if isinstance(task, Task) else task()
    env = UniSimVectorEnv(task, backend, num_envs, seed=seed, backend_options=backend_options)
    name = backend if isinstance(backend, str) else backend.name
    try:
        task = env.task
        obs, _ = env.reset(seed=seed)
        ret = np.zeros(num_envs)
        returns, falls, diverged = [], 0, 0
        lin_err, ang_err = 0.0, 0.0
        steps = env.max_episode_steps * episodes_per_env
        start = time.perf_counter()
        for _ in range(steps):
            obs, reward, terminated, truncated, info = env.step(policy(obs))
            lin_err += float(np.sum(getattr(task, "lin_vel_error", np.nan)))
            ang_err += float(np.sum(getattr(task, "ang_vel_error", np.nan)))
            ret += reward
            done = terminated | truncated
            if done.any():
                returns += ret[done].tolist()
                falls += int(terminated.sum())
                diverged += int(info["final_info"]["diverged"].sum())
                ret[done] = 0.0
            if on_step is not None:
                on_step(env)
        wall = time.perf_counter() - start
    finally:
        env.close()
    n = steps * num_envs
    return VelocityEvaluation(backend=name, episodes=len(returns),
                              mean_return=float(np.mean(returns)) if returns else float("nan"),
                              lin_vel_error=lin_err / n, ang_vel_error=ang_err / n,
                              falls_per_100=100.0 * falls / max(1, len(returns)), diverged=diverged,
                              steps_per_s=n / wall)
