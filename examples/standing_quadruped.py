"""A standing quadruped task that runs unchanged on every installed backend.

The task only talks to the ``SimBackend`` contract: no engine import, no engine branch.
Each control step it holds the ``home`` pose with noisy position targets, computes a
reward from contract getters, and resets fallen envs with ``set_state`` on their ids.

    python examples/standing_quadruped.py                      # every ok backend of mujoco, motrix, fake
    python examples/standing_quadruped.py --backend motrix --num-envs 256 --steps 500

Reward (per env and step, higher is better):
    height  = exp(-((z - z_ref) / 0.03)^2)                  base height tracking (get_base_pos)
    upright = -g_b[z]                                       projected gravity from get_base_quat
    joints  = -0.5 * sum((q - q_default)^2)                 get_dof_pos vs get_default_dof_pos
    vel     = -0.1 * |v_b|^2                                base velocity in its own frame (get_body_lin_vel_b)
A backend whose capabilities lack ``contacts`` cannot stand a robot on a floor: it is
skipped with a note.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np

from unisim_core import Capability, SceneCfg, create_backend, list_backends
from unisim_core.contract.quat import quat_apply_inverse, quat_from_yaw, quat_mul
from unisim_core.contract.registry import get_backend_spec
from unisim_core.scenes import scene_path

CANDIDATES = ("mujoco", "motrix", "fake")
Z_REF = 0.27  # m: the PD hold of "home" settles at 0.265-0.268 m in MuJoCo and MotrixSim


class StandTask:
    """Engine-free task logic over any ``SimBackend``."""

    def __init__(self, sim, noise: float, seed: int = 0) -> None:
        self.sim = sim
        self.n = sim.num_envs
        self.rng = np.random.default_rng(seed)
        self.noise = noise
        self.base_id = np.array([sim.base_body_id])
        self.q_default = sim.get_default_qpos()
        self.dof_default = sim.get_default_dof_pos()
        lo, hi = sim.get_actuator_ctrl_range().T
        self.ctrl_lo, self.ctrl_hi = lo, hi
        self.resets = 0

    def reset(self, env_ids: np.ndarray) -> None:
        """Default pose with a random yaw and small joint offsets, zero velocity, only for ``env_ids``."""
        k = len(env_ids)
        if not k:
            return
        qpos = np.tile(self.q_default, (k, 1)).astype(np.float64)
        yaw = self.rng.uniform(-np.pi, np.pi, k)
        qpos[:, 3:7] = quat_mul(quat_from_yaw(yaw), qpos[:, 3:7])
        qpos[:, 7:] += self.rng.uniform(-0.05, 0.05, (k, qpos.shape[1] - 7))
        self.sim.set_state(env_ids, qpos, np.zeros((k, self.sim.nv)))
        self.resets += k

    def action(self) -> np.ndarray:
        target = self.dof_default + self.noise * self.rng.standard_normal((self.n, self.dof_default.size))
        return np.clip(target, self.ctrl_lo, self.ctrl_hi).astype(self.sim.np_dtype)

    def reward(self) -> tuple[np.ndarray, np.ndarray]:
        """``(reward, fallen)``, both ``(num_envs,)``."""
        sim = self.sim
        z = sim.get_base_pos()[:, 2]
        g_b = quat_apply_inverse(sim.get_base_quat(), np.tile([0.0, 0.0, -1.0], (self.n, 1)))
        upright = -g_b[:, 2]
        joint_err = np.sum((sim.get_dof_pos() - self.dof_default) ** 2, axis=1)
        v_b = sim.get_body_lin_vel_b(self.base_id)[:, 0]
        reward = (np.exp(-((z - Z_REF) / 0.03) ** 2) + upright - 0.5 * joint_err
                  - 0.1 * np.sum(v_b ** 2, axis=1))
        fallen = (z < 0.15) | (upright < 0.5)
        return reward, fallen


def run(backend: str, num_envs: int, steps: int, decimation: int, sim_dt: float, noise: float) -> dict:
    scene = SceneCfg(scene_path("quadruped"), default_keyframe="home")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # engine modelling notes (e.g. MotrixSim ignores option@integrator)
        sim = create_backend(backend, scene, num_envs, sim_dt)
    with sim:
        task = StandTask(sim, noise)
        task.reset(np.arange(num_envs))
        total = np.zeros(num_envs)
        t0 = time.perf_counter()
        for _ in range(steps):
            sim.step(task.action(), decimation)
            r, fallen = task.reward()
            total += r
            task.reset(np.flatnonzero(fallen))
        wall = time.perf_counter() - t0
    return {"backend": backend, "mean_reward": float(total.mean() / steps), "resets": task.resets - num_envs,
            "env_steps_per_s": num_envs * steps / wall}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", action="append", help=f"backend name (repeatable; default: every ok one of "
                    f"{', '.join(CANDIDATES)})")
    ap.add_argument("--num-envs", type=int, default=64)
    ap.add_argument("--steps", type=int, default=200, help="control steps")
    ap.add_argument("--decimation", type=int, default=4)
    ap.add_argument("--sim-dt", type=float, default=0.005)
    ap.add_argument("--noise", type=float, default=0.3, help="std of the position-target noise, rad")
    args = ap.parse_args(argv)
    ok = {r.name for r in list_backends() if r.status == "ok"}
    names = args.backend or [b for b in CANDIDATES if b in ok]
    results = []
    for name in names:
        caps = get_backend_spec(name).capabilities
        if Capability.CONTACTS not in caps:
            print(f"{name}: skipped — its capabilities lack 'contacts' (a quadruped cannot stand without a floor)")
            continue
        res = run(name, args.num_envs, args.steps, args.decimation, args.sim_dt, args.noise)
        results.append(res)
        print(f"{name}: mean reward {res['mean_reward']:.3f} per env-step, {res['resets']} resets of fallen envs, "
              f"{res['env_steps_per_s']:,.0f} env-steps/s")
    return 0 if results else 1


if __name__ == "__main__":
    sys.exit(main())
