"""UniSim's vector env against gymnasium's own ``make_vec("Ant-v5")``, sync and async, side by side.

Same model (gymnasium's ``ant.xml``), same task (``UniSim/Ant-v0`` is ``Ant-v5`` with
``include_cfrc_ext_in_observation=False, contact_cost_weight=0``; gymnasium runs that
configuration too), same seeded action sequence (float32 in [-1, 1], cycled), autoreset on. Per
N (``--envs``, default 16 64 256) the loops run in one process, *alternating* for ``--rounds``
rounds (the order rotates each round); each timed block is ``--calls`` control steps after
warm-up. The table holds the median over rounds of env-steps/s and ratios:

- ``unisim``: ``UniSimVectorEnv(AntTask(), "mujoco", N, backend_options={"threads": T})``,
  ``env.step(actions)`` (observations, rewards, terminations, same-step autoreset).
- ``contract``: the same backend bare: ``backend.step(ctrl, 5)``, ``get_qpos()``, ``get_qvel()``
  (what the task layer costs on top is ``unisim`` vs ``contract``).
- ``gym-sync``: ``gymnasium.make_vec("Ant-v5", N, vectorization_mode="sync", ...)`` (one thread).
- ``gym-async``: the same with ``vectorization_mode="async"`` (N worker processes, forked; skipped
  above ``--async-max`` envs).

``T`` is ``--threads`` (default 1: the same single core gymnasium's sync loop uses; async uses
every core). Run it on a quiet machine; on a shared one, read the ratios, not the absolute rates.

    python benchmarks/gym_vs_gymnasium.py [--envs 16 64 256] [--rounds 3] [--calls 50] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import time

import gymnasium
import numpy as np

from unisim_core.tools.tables import table
from unisim_gym import AntTask, UniSimVectorEnv

ANT_V5 = {"include_cfrc_ext_in_observation": False, "contact_cost_weight": 0.0}
CYCLE = 16


def actions(n: int) -> np.ndarray:
    """``(CYCLE, n, 8)`` float32 in [-1, 1], the same for every loop."""
    return np.random.default_rng(0).uniform(-1.0, 1.0, (CYCLE, n, 8)).astype(np.float32)


def make_loops(n: int, threads: int, async_max: int) -> dict:
    """``{name: (step(i), close())}``, every env reset and warmed up (10 calls)."""
    acts = actions(n)
    loops = {}
    env = UniSimVectorEnv(AntTask(), "mujoco", n, backend_options={"threads": threads})
    env.reset(seed=0)
    loops["unisim"] = (lambda i, e=env: e.step(acts[i % CYCLE]), env.close)
    bare = UniSimVectorEnv(AntTask(), "mujoco", n, backend_options={"threads": threads})
    bare.reset(seed=0)
    b = bare.backend

    def contract(i, b=b):
        b.step(acts[i % CYCLE], 5)
        return b.get_qpos(), b.get_qvel()

    loops["contract"] = (contract, bare.close)
    modes = ("sync", "async") if n <= async_max else ("sync",)
    for mode in modes:
        kwargs = {"vector_kwargs": {"context": "fork"}} if mode == "async" else {}
        g = gymnasium.make_vec("Ant-v5", num_envs=n, vectorization_mode=mode, **kwargs, **ANT_V5)
        g.reset(seed=0)
        loops[f"gym-{mode}"] = (lambda i, g=g: g.step(acts[i % CYCLE]), g.close)
    for step, _ in loops.values():
        for i in range(10):
            step(i)
    return loops


def time_block(step, calls: int) -> float:
    t0 = time.perf_counter()
    for i in range(calls):
        step(i)
    return (time.perf_counter() - t0) / calls


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--envs", type=int, nargs="+", default=[16, 64, 256])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--calls", type=int, default=50, help="control steps per timed block")
    p.add_argument("--threads", type=int, default=1, help="MuJoCo threads of the UniSim backend")
    p.add_argument("--async-max", type=int, default=256, help="largest N for gymnasium's async (N processes)")
    p.add_argument("--json", help="write the results here")
    args = p.parse_args()
    rows, results = [], []
    for n in args.envs:
        loops = make_loops(n, args.threads, args.async_max)
        names = list(loops)
        per_round = {k: [] for k in names}
        for r in range(args.rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for k in order:
                per_round[k].append(time_block(loops[k][0], args.calls))
        for _, close in loops.values():
            close()
        rate = {k: n / float(np.median(v)) for k, v in per_round.items()}
        results.append({"num_envs": n, "env_steps_per_s": rate})
        sync = rate["gym-sync"]
        for k in names:
            rows.append([str(n), k, f"{rate[k]:,.0f}", f"{rate[k] / sync:.2f}x",
                         f"{rate[k] / rate['contract']:.2f}" if k == "unisim" else ""])
        print(f"N={n} done", flush=True)
    print(f"\nAnt-v5 on MuJoCo, median of {args.rounds} alternating rounds of {args.calls} control steps "
          f"(5 substeps each); UniSim backend threads={args.threads}")
    print(table(rows, ["N", "loop", "env-steps/s", "vs gym-sync", "unisim / contract"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
