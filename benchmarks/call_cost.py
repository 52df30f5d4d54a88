"""CPU per call of ``unisim bench``'s workload in paired blocks: the contract, the raw engine loop,
and the core's own share (the contract call with the engine primitive ``_step`` replaced by a
no-op, so what is left is the base class's Python and the getters' copies).

``unisim bench`` interleaves the loops in a few long rounds, and on this machine one round's
noise moves a cell by up to 30 %. Here the contract and the raw loop alternate in ``--blocks``
short blocks of ``--calls`` calls (the order flipped every block), each timed with
``time.process_time``; the table gives each loop's median block and the median of the per-pair
ratios raw / contract, which drift in the machine's speed affects least.

    python benchmarks/call_cost.py [--backends mujoco,motrix,sapien] [--num-envs 1,16] [--calls 300]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from unisim_core.scenes import scene_path
from unisim_core.tools.bench import contract_stepper, raw_stepper


def block_cpu_us(fn, calls: int) -> float:
    """Mean process CPU µs per call of ``fn`` over one block of ``calls`` calls."""
    t0 = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - t0) / calls * 1e6


def paired(contract, raw, calls: int, blocks: int) -> tuple[float, float, float]:
    """``(contract µs, raw µs, raw / contract)``: median blocks and the median per-pair ratio."""
    contract(), raw()
    c, r = [], []
    for k in range(blocks):
        first, second = (contract, raw) if k % 2 == 0 else (raw, contract)
        a, b = block_cpu_us(first, calls), block_cpu_us(second, calls)
        c.append(a if first is contract else b)
        r.append(b if first is contract else a)
    return float(np.median(c)), float(np.median(r)), float(np.median(np.array(r) / np.array(c)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", default="mujoco,motrix,sapien")
    ap.add_argument("--num-envs", default="1,16")
    ap.add_argument("--calls", type=int, default=300, help="calls per block")
    ap.add_argument("--blocks", type=int, default=20, help="blocks per loop, alternating")
    args = ap.parse_args()
    scene = str(scene_path("quadruped"))
    print("| backend | N | raw µs | contract µs | raw / contract (paired) | core share µs (engine no-op) |")
    print("|---|---|---|---|---|---|")
    for name in args.backends.split(","):
        for n in (int(x) for x in args.num_envs.split(",")):
            backend, contract, _, ctrl = contract_stepper(name, scene, n, 0.002, 4)
            raw = raw_stepper(name, scene, n, 0.002, 4, backend, ctrl)
            try:
                if raw:
                    contract_us, raw_us, ratio = paired(contract, raw[0], args.calls, args.blocks)
                else:
                    contract_us, raw_us, ratio = block_cpu_us(contract, args.calls), float("nan"), float("nan")
                backend._step = lambda ctrl, nsteps: None  # what remains is the core's per-call Python
                core_us = min(block_cpu_us(contract, args.calls) for _ in range(5))
            finally:
                if raw:
                    raw[1]()
                backend.close()
            print(f"| {name} | {n} | {raw_us:,.1f} | {contract_us:,.1f} | {ratio:.2f} | {core_us:.1f} |", flush=True)


if __name__ == "__main__":
    main()
