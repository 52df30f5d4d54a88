"""Train gymnasium's Ant (``UniSim/Ant-v0`` = ``Ant-v5`` without contact terms) with Stable-Baselines3 PPO
through UniSim on MuJoCo, then run the policy, unchanged, on every installed engine.

    python examples/ant/train_sb3.py [--timesteps 300000] [--envs 16] [--out examples/ant]
    python examples/ant/train_sb3.py --eval-only [--backends mujoco motrix]

Training: ``SB3VecEnv(UniSimVectorEnv(AntTask(), "mujoco", N))`` under ``VecMonitor`` and
``VecNormalize`` (observations and rewards), ``PPO("MlpPolicy")`` with 64-64 tanh MLPs, 512 steps per
env per rollout, 10 epochs of 256-sample mini-batches, gamma 0.98, GAE 0.9, and an initial action
std of exp(-2) = 0.14 (``log_std_init``, as rl-zoo's Ant PPO: with std 1 the ant's random actions
flip it within ~50 steps and a short run learns nothing); one thread each for torch and MuJoCo. Writes
``ppo_ant.zip`` (the SB3 model), ``vecnormalize.pkl`` (observation statistics) and
``training_log.json`` (per rollout: env steps, mean return of the last 100 episodes, wall time).

Evaluation (``--eval-only`` or after training): every backend listed by ``unisim_core.list_backends``
with status ``ok`` (except ``fake``, ``example`` and ``ray``), 16 envs x 200 control steps (10 s),
deterministic actions on observations normalised with the training statistics, the same seeded
initial states; a random policy on MuJoCo for scale. A backend that cannot run the task gets a row
with its error. ``--integrator implicitfast`` evaluates on a copy of ``ant.xml`` with that integrator
instead of RK4 and its four unnamed bodies named (for the engines that refuse RK4 or unnamed bodies;
no longer ``Ant-v5``), written to ``sim2sim_implicitfast.json``. Needs ``unisim-gym[sb3]``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import pickle
import re
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from unisim_core import list_backends
from unisim_gym import ANT_XML, AntCfg, AntTask, SB3VecEnv, UniSimVectorEnv

HERE = Path(__file__).resolve().parent
SKIP = {"fake", "example", "ray"}  # not engines (ray shards another backend)


def train(out: Path, timesteps: int, num_envs: int, seed: int) -> None:
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

    log: list[dict] = []
    start = time.perf_counter()

    class Log(BaseCallback):
        def _on_rollout_end(self) -> None:
            returns = [ep["r"] for ep in self.model.ep_info_buffer]
            log.append({"env_steps": self.num_timesteps, "mean_return": float(np.mean(returns)) if returns else None,
                        "wall_s": round(time.perf_counter() - start, 1)})
            print(log[-1], flush=True)

        def _on_step(self) -> bool:
            return True

    env = UniSimVectorEnv(AntTask(), "mujoco", num_envs, seed=seed, backend_options={"threads": 1})
    venv = VecNormalize(VecMonitor(SB3VecEnv(env)), norm_obs=True, norm_reward=True)
    model = PPO("MlpPolicy", venv, n_steps=512, batch_size=256, n_epochs=10, learning_rate=3e-4, gamma=0.98,
                gae_lambda=0.9, clip_range=0.2, ent_coef=0.0, seed=seed, device="cpu", verbose=0,
                policy_kwargs={"net_arch": [64, 64], "log_std_init": -2.0, "ortho_init": False})
    model.learn(total_timesteps=timesteps, callback=Log())
    model.save(out / "ppo_ant.zip")
    venv.save(str(out / "vecnormalize.pkl"))
    venv.close()
    (out / "training_log.json").write_text(json.dumps({"timesteps": timesteps, "num_envs": num_envs, "seed": seed,
                                                       "wall_s": round(time.perf_counter() - start, 1),
                                                       "rollouts": log}, indent=1))


def ant_variant(integrator: str, folder: Path) -> str:
    """A copy of ``ant.xml`` with ``<option integrator>`` set to ``integrator`` and its four unnamed lower-leg
    bodies named ``foot_1``..``foot_4`` (Genesis matches bodies by name): no longer ``Ant-v5``'s RK4."""
    text = Path(ANT_XML).read_text()
    if 'integrator="RK4"' not in text:
        raise ValueError(f"{ANT_XML}: expected <option integrator=\"RK4\">")
    numbers = itertools.count(1)
    text, count = re.subn(r'<body pos="', lambda _m: f'<body name="foot_{next(numbers)}" pos="', text)
    if count != 4:
        raise ValueError(f"{ANT_XML}: expected 4 unnamed bodies, found {count}")
    path = folder / f"ant_{integrator}.xml"
    path.write_text(text.replace('integrator="RK4"', f'integrator="{integrator}"'))
    return str(path)


def evaluate(policy, backend: str, num_envs: int = 16, steps: int = 200, seed: int = 0,
             scene_file: str = ANT_XML) -> dict:
    """Run ``policy(obs) -> actions`` for ``steps`` control steps (episodes capped at ``steps``)."""
    env = UniSimVectorEnv(AntTask(AntCfg(max_episode_steps=steps, scene_file=scene_file)), backend, num_envs,
                          seed=seed)
    try:
        obs, _ = env.reset(seed=seed)
        ret, returns, falls, forward = np.zeros(num_envs), [], 0, 0.0
        start = time.perf_counter()
        for _ in range(steps):
            obs, reward, terminated, truncated, info = env.step(policy(obs))
            ret += reward
            forward += float(info["reward_terms"]["reward_forward"].sum())
            done = terminated | truncated
            returns += ret[done].tolist()
            falls += int(terminated.sum())
            ret[done] = 0.0
        wall = time.perf_counter() - start
    finally:
        env.close()
    return {"backend": backend, "episodes": len(returns), "mean_return": float(np.mean(returns)),
            "forward_m_s": forward / (steps * num_envs), "falls_per_100": 100.0 * falls / len(returns),
            "steps_per_s": steps * num_envs / wall}


def load_policy(out: Path):
    from stable_baselines3 import PPO

    model = PPO.load(out / "ppo_ant.zip", device="cpu")
    with open(out / "vecnormalize.pkl", "rb") as f:
        norm = pickle.load(f)  # VecNormalize without its venv: normalize_obs needs only the statistics

    def policy(obs: np.ndarray) -> np.ndarray:
        return model.predict(norm.normalize_obs(obs), deterministic=True)[0]

    return policy


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--timesteps", type=int, default=300_000)
    p.add_argument("--envs", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=HERE)
    p.add_argument("--eval-only", action="store_true")
    p.add_argument("--backends", nargs="+", help="default: every installed engine")
    p.add_argument("--integrator", help="evaluate on a copy of ant.xml with this integrator and named bodies "
                                        "(e.g. implicitfast, for engines that refuse RK4); rows are labelled with it")
    args = p.parse_args()
    torch.set_num_threads(1)  # a small MLP: more threads only contend with the engine
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.eval_only:
        train(args.out, args.timesteps, args.envs, args.seed)
    policy = load_policy(args.out)
    names = args.backends or sorted(b.name for b in list_backends() if b.status == "ok" and b.name not in SKIP)
    scene, label = ANT_XML, ""
    if args.integrator:
        scene, label = ant_variant(args.integrator, Path(tempfile.mkdtemp())), f" ({args.integrator})"
    rows = []
    rng = np.random.default_rng(0)
    random_row = evaluate(lambda o: rng.uniform(-1, 1, (len(o), 8)).astype(np.float32), "mujoco", scene_file=scene)
    rows.append({**random_row, "backend": f"mujoco{label} (random policy)"})
    for name in names:
        try:
            rows.append({**evaluate(policy, name, scene_file=scene), "backend": name + label})
        except Exception as exc:  # noqa: BLE001 - a row per backend, whatever its error
            rows.append({"backend": name + label, "error": f"{type(exc).__name__}: {exc}"})
        print(rows[-1], flush=True)
    out = args.out / (f"sim2sim_{args.integrator}.json" if args.integrator else "sim2sim.json")
    out.write_text(json.dumps(rows, indent=1))
    print("\n| backend | episodes | mean return | forward velocity (m/s) | falls / 100 ep | steps/s |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['backend']} | {r['error'][:100]} | | | | |")
        else:
            print(f"| {r['backend']} | {r['episodes']} | {r['mean_return']:.1f} | {r['forward_m_s']:.2f} | "
                  f"{r['falls_per_100']:.1f} | {r['steps_per_s']:,.0f} |")


if __name__ == "__main__":
    main()
