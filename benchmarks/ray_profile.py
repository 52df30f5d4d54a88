"""Where a Ray-sharded step's time goes: engine, shard-side state packing, transport, host.

For each N in ``--envs``: ``create_backend("ray", ..., shards=K)`` over the inner backend (one
thread per shard) and the same loop as ``ray_scaling.py`` (``step``, ``get_qpos``, ``get_qvel``).
Timers installed inside each shard actor split a step into the inner ``_step`` (engine), the
rest of the shard's op (state packing, divergence check) and the servant call (``ShardHost.call``);
on the host, the remote round trip (``_call``) is timed apart from the contract's own work
(validation, getters). "transport" = host round trip - slowest shard's actor call: Ray's
serialization, scheduling and the reply's copy into the driver.

    python benchmarks/ray_profile.py [--inner mujoco] [--envs 512 4096] [--shards 2] [--steps 60]
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_SCENE = HERE.parent / "unisim_core" / "scenes" / "quadruped.xml"


def _install_timers(actor_self) -> None:
    """Runs inside a shard actor: wrap the engine step, the servant op and the actor call."""
    host = actor_self.host
    acc = actor_self.__dict__.setdefault("_prof", {"engine": 0.0, "op": 0.0, "call": 0.0, "n": 0})
    backend = host.backend
    inner_step, op_step = backend._step, host.step
    call = host.call

    def timed(fn, key: str, count: bool = False):
        def wrapper(*a):
            t0 = time.perf_counter()
            try:
                return fn(*a)
            finally:
                acc[key] += time.perf_counter() - t0
                acc["n"] += count
        return wrapper

    def timed_call(op, *a):
        t0 = time.perf_counter()
        try:
            return call(op, *a)
        finally:
            if op == "step":
                acc["call"] += time.perf_counter() - t0

    backend._step, host.step, host.call = timed(inner_step, "engine"), timed(op_step, "op", True), timed_call


def _read_timers(actor_self) -> dict:
    out = dict(actor_self._prof)
    actor_self._prof.update(engine=0.0, op=0.0, call=0.0, n=0)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--inner", default="mujoco")
    p.add_argument("--scene", default=str(DEFAULT_SCENE))
    p.add_argument("--envs", type=int, nargs="+", default=[512, 4096])
    p.add_argument("--shards", type=int, default=2)
    p.add_argument("--nsteps", type=int, default=4)
    p.add_argument("--steps", type=int, default=60, help="timed loop iterations per N")
    args = p.parse_args(argv)

    import ray

    from unisim_core import SceneCfg, create_backend
    from unisim_core.tools.cli import hold_position_ctrl
    from unisim_ray import LOCAL_RAY_SYSTEM_CONFIG

    ray.init(address="local", num_cpus=max(os.cpu_count() or 1, args.shards), include_dashboard=False,
             log_to_driver=False, logging_level=logging.WARNING, _system_config=LOCAL_RAY_SYSTEM_CONFIG)
    scene = SceneCfg(args.scene, default_keyframe="home")
    print(f"{'N':>6} {'host ms':>9} {'round trip':>10} {'actor call':>10} {'engine':>8} {'packing':>8} "
          f"{'transport':>9} {'host work':>9}   (ms per step; shard columns: slowest shard)")
    try:
        for n in args.envs:
            b = create_backend("ray", scene, n, 0.005, inner=args.inner, shards=args.shards,
                               inner_options={"threads": 1}, progress=False)
            ctrl = hold_position_ctrl(b)
            for _ in range(5):
                b.step(ctrl, args.nsteps)
                b.get_qpos()
                b.get_qvel()
            ray.get([a.__ray_call__.remote(_install_timers) for a in b._actors])
            ray.get([a.__ray_call__.remote(_read_timers) for a in b._actors])
            calls, orig = [0.0], b._call

            def timed_call(*a, calls=calls, orig=orig, **k):
                t0 = time.perf_counter()
                try:
                    return orig(*a, **k)
                finally:
                    calls[0] += time.perf_counter() - t0

            b._call = timed_call
            t0 = time.perf_counter()
            for _ in range(args.steps):
                b.step(ctrl, args.nsteps)
                b.get_qpos()
                b.get_qvel()
            total = (time.perf_counter() - t0) / args.steps
            shard = ray.get([a.__ray_call__.remote(_read_timers) for a in b._actors])
            b.close()
            ms = {k: max(s[k] for s in shard) / args.steps * 1e3 for k in ("engine", "op", "call")}
            rt = calls[0] / args.steps * 1e3
            print(f"{n:>6} {total * 1e3:>9.2f} {rt:>10.2f} {ms['call']:>10.2f} {ms['engine']:>8.2f} "
                  f"{ms['op'] - ms['engine']:>8.2f} {rt - ms['call']:>9.2f} {total * 1e3 - rt:>9.2f}")
    finally:
        ray.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
