"""Round-trip latency of WorkerClient calls: `python benchmarks/worker_roundtrip.py [N]`.

The worker is `tests/worker/sample_workers.py:basic` (the worker layer's test worker).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from unisim_core.plugin.worker import WorkerClient

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests" / "worker")])}


def _batches(fn, n: int, repeats: int = 5) -> list[float]:
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        out.append((time.perf_counter() - t) / n * 1e6)
    return out


def main(n: int) -> None:
    argv = [sys.executable, "-m", "unisim_core.plugin.worker", "sample_workers:basic"]
    with WorkerClient(argv, env=ENV) as c:
        act = c.slots.add("act", (512, 19), np.float32)
        obs = c.slots.add("obs", (512, 19), np.float32)
        c.call("attach", slots=c.slots.descriptors)
        host_obs = np.empty_like(obs)

        def step() -> None:
            act[:] = 1.0  # host writes the action slot
            c.call("step")  # worker reads it and writes the observation slot
            np.copyto(host_obs, obs)  # host reads the observation back

        for name, fn in [("trivial call", lambda: c.call("noop")), ("(512,19) f32 step", step)]:
            fn()
            us = _batches(fn, n)
            print(
                f"{name:>18}: min {min(us):6.1f} us/call, median {statistics.median(us):6.1f}"
                f" ({n} calls x {len(us)} batches)"
            )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
