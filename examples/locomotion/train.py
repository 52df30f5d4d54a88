"""Train a velocity-tracking policy with rsl-rl-lib PPO on a UniSim backend (CPU).

    python examples/locomotion/train.py                       # the shipped quadruped: MuJoCo, 256 envs, 35 min
    python examples/locomotion/train.py --iterations 20 --out /tmp/run
    python examples/locomotion/train.py --task go1 --num-envs 512 --max-minutes 150 --out examples/locomotion/go1

Writes to ``--out`` (default: this folder): ``policy.pt`` (TorchScript: observation normalizer +
MLP, deterministic actions), ``learning_curve.png`` and ``training_log.json`` (per iteration: mean
return of the episodes finished in it, mean episode length, wall time). Needs ``unisim-gym[rslrl]``,
``unisim-mujoco``, ``tqdm`` and ``matplotlib``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path

import numpy as np
import torch
from rsl_rl.runners import OnPolicyRunner
from tqdm import tqdm

from unisim_gym import (
    RslRlVecEnv,
    UniSimVectorEnv,
    VelocityTrackingCfg,
    VelocityTrackingTask,
    go1_rough_cfg,
    ppo_runner_cfg,
)

HERE = Path(__file__).resolve().parent
#: ``--task`` name -> the task config it trains.
TASKS = {"quadruped": VelocityTrackingCfg, "go1": go1_rough_cfg}


class EpisodeReturns(RslRlVecEnv):
    """``RslRlVecEnv`` that also records the return of every finished episode and whether it timed
    out, and sums each weighted reward term over the steps (``terms``, ``steps``)."""

    def __init__(self, env: UniSimVectorEnv, seed: int) -> None:
        super().__init__(env, seed=seed)
        self._ret = np.zeros(self.num_envs)
        self.finished: list[tuple[float, bool]] = []
        self.terms: dict[str, float] = {}
        self.steps = 0

    def step(self, actions):
        obs, reward, dones, extras = super().step(actions)
        for k, v in extras["log"].items():
            self.terms[k] = self.terms.get(k, 0.0) + v
        self.steps += 1
        self._ret += reward.numpy()
        done, timeouts = dones.numpy(), extras["time_outs"].numpy()
        self.finished += [(float(self._ret[i]), bool(timeouts[i])) for i in np.flatnonzero(done)]
        self._ret[done] = 0.0
        return obs, reward, dones, extras


def train(*, task: str = "quadruped", backend: str = "mujoco", num_envs: int = 256, iterations: int | None = None,
          max_minutes: float = 35.0, seed: int = 0, threads: int = 1, out: Path | None = None,
          progress: bool = True, save_every: int = 50, resume: Path | None = None,
          entropy_coef: float = 0.01) -> list[dict]:
    """Run PPO for ``iterations`` (``None``: until ``max_minutes``, which bounds it either way); return
    the per-iteration log. Saves the policy, the curve and ``checkpoint.pt`` every ``save_every``
    iterations and at the end into ``out``; ``resume`` continues from a ``checkpoint.pt`` (and the
    ``training_log.json`` beside it); ``entropy_coef``: PPO's entropy bonus (0 lets the action noise
    shrink where the rewards do not pay for it)."""
    torch.manual_seed(seed)
    torch.set_num_threads(1)  # small MLPs: more threads only contend with the engine (5-8x slower measured)
    options = {"threads": threads} if backend == "mujoco" else {}
    env = EpisodeReturns(UniSimVectorEnv(VelocityTrackingTask(TASKS[task]()), backend, num_envs, seed=seed,
                                         backend_options=options), seed=seed)
    runner = OnPolicyRunner(env, ppo_runner_cfg(entropy_coef=entropy_coef), log_dir=None, device="cpu")
    log: list[dict] = []
    start = began = time.perf_counter()  # start: of the run (earlier when resuming); began: of this call
    first = 0
    if resume is not None:  # continue a run: its runner state, and its log beside it
        runner.load(str(resume))
        old = resume.parent / "training_log.json"
        log = json.loads(old.read_text()) if old.exists() else []
        first = log[-1]["iteration"] + 1 if log else 0
        start -= log[-1]["wall_s"] if log else 0.0
    by_time = iterations is None  # then the bar runs over the wall-clock budget (s)
    bar = tqdm(total=round(max_minutes * 60) if by_time else iterations, unit="s" if by_time else "it",
               disable=not progress, dynamic_ncols=True, bar_format="{l_bar}{bar}| {n:.0f}/{total} {unit} "
                                                                   "[{elapsed}{postfix}]")
    try:
        for it in itertools.count(first) if by_time else range(first, first + iterations):
            runner.learn(1, init_at_random_ep_len=(it == first))
            done, env.finished = env.finished, []
            rets = [r for r, _ in done]
            terms, n_steps, env.terms, env.steps = env.terms, env.steps, {}, 0
            task_ = env.env.task
            steps = (log[-1]["env_steps"] if log else 0) + num_envs * runner.cfg["num_steps_per_env"]
            log.append({"iteration": it, "wall_s": round(time.perf_counter() - start, 2), "env_steps": steps,
                        "episodes": len(done), "mean_return": float(np.mean(rets)) if rets else None,
                        "timeouts": sum(t for _, t in done),
                        "v_xy_error": float(task_.lin_vel_error.mean()),
                        "terrain_level": task_.curriculum.mean_level if task_.curriculum is not None else None,
                        "action_std": round(float(runner.alg.get_policy().output_std.mean()), 4),
                        # per second of control, each weighted term's mean over the iteration's steps
                        "terms": {k.removeprefix("/reward/"): round(v / max(n_steps, 1) / task_.dt, 4)
                                  for k, v in terms.items()}})
            if not progress:
                print(json.dumps(log[-1]), flush=True)
            bar.update(log[-1]["wall_s"] - bar.n if by_time else 1)
            bar.set_postfix(it=it, ret=f"{log[-1]['mean_return'] or float('nan'):.2f}", eps=len(done))
            if out is not None and (it + 1) % save_every == 0:
                save(runner, log, out)
            if time.perf_counter() - began > max_minutes * 60:
                break
    finally:
        bar.close()
        if out is not None and log:
            save(runner, log, out)
        env.close()
    return log


def save(runner: OnPolicyRunner, log: list[dict], out: Path) -> None:
    """Write ``policy.pt``, ``training_log.json`` and ``learning_curve.png`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    runner.export_policy_to_jit(str(out), "policy.pt")
    runner.save(str(out / "checkpoint.pt"))  # the full runner state, to resume (not shipped)
    (out / "training_log.json").write_text(json.dumps(log, indent=0))
    rows = [{**{k: v for k, v in e.items() if k != "terms"}, **e.get("terms", {})} for e in log]  # terms flat
    keys = list(dict.fromkeys(k for r in rows for k in r))
    (out / "training_log.csv").write_text("\n".join([",".join(keys)] + [",".join(
        "" if r.get(k) is None else str(r[k]) for k in keys) for r in rows]) + "\n")
    plot_curve(log, out / "learning_curve.png")


def plot_curve(log: list[dict], path: Path) -> None:
    """Mean episode return per iteration against wall time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = [(e["wall_s"] / 60, e["mean_return"]) for e in log if e["mean_return"] is not None]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    if pts:
        t, r = zip(*pts)
        ax.plot(t, r, lw=0.8, alpha=0.5, label="per iteration")
        k = min(20, len(r))
        ax.plot(t[k - 1:], np.convolve(r, np.ones(k) / k, mode="valid"), lw=2, label=f"{k}-iteration mean")
    ax.set_xlabel("wall time on 2 CPU cores (min)")
    ax.set_ylabel("episode return")
    steps = log[-1]["env_steps"] if log else 0
    ax.set_title(f"PPO via UniSim: {len(log)} iterations, {steps / 1e6:.1f} M env steps")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--task", choices=sorted(TASKS), default="quadruped")
    p.add_argument("--backend", default="mujoco")
    p.add_argument("--num-envs", type=int, default=256)
    p.add_argument("--iterations", type=int, default=None, help="default: until --max-minutes")
    p.add_argument("--max-minutes", type=float, default=35.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="MuJoCo batch threads")
    p.add_argument("--out", type=Path, default=HERE)
    p.add_argument("--save-every", type=int, default=50, help="iterations between saves of the policy and log")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (for a log file)")
    p.add_argument("--resume", type=Path, help="a checkpoint.pt to continue from (its training_log.json beside it)")
    p.add_argument("--entropy-coef", type=float, default=0.01, help="PPO's entropy bonus (default 0.01)")
    a = p.parse_args(argv)
    log = train(task=a.task, backend=a.backend, save_every=a.save_every, progress=not a.no_progress, resume=a.resume,
                num_envs=a.num_envs, iterations=a.iterations, max_minutes=a.max_minutes,
                seed=a.seed, threads=a.threads, out=a.out, entropy_coef=a.entropy_coef)
    print(f"{len(log)} iterations in {log[-1]['wall_s'] / 60:.1f} min; policy in {a.out / 'policy.pt'}")


if __name__ == "__main__":
    main()
