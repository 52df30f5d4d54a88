"""In-process vs worker-hosted MuJoCo (``isolation="subprocess"``), in one run.

For each N: ``step(ctrl, nsteps)`` plus ``get_qpos()``/``get_qvel()`` per call, in-process and
in a worker, interleaved in rounds (best round kept) so machine noise hits both alike.
Reports µs per call, env-steps/s, the ratio worker/in-process and the µs added per call.

    python benchmarks/worker_overhead.py [--num-envs 1,64,512] [--nsteps 4] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from unisim_core import SceneCfg, create_backend
from unisim_core.scenes import scene_path


def _rate(backend, ctrl, nsteps: int, seconds: float) -> float:
    """Best-of-rounds µs per step call (with the state reads the task would do)."""
    best = float("inf")
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        calls = 0
        t0 = time.perf_counter()
        while calls < 20 or time.perf_counter() - t0 < 0.1:
            backend.step(ctrl, nsteps)
            backend.get_qpos()
            backend.get_qvel()
            calls += 1
        best = min(best, (time.perf_counter() - t0) / calls * 1e6)
    return best


def measure(n: int, nsteps: int, threads: int, seconds: float) -> dict:
    scene = SceneCfg(scene_path("quadruped"), default_keyframe="home")
    out = {"num_envs": n}
    backends = {
        "inprocess": create_backend("mujoco", scene, n, 0.005, threads=threads),
        "worker": create_backend("mujoco", scene, n, 0.005, threads=threads, isolation="subprocess"),
    }
    try:
        for b in backends.values():
            b.set_state(np.arange(n), np.tile(b.get_default_qpos(), (n, 1)), np.zeros((n, b.nv)))
        ctrl = np.tile(backends["inprocess"].get_default_dof_pos(), (n, 1)).astype(np.float32)
        for _ in range(3):  # interleave so both see the same machine state
            for name, b in backends.items():
                us = _rate(b, ctrl, nsteps, seconds / 6)
                out[f"{name}_us"] = min(out.get(f"{name}_us", float("inf")), us)
    finally:
        for b in backends.values():
            b.close()
    out["inprocess_env_steps_s"] = n / out["inprocess_us"] * 1e6
    out["worker_env_steps_s"] = n / out["worker_us"] * 1e6
    out["ratio"] = out["inprocess_us"] / out["worker_us"]
    out["added_us"] = out["worker_us"] - out["inprocess_us"]
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--num-envs", default="1,64,512")
    p.add_argument("--nsteps", type=int, default=4)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seconds", type=float, default=3.0, help="measuring time per N")
    p.add_argument("--json", default=None)
    args = p.parse_args()
    rows = [measure(int(n), args.nsteps, args.threads, args.seconds) for n in args.num_envs.split(",")]
    print(f"{'N':>5} {'inproc us/call':>15} {'worker us/call':>15} {'inproc env-steps/s':>19} "
          f"{'worker env-steps/s':>19} {'ratio':>6} {'added us':>9}")
    for r in rows:
        print(f"{r['num_envs']:>5} {r['inprocess_us']:>15.1f} {r['worker_us']:>15.1f} "
              f"{r['inprocess_env_steps_s']:>19,.0f} {r['worker_env_steps_s']:>19,.0f} {r['ratio']:>6.3f} "
              f"{r['added_us']:>9.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"nsteps": args.nsteps, "threads": args.threads, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
