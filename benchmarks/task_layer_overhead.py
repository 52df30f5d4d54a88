"""The task layer's cost per env-step against the bare contract, as a ratio (alternating rounds).

Per task and N (``--envs``, default 1 64 1024) two loops run in one process on MuJoCo (one
thread), alternating in blocks within each of ``--rounds`` rounds (``unisim_core.tools.bench.measure``:
same number of calls each, each call timed alone, the median per round):

- ``task``: ``UniSimVectorEnv(VelocityTrackingTask(cfg), "mujoco", N).step(actions)``: actions to
  targets, the backend's step, observations (with their noise and delay lines), rewards,
  terminations, same-step autoreset of the envs that ended (commands, spawns, randomization).
- ``contract``: the same env's backend stepped bare: ``backend.step(targets, decimation)``,
  ``get_qpos()``, ``get_qvel()``. The actuator model the task installed (Go1) stays on it: both
  loops pay the per-substep torques. Both loops step the same robots, so the physics costs the
  same in both (a second, never-reset backend let its robots fall and lie in other contacts than
  the task's autoreset keeps: 10-15 % apart at N = 1024 from the physics alone, measured); the
  difference is the task layer's cost.

``layer ratio`` splits the task loop's own time: the seconds spent inside ``backend.step`` during
task calls over the seconds of those calls (1.0: the task layer's Python costs nothing). It differs
from ``ratio`` where the same ``backend.step`` runs slower inside the task loop than bare (the states
the autoreset keeps, the caches the layer's numpy work shares): the column says which part is the
layer's code.

Tasks: ``quadruped`` (the shipped task: position servos, flat floor, no noise) and ``go1``
(``go1_rough_cfg()``: DC motor model with target delay, observation noise, randomization,
generated terrain, geometric contacts). The table gives the median over rounds of env-steps/s of
each loop and ``ratio`` = the median over rounds of contract time / task time (1.0: the task
layer costs nothing; the issue's goal is >= 0.91, i.e. at most 10 % over the contract, at N >= 64).
Run it on a quiet machine; on a shared one read the ratios, not the rates.

    python benchmarks/task_layer_overhead.py [--envs 1 64 1024] [--tasks quadruped go1] [--rounds 3] [--seconds 6]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from unisim_core.tools.bench import measure
from unisim_core.tools.tables import table
from unisim_gym import UniSimVectorEnv, VelocityTrackingCfg, VelocityTrackingTask, go1_rough_cfg

TASKS = {"quadruped": lambda: VelocityTrackingCfg(), "go1": go1_rough_cfg}
CYCLE = 16


def loops(task: str, n: int) -> tuple[dict, list, list[float]]:
    """``{"task": call, "contract": call}`` on one env (warmed up by a reset), the envs to close and
    ``[s inside backend.step during task calls, s of task calls]`` (accumulating)."""
    acts = np.random.default_rng(0).normal(0.0, 0.5, (CYCLE, n, 12)).astype(np.float32)
    env = UniSimVectorEnv(VelocityTrackingTask(TASKS[task]()), "mujoco", n, seed=0, backend_options={"threads": 1})
    env.reset(seed=0)
    targets = np.stack([env.task.ctrl_from_action(a).copy() for a in acts])
    b, dec = env.backend, env.task.decimation
    step, clock = b.step, time.perf_counter  # the contract loop calls the backend's own step
    counter = {"task": 0, "contract": 0}
    split = [0.0, 0.0]

    def engine_step(*args, **kwargs):
        t0 = clock()
        try:
            return step(*args, **kwargs)
        finally:
            split[0] += clock() - t0

    b.step = engine_step  # what the task env calls

    def task_call() -> None:
        counter["task"] += 1
        t0 = clock()
        env.step(acts[counter["task"] % CYCLE])
        split[1] += clock() - t0

    def contract_call() -> None:
        counter["contract"] += 1
        step(targets[counter["contract"] % CYCLE], dec)
        b.get_qpos()
        b.get_qvel()

    return {"task": task_call, "contract": contract_call}, [env], split


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--envs", type=int, nargs="+", default=[1, 64, 1024])
    p.add_argument("--tasks", nargs="+", choices=sorted(TASKS), default=["quadruped", "go1"])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=float, default=6.0, help="budget per cell, all rounds and loops together")
    p.add_argument("--json", help="also write the rows to this file")
    a = p.parse_args(argv)
    rows = []
    for task in a.tasks:
        for n in a.envs:
            calls, envs, split = loops(task, n)
            per_round: dict[str, list[float]] = {}
            try:
                med = measure(calls, a.seconds, rounds=a.rounds, per_round=per_round)
            finally:
                for e in envs:
                    e.close()
            ratios = [c / t for c, t in zip(per_round["contract"], per_round["task"])]
            rows.append({"task": task, "N": n, "task env-steps/s": round(n / med["task"]),
                         "contract env-steps/s": round(n / med["contract"]),
                         "ratio": round(float(np.median(ratios)), 3), "layer ratio": round(split[0] / split[1], 3),
                         "rounds": [round(r, 3) for r in ratios]})
            print(json.dumps(rows[-1]), flush=True)
    header = ["task", "N", "task env-steps/s", "contract env-steps/s", "ratio", "layer ratio"]
    print(table([[r[k] for k in header] for r in rows], header))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
