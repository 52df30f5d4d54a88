"""gymnasium's ``Ant-v5``, reproduced over the contract: ``UniSim/Ant-v0`` without its contact terms,
``UniSim/Ant-v1`` with them (``cfrc_ext`` from the ``contact_torques`` capability)."""

from __future__ import annotations

from pathlib import Path

import attrs
import gymnasium
import numpy as np

from unisim_core import Capability, SceneCfg, SimBackend
from unisim_core.contract.errors import UnsupportedCapabilityError
from unisim_core.contract.quat import quat_apply

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
      (14): 27 values (29 with ``exclude_current_positions_from_observation=False``); with
      ``contact_forces``, then ``cfrc_ext[1:]`` flattened (13 bodies x 6): 105 values, as ``Ant-v5``'s
      default.
    - ``contact_forces=True`` (``Ant-v5``'s default ``include_cfrc_ext_in_observation=True`` and its
      contact cost ``contact_cost_weight`` * sum(clip(cfrc_ext, contact_force_range)^2), info
      ``reward_contact``) needs a backend declaring ``contact_torques``: MuJoCo's ``cfrc_ext[b]`` =
      [torque, force] of the contacts on body b, world frame, the torque about the centre of mass
      of b's root subtree (the whole ant), rebuilt from the contract's per-body contact force F_b
      and torque about the body's COM tau_b as [tau_b + (x_com_b - c) x F_b, F_b]; a body without a
      joint adds its wrench to the body it is welded to, as MuJoCo does. Read at the state the step
      reached (``Ant-v5``'s comes from what ``mj_step`` left, the last RK4 stage: see docs/gym.md).
      Without the capability the env is refused when built, naming it.
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
        self.b, self.rng, self.n = backend, rng, backend.num_envs
        self.qpos0 = backend.get_default_qpos().astype(np.float64)
        self.qvel0 = np.zeros(backend.nv)
        self.main_id = backend.get_body_ids([self.cfg.main_body])
        self.skip = 2 if self.cfg.exclude_current_positions_from_observation else 0
        self._xy = np.zeros((self.n, 2))
        self.contacts = None
        if self.cfg.contact_forces:
            self._bind_contacts(backend)
        contact_dim = 6 * (backend.num_bodies - 1) if self.cfg.contact_forces else 0
        return backend.nq - self.skip + backend.nv + contact_dim

    def _bind_contacts(self, backend: SimBackend) -> None:
        """Every body but the world, by id (four of ant.xml's are unnamed), with torques; the fold
        of welded bodies and the mass-weighted COM of each root subtree, as MuJoCo's cfrc_ext."""
        if Capability.CONTACT_TORQUES not in backend.capabilities:
            raise UnsupportedCapabilityError(backend.name, Capability.CONTACT_TORQUES, (
                "AntCfg.contact_forces=True: Ant-v5's contact terms (cfrc_ext[1:] in the observation, the contact "
                "cost) are MuJoCo's per-body contact wrench, force and torque, which needs the contact torques of "
                "bind_contact_forces(..., torques=True); use contact_forces=False (UniSim/Ant-v0), i.e. Ant-v5 with "
                "include_cfrc_ext_in_observation=False, contact_cost_weight=0"))
        info, nbody = backend.model_info, backend.num_bodies
        self.body_ids = np.arange(1, nbody)
        self.contacts = backend.bind_contact_forces(self.body_ids, torques=True)
        parent = np.asarray(info.body_parent, dtype=np.int64)
        jointed = np.zeros(nbody, dtype=bool)
        jointed[np.asarray(info.joint_body, dtype=np.int64)] = True
        root, weld = np.zeros(nbody, dtype=np.int64), np.zeros(nbody, dtype=np.int64)
        for b in range(1, nbody):  # bodies come after their parents (MuJoCo's order)
            root[b] = b if parent[b] == 0 else root[parent[b]]
            weld[b] = b if jointed[b] else weld[parent[b]]
        self._fold = np.zeros((nbody, nbody - 1))  # cfrc_ext row <- contract body column
        cols = np.flatnonzero(weld[1:] > 0)
        self._fold[weld[1:][cols], cols] = 1.0
        mass = backend.get_body_mass().astype(np.float64)
        self._ipos = backend.get_body_ipos().astype(np.float64)[self.body_ids]
        self._centre = np.zeros((nbody - 1, nbody - 1))  # c of each body's root subtree = centre @ x_com
        for r in np.unique(root[1:]):
            tree = backend.get_body_subtree_ids(int(r))
            self._centre[np.ix_(root[1:] == r, tree - 1)] = mass[tree] / mass[tree].sum()
        self.cfrc_ext = np.zeros((self.n, nbody, 6))

    def _read_cfrc_ext(self) -> np.ndarray:
        """``(num_envs, num_bodies, 6)`` float64: MuJoCo's cfrc_ext (see ``AntCfg``), kept in ``cfrc_ext``."""
        b, ids = self.b, self.body_ids
        force = self.contacts.read().astype(np.float64)
        torque = self.contacts.read_torque().astype(np.float64)
        x = b.get_body_pos_w(ids).astype(np.float64) + quat_apply(b.get_body_quat_w(ids).astype(np.float64),
                                                                    self._ipos)
        c = np.einsum("bk,nkj->nbj", self._centre, x)
        wrench = np.concatenate((torque + np.cross(x - c, force), force), axis=2)
        np.einsum("rb,nbj->nrj", self._fold, wrench, out=self.cfrc_ext)
        return self.cfrc_ext

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
        if self.contacts is not None:
            clipped = np.clip(self._read_cfrc_ext(), *cfg.contact_force_range)
            terms["reward_contact"] = -cfg.contact_cost_weight * np.sum(np.square(clipped), axis=(1, 2))
            reward = reward + terms["reward_contact"]
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
        parts = [b.get_qpos()[:, self.skip:], b.get_qvel()]
        if self.contacts is not None:
            parts.append(self._read_cfrc_ext()[:, 1:].reshape(self.n, -1))
        return np.concatenate(parts, axis=1, dtype=np.float32)
