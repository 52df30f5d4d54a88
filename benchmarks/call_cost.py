"""CPU per call of ``unisim bench``'s workload, each loop timed alone: the contract, the raw engine
loop, and the core's own share (the contract call with the engine primitive ``_step`` replaced by a
no-op, so what is left is the base class's Python and the getters' copies).

``unisim bench`` interleaves the loops in rounds, which is right for ratios on a loaded machine but
leaves each median at the mercy of one round's noise; this script runs each loop by itself and
keeps the minimum over ``--repeats`` blocks of ``--calls`` calls of ``time.process_time``, the
steadiest figure for a per-call gap of a few microseconds.

    python benchmarks/call_cost.py [--backends mujoco,motrix,sapien] [--num-envs 1,16] [--calls 2000]
"""

from __future__ import annotations

import argparse
import time

from unisim_core.bench import contract_stepper, raw_stepper
from unisim_core.scenes import scene_path


def min_cpu_us(fn, calls: int, repeats: int) -> float:
    """Minimum over ``repeats`` blocks of the mean process CPU µs per call of ``fn``."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.process_time() - t0) / calls * 1e6)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", default="mujoco,motrix,sapien")
    ap.add_argument("--num-envs", default="1,16")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    scene = str(scene_path("quadruped"))
    print("| backend | N | raw µs | contract µs | raw / contract | core share µs (engine no-op) |")
    print("|---|---|---|---|---|---|")
    for name in args.backends.split(","):
        for n in (int(x) for x in args.num_envs.split(",")):
            backend, contract, _, ctrl = contract_stepper(name, scene, n, 0.002, 4)
            raw = raw_stepper(name, scene, n, 0.002, 4, backend, ctrl)
            try:
                raw_us = min_cpu_us(raw[0], args.calls, args.repeats) if raw else float("nan")
                contract_us = min_cpu_us(contract, args.calls, args.repeats)
                backend._step = lambda ctrl, nsteps: None  # what remains is the core's per-call Python
                core_us = min_cpu_us(contract, args.calls, args.repeats)
            finally:
                if raw:
                    raw[1]()
                backend.close()
            print(f"| {name} | {n} | {raw_us:,.1f} | {contract_us:,.1f} | {raw_us / contract_us:.2f} | {core_us:.1f} |",
                  flush=True)


if __name__ == "__main__":
    main()
