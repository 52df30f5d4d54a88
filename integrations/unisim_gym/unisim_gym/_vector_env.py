"""``UniSimVectorEnv``: a gymnasium 1.x ``VectorEnv`` over any UniSim backend."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium.spaces import Box
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from unisim_core import Capability, InvalidInputError, InvalidTypeError, SimBackend, create_backend
from unisim_core.contract.errors import UnsupportedCapabilityError

from ._batch_attrs import BatchAttrs
from ._task import Task

__all__ = ["UniSimVectorEnv", "check_same_step_env"]

_MODES = {"next_step": AutoresetMode.NEXT_STEP, "same_step": AutoresetMode.SAME_STEP}


def _autoreset_mode(value: AutoresetMode | str) -> AutoresetMode:
    mode = _MODES.get(value.lower()) if isinstance(value, str) else value
    if mode not in _MODES.values():
        raise InvalidInputError(f"autoreset_mode: expected AutoresetMode.NEXT_STEP or SAME_STEP (or 'next_step', "
                                f"'same_step'), got {value!r}")
    return mode


class UniSimVectorEnv(BatchAttrs, VectorEnv):
    """``num_envs`` copies of a :class:`Task` on one backend, batched numpy in and out.

    - ``backend``: an entry-point name (``"mujoco"``, ``"motrix"``, ``"ray"``, ...), an import
      path ``"pkg.module:Class"`` or a ``SimBackend`` subclass: switching engines is this one
      argument. ``backend_options`` go to ``create_backend`` (typed per backend; unknown ones
      raise ``TypeError``). ``seed`` seeds the backend's own generator (``push_robots``) and,
      until ``reset(seed=...)``, the env's.
    - Spaces: ``single_action_space`` is the task's action box (from the model's actuator ctrl
      ranges), or ``[-1, 1]`` per dimension with ``normalize_actions=True`` (mapped affinely onto the
      task's box); ``single_observation_space`` carries the task's ``observation_bounds`` (``±inf``
      where a value has no known bound).
    - ``autoreset_mode`` (``metadata["autoreset_mode"]``):

      - ``SAME_STEP`` (default): an env whose episode ends in ``step`` is reset inside that call:
        the returned observation is the first one of its next episode, ``info["final_obs"]``
        (object array, ``None`` where the episode goes on; mask ``info["_final_obs"]``) holds the
        ended episode's last observation and ``info["final_info"]`` its ``diverged`` flag.
      - ``NEXT_STEP``: the step that ends an episode returns its last observation; the next
        ``step`` resets that env (its action is ignored) and returns the new episode's first
        observation with reward 0 and ``terminated = truncated = False``. Every step carries
        ``info["diverged"]`` (mask ``"_diverged"``). gymnasium's ``NormalizeObservation`` and
        ``RecordVideo`` (last frame included) want this mode.

      Every step carries ``info["reward_terms"]`` (``{name: (num_envs,)}``, already weighted).
    - Episodes end with ``terminated`` (the task's termination, or a diverged env) or
      ``truncated`` (``max_episode_steps`` control steps; default ``episode_length_s`` of control).
    - ``render_mode="rgb_array"``: ``render()`` returns the backend's captured frame (contract
      ``capture_video_frame``, capability ``VIDEO_CAPTURE``: up to 16 envs composed in one
      ``(render_height, render_width, 3)`` uint8 image, ``camera`` a ``CameraCfg`` or mapping),
      once per env in a tuple (the same array), as gymnasium's vector ``RecordVideo`` expects (use
      it with ``record_first_only=True``). A backend without the capability is refused at
      construction (``UnsupportedCapabilityError``).
    - **Divergence**: the backend is created with ``divergence="reset"`` unless ``backend_options``
      names a policy. An env the backend reports diverged (``get_diverged_envs``: its state became
      non-finite or left the engine's bound, and the backend reset it) is terminated with a zero
      reward and a zeroed final observation, flagged ``diverged``, then reset by the task: the run
      goes on. Under ``divergence="raise"`` the backend's ``DivergenceError`` propagates, as does any
      other ``EngineError``.
    - ``get_attr``/``set_attr``/``call`` (see :class:`BatchAttrs`) reach the env, then the task.
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": ["rgb_array"]}

    def __init__(self, task: Task, backend: str | type[SimBackend] = "mujoco", num_envs: int = 64, *,
                 seed: int = 0, backend_options: Mapping[str, Any] | None = None,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP, normalize_actions: bool = False,
                 max_episode_steps: int | None = None, render_mode: str | None = None, render_width: int = 640,
                 render_height: int = 480, camera: Any = None) -> None:
        if not isinstance(task, Task):
            raise InvalidTypeError(f"task: expected a unisim_gym.Task, got {type(task).__name__}")
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise InvalidInputError(f"seed: expected a non-negative int, got {seed!r}")
        mode = _autoreset_mode(autoreset_mode)
        if render_mode not in (None, "rgb_array"):
            raise InvalidInputError(f"render_mode: expected None or 'rgb_array', got {render_mode!r}")
        if max_episode_steps is not None and (isinstance(max_episode_steps, bool) or
                                              not isinstance(max_episode_steps, int | np.integer)
                                              or max_episode_steps < 1):
            raise InvalidInputError(f"max_episode_steps: expected None or an int >= 1, got {max_episode_steps!r}")
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
            obs_low, obs_high = task.observation_bounds(obs_dim)
            if render_mode is not None:
                if Capability.VIDEO_CAPTURE not in self.backend.capabilities:
                    raise UnsupportedCapabilityError(self.backend.name, Capability.VIDEO_CAPTURE, (
                        "render_mode='rgb_array' renders through capture_video_frame; render with a backend "
                        "that declares it (e.g. 'mujoco') or pass render_mode=None"))
                self.backend.init_renderer(capture=True, headless=True, width=render_width, height=render_height,
                                           camera_kwargs=camera)
        except BaseException:
            self.backend.close()
            raise
        self.render_mode = render_mode
        self._task_low, self._task_high = low.astype(np.float64), high.astype(np.float64)
        self.normalize_actions = bool(normalize_actions)
        if self.normalize_actions:
            self.single_action_space = Box(-1.0, 1.0, low.shape, dtype=np.float32)
        else:
            self.single_action_space = Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)
        self.single_observation_space = Box(obs_low.astype(np.float32), obs_high.astype(np.float32), dtype=np.float32)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.control_dt = task.sim_dt * task.decimation
        self.metadata = {**type(self).metadata, "autoreset_mode": mode, "render_fps": round(1.0 / self.control_dt)}
        self.max_episode_steps = (int(max_episode_steps) if max_episode_steps is not None
                                  else max(1, round(task.episode_length_s / self.control_dt)))
        #: Control steps taken in each env's current episode, ``(num_envs,)`` int64.
        self.episode_length = np.zeros(self.num_envs, dtype=np.int64)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)  # NEXT_STEP: envs to reset at the next step
        self._steps = 0
        self._obs: np.ndarray | None = None

    @property
    def autoreset_mode(self) -> AutoresetMode:
        return self.metadata["autoreset_mode"]

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | Sequence[int] | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """Start a new episode in every env.

        ``seed``: an int, or a list of ``num_envs`` ints (gymnasium's per-env form). The env draws
        from one generator for the whole batch (commands, reset noise), seeded with the int or the
        whole list (``numpy.random.SeedSequence``): the same seed gives the same episodes, but env
        ``i``'s draws are not a function of ``seed[i]`` alone.
        """
        if seed is not None and not isinstance(seed, int | np.integer):
            seeds = list(seed) if isinstance(seed, Sequence) else None
            if (seeds is None or len(seeds) != self.num_envs
                    or not all(isinstance(s, int | np.integer) and not isinstance(s, bool) and s >= 0 for s in seeds)):
                raise InvalidInputError(f"seed: expected None, an int or a list of {self.num_envs} non-negative ints, "
                                        f"got {seed!r}")
            super().reset(options=options)
            self._np_random = np.random.default_rng([int(s) for s in seeds])
            self._np_random_seed = -1  # gymnasium's marker for a generator not seeded by one int
        else:
            super().reset(seed=seed, options=options)
        if seed is not None:
            self.task.reseed(self._np_random)
        self.task.reset(np.arange(self.num_envs))
        self.episode_length[:] = 0
        self._autoreset[:] = False
        self._obs = self.task.observe()
        return self._obs.copy(), {}

    def _task_action(self, actions: np.ndarray) -> np.ndarray:
        action = np.asarray(actions, dtype=np.float32)
        if action.shape != self.action_space.shape or not np.isfinite(action).all():
            raise InvalidInputError(f"actions: expected finite values of shape {self.action_space.shape}, "
                                    f"got shape {action.shape}" + ("" if action.shape != self.action_space.shape
                                                                  else " with non-finite entries"))
        action = np.clip(action, self.single_action_space.low, self.single_action_space.high)
        if self.normalize_actions:
            lo, hi = self._task_low, self._task_high
            action = (lo + (action.astype(np.float64) + 1.0) * 0.5 * (hi - lo)).astype(np.float32)
        return action

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Apply ``actions (num_envs, num_actions)``, clipped to the action space, for one control step."""
        if self._obs is None:
            raise RuntimeError("step: call reset() before the first step")
        action = self._task_action(actions)
        self.task.before_step(self._steps)
        self.backend.step(self.task.ctrl_from_action(action), self.task.decimation)
        diverged = self.backend.get_diverged_envs()  # already reset to the default state by the backend
        self._steps += 1
        self.episode_length += 1
        reward, terminated, terms = self.task.evaluate(action)
        reward = np.where(diverged, 0.0, reward).astype(np.float32)
        terminated = terminated | diverged
        truncated = (self.episode_length >= self.max_episode_steps) & ~terminated
        infos: dict[str, Any] = {"reward_terms": terms}
        if self.autoreset_mode is AutoresetMode.NEXT_STEP:
            obs, restarted = self._next_step_autoreset(reward, terminated, truncated, diverged, terms)
            infos.update(diverged=diverged & ~restarted, _diverged=np.ones(self.num_envs, dtype=bool))
        else:
            obs = self.task.observe()
            done = terminated | truncated
            if done.any():
                ids = np.flatnonzero(done)
                final_obs = np.full(self.num_envs, None, dtype=object)
                for i in ids:
                    final_obs[i] = np.zeros_like(obs[i]) if diverged[i] else obs[i].copy()
                infos.update(final_obs=final_obs, _final_obs=done.copy(),
                             final_info={"diverged": diverged.copy(), "_diverged": done.copy()},
                             _final_info=done.copy())
                self._reset_envs(ids)
                obs = self.task.observe()
        self._obs = obs
        return obs.copy(), reward, terminated, truncated, infos

    def _next_step_autoreset(self, reward: np.ndarray, terminated: np.ndarray, truncated: np.ndarray,
                             diverged: np.ndarray, terms: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """NEXT_STEP: reset the envs that ended at the previous step (their step result is void), flag
        the envs ending now; returns the observation and the restarted envs. Writes into the arrays
        it is given."""
        restart = self._autoreset.copy()
        if restart.any():
            self._reset_envs(np.flatnonzero(restart))
            reward[restart], terminated[restart], truncated[restart] = 0.0, False, False
            for values in terms.values():
                values[restart] = 0.0
        obs = self.task.observe()
        obs[diverged & ~restart] = 0.0
        self._autoreset = terminated | truncated
        return obs, restart

    def _reset_envs(self, ids: np.ndarray) -> None:
        self.task.reset(ids)
        self.episode_length[ids] = 0

    def render(self) -> tuple[np.ndarray, ...] | None:
        """``render_mode="rgb_array"``: the backend's frame of the batch, once per env (the same array)."""
        if self.render_mode is None:
            return None
        frame = self.backend.capture_video_frame()
        return (frame,) * self.num_envs

    def close_extras(self, **kwargs: Any) -> None:
        """Close the backend."""
        self.backend.close()


def check_same_step_env(env: object, trainer: str) -> None:
    """Refuse anything but a same-step :class:`UniSimVectorEnv` for ``trainer`` (its adapters read
    final observations from the ending step)."""
    if not isinstance(env, UniSimVectorEnv):
        raise InvalidTypeError(f"env: expected a UniSimVectorEnv, got {type(env).__name__}")
    if env.autoreset_mode is not AutoresetMode.SAME_STEP:
        raise InvalidInputError(f"env: {trainer} expects same-step autoreset, got an env with autoreset_mode="
                                f"{env.autoreset_mode}; create it with autoreset_mode='same_step'")
