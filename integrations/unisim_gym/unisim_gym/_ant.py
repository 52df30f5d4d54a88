"""gymnasium's ``Ant-v5``, reproduced over the contract (``UniSim/Ant-v0``)."""

from __future__ import annotations

from pathlib import Path

import attrs
import gymnasium
import numpy as np

from unisim_core import SceneCfg, SimBackend
from unisim_core.errors import UnsupportedCapabilityError

from ._task import StepResult, Task

__all__ = ["AntCfg", "AntTask", "ANT_XML"]

#: gymnasium's own ``ant.xml`` (the model ``Ant-v5`` loads): RK4, 0.01 s, 8 motors of gear 150.
ANT_XML = str(Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets" / "ant.xml")


def _non_negative(inst, attribute, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value) or value < 0:
        raise ValueError(f"AntCfg.{attribute.name}: expected a number >= 0, got {value!r}")


def _positive_int(inst, attribute, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"AntCfg.{attribute.name}: expected an int >= 1, got {value!r}")


def _range(inst, attribute, value) -> None:
    lo, hi = value if len(value) == 2 else (np.nan, np.nan)
    if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi):
        raise ValueError(f"AntCfg.{attribute.name}: expected a finite (low, high) with low <= high, got {value!r}")


@attrs.frozen(kw_only=True)
class AntCfg:
    """``Ant-v5``'s arguments, same names and defaults, except the contact terms (see ``contact_forces``).

    - ``frame_skip`` substeps of the model's 0.01 s (``dt`` = 0.05 s); episodes of
      ``max_episode_steps`` control steps (1000, ``Ant-v5``'s ``TimeLimit``).
    - reward = ``forward_reward_weight`` * x velocity of ``main_body`` (m/s, from its world position
      before and after the step) + ``healthy_reward`` if healthy - ``ctrl_cost_weight`` * |action|^2.
    - healthy: qpos and qvel finite and the root height ``qpos[2]`` within ``healthy_z_range`` m;
      an unhealthy step terminates if ``terminate_when_unhealthy``.
    - reset: ``qpos0 + U(-s, s)`` per coordinate and ``s * N(0, 1)`` per velocity
      (``s = reset_noise_scale``); the root quaternion is then normalised (the contract's unit
      quaternions; ``Ant-v5`` keeps it off unit until MuJoCo's first integration normalises it).
    - observation: ``qpos[2:]`` (root height, root quaternion wxyz, 8 joint angles), then ``qvel``
      (14): 27 values (29 with ``exclude_current_positions_from_observation=False``).
    - ``contact_forces=True`` (``Ant-v5``'s default ``include_cfrc_ext_in_observation`` and its
      contact cost, ``contact_cost_weight`` * |clip(cfrc_ext, contact_force_range)|^2) needs MuJoCo's
      per-body 6-D external wrenches ``cfrc_ext``, which the contract does not offer (its
      ``contact_forces`` capability is a net 3-D force per named body): it is refused at ``bind``.
      ``contact_cost_weight`` only applies with it.
    """

    scene_file: str = ANT_XML
    frame_skip: int = attrs.field(default=5, validator=_positive_int)
    max_episode_steps: int = attrs.field(default=1000, validator=_positive_int)
    forward_reward_weight: float = attrs.field(default=1.0, validator=_non_negative)
    ctrl_cost_weight: float = attrs.field(default=0.5, validator=_non_negative)
    contact_cost_weight: float = attrs.field(default=5e-4, validator=_non_negative)
    healthy_reward: float = attrs.field(default=1.0, validator=_non_negative)
    main_body: str = "torso"
    terminate_when_unhealthy: bool = True
    healthy_z_range: tuple[float, float] = attrs.field(default=(0.2, 1.0), converter=tuple, validator=_range)
    contact_force_range: tuple[float, float] = attrs.field(default=(-1.0, 1.0), converter=tuple, validator=_range)
    reset_noise_scale: float = attrs.field(default=0.1, validator=_non_negative)
    exclude_current_positions_from_observation: bool = True
    contact_forces: bool = False


class AntTask(Task):
    """The ant of ``Ant-v5``: run forward (+x) without falling, on any backend that loads ``ant.xml``."""

    def __init__(self, cfg: AntCfg | None = None) -> None:
        self.cfg = cfg if cfg is not None else AntCfg()
        self.sim_dt = 0.01  # ant.xml's timestep
        self.decimation = int(self.cfg.frame_skip)
        self.dt = self.sim_dt * self.decimation
        self.episode_length_s = self.cfg.max_episode_steps * self.dt

    @property
    def scene(self) -> SceneCfg:
        return SceneCfg(self.cfg.scene_file)

    def bind(self, backend: SimBackend, rng: np.random.Generator) -> int:
        if self.cfg.contact_forces:
            raise UnsupportedCapabilityError(backend.name, "cfrc_ext", (
                "AntCfg.contact_forces=True: Ant-v5's contact terms (cfrc_ext in the observation, the contact cost) "
                "need MuJoCo's per-body 6-D external wrench about the subtree centre of mass, which the SimBackend "
                "contract does not offer (its contact_forces capability reads a net 3-D force per named body: no "
                "torque part, and ant.xml leaves four bodies unnamed); use contact_forces=False, i.e. Ant-v5 with "
                "include_cfrc_ext_in_observation=False, contact_cost_weight=0"))
        self.b, self.rng, self.n = backend, rng, backend.num_envs
        self.qpos0 = backend.get_default_qpos().astype(np.float64)
        self.qvel0 = np.zeros(backend.nv)
        self.main_id = backend.get_body_ids([self.cfg.main_body])
        self.skip = 2 if self.cfg.exclude_current_positions_from_observation else 0
        self._xy = np.zeros((self.n, 2))
        return backend.nq - self.skip + backend.nv

    def reseed(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def action_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        ctrl_range = self.b.get_actuator_ctrl_range().astype(np.float64)
        return ctrl_range[:, 0], ctrl_range[:, 1]

    def observation_bounds(self, obs_dim: int) -> tuple[np.ndarray, np.ndarray]:
        """The root quaternion's components lie in [-1, 1]; nothing else is bounded."""
        low, high = np.full(obs_dim, -np.inf), np.full(obs_dim, np.inf)
        quat = slice(3 - self.skip, 7 - self.skip)
        low[quat], high[quat] = -1.0, 1.0
        return low, high

    def ctrl_from_action(self, action: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(action, dtype=self.b.np_dtype)  # motors: ctrl = action

    def evaluate(self, action: np.ndarray) -> StepResult:
        cfg, b = self.cfg, self.b
        qpos, qvel = b.get_qpos(), b.get_qvel()
        xy = b.get_body_pos_w(self.main_id)[:, 0, :2].astype(np.float64)
        x_velocity = (xy[:, 0] - self._xy[:, 0]) / self.dt
        z_lo, z_hi = cfg.healthy_z_range
        healthy = (np.isfinite(qpos).all(axis=1) & np.isfinite(qvel).all(axis=1)
                   & (qpos[:, 2] >= z_lo) & (qpos[:, 2] <= z_hi))
        terms = {"reward_forward": cfg.forward_reward_weight * x_velocity,
                 "reward_ctrl": -cfg.ctrl_cost_weight * np.sum(np.square(action, dtype=np.float64), axis=1),
                 "reward_survive": cfg.healthy_reward * healthy}
        reward = terms["reward_forward"] + terms["reward_survive"] + terms["reward_ctrl"]
        terminated = ~healthy if cfg.terminate_when_unhealthy else np.zeros(self.n, dtype=bool)
        return reward, terminated, {k: v.astype(np.float32) for k, v in terms.items()}

    def reset(self, env_ids: np.ndarray) -> None:
        s, k, b = self.cfg.reset_noise_scale, len(env_ids), self.b
        qpos = self.qpos0 + self.rng.uniform(-s, s, (k, b.nq))
        qvel = self.qvel0 + s * self.rng.standard_normal((k, b.nv))
        b.set_state(env_ids, qpos, qvel)

    def observe(self) -> np.ndarray:
        b = self.b
        self._xy = b.get_body_pos_w(self.main_id)[:, 0, :2].astype(np.float64)
        return np.concatenate([b.get_qpos()[:, self.skip:], b.get_qvel()], axis=1, dtype=np.float32)
