"""In-process vs Ray-sharded backend throughput, side by side in one run.

For each N in ``--envs``: the inner backend in-process (``--baseline-threads``,
default 2), then ``create_backend("ray", ..., shards=K)`` for each K in
``--shards`` with ``--shard-threads`` (default 1) per shard, on one Ray instance
started once (no dashboard). Every loop iteration is the same contract calls:

    backend.step(ctrl, nsteps); backend.get_qpos(); backend.get_qvel()

from the scene's default keyframe under a position hold. env-steps/s counts
``N * nsteps`` per iteration; "added ms/step" is the Ray step time minus the
in-process step time at the same N (the price of the round trip: serialization,
the object store, scheduling, and waiting for the slowest shard). The configurations
of one N are timed in alternating rounds (in-process, ray, in-process, ray, ...); the table
shows the median round and "vs in-proc" the ratio of medians (in-process ms / ray ms: >= 1
means the shards are no slower).

``--recovery`` adds, per shard count, the same backend with ``max_shard_restarts=1`` (mode
``ray+rec``: every step reply also carries the shards' restore rows), so the per-step price of
keeping recovery possible is read off the table; afterwards shard 0's actor is killed and the
next step's rebuild time is reported as "restart s" (new actor, inner backend build, model
writes and restore rows replayed).

    python benchmarks/ray_scaling.py [--inner mujoco] [--envs 64 512 4096] [--shards 1 2]
        [--nsteps 4] [--seconds 3] [--rounds 7] [--recovery] [--json out.json]

``--inner-option key=value`` adds inner options (values parsed as Python literals).
"""

from __future__ import annotations

import argparse
import ast
import json
import logging
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DEFAULT_SCENE = HERE.parent / "unisim_core" / "scenes" / "quadruped.xml"


def _time(fn, seconds: float) -> float:
    """Median per-call seconds over ~``seconds`` of repeated batches of ~50 ms (at least 3)."""
    for _ in range(3):
        fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - t0 > 0.05:
            break
        n *= 2
    samples = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or len(samples) < 3:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - t0) / n)
    return float(np.median(samples))


def _loop(backend, nsteps: int):
    from unisim_core.tools.cli import hold_position_ctrl

    ids = np.arange(backend.num_envs)
    q0 = np.tile(backend.get_default_qpos().astype(np.float64), (backend.num_envs, 1))
    backend.set_state(ids, q0, np.zeros((backend.num_envs, backend.nv)))
    ctrl = hold_position_ctrl(backend)

    def once():
        backend.step(ctrl, nsteps)
        backend.get_qpos()
        backend.get_qvel()

    return once


class _Ping:
    """The floor of any remote step: an actor whose method does nothing."""

    def ping(self) -> int:
        return 0


def _parse_options(items: list[str]) -> dict:
    out = {}
    for item in items:
        key, _, value = item.partition("=")
        try:
            out[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            out[key] = value
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--inner", default="mujoco", help="inner backend (default: mujoco)")
    p.add_argument("--scene", default=str(DEFAULT_SCENE))
    p.add_argument("--keyframe", default="home", help="default keyframe ('' for qpos0)")
    p.add_argument("--envs", type=int, nargs="+", default=[64, 512, 4096])
    p.add_argument("--shards", type=int, nargs="+", default=[1, 2])
    p.add_argument("--nsteps", type=int, default=4, help="substeps per step() call (control decimation)")
    p.add_argument("--dt", type=float, default=0.005)
    p.add_argument("--seconds", type=float, default=3.0, help="timing window per configuration")
    p.add_argument("--rounds", type=int, default=7, help="alternating timing rounds (median kept)")
    p.add_argument("--baseline-threads", type=int, default=2, help="threads of the in-process baseline")
    p.add_argument("--shard-threads", type=int, default=1, help="threads of each shard's inner backend")
    p.add_argument("--no-threads-option", action="store_true",
                   help="do not pass 'threads' to the inner backend (for inners without that option)")
    p.add_argument("--inner-option", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--no-inline-results", dest="inline_results", action="store_false",
                   help="keep Ray's default 100 KB inline cut-off (state replies go through the object store)")
    p.add_argument("--recovery", action="store_true",
                   help="also time each shard count with max_shard_restarts=1, then kill a shard and time the rebuild")
    p.add_argument("--json", help="also write the results to this file")
    args = p.parse_args(argv)

    import ray

    import unisim_core
    from unisim_core import SceneCfg, create_backend

    scene = SceneCfg(args.scene, default_keyframe=args.keyframe or None)
    extra = _parse_options(args.inner_option)

    def inner_opts(threads: int) -> dict:
        return extra if args.no_threads_option else {**extra, "threads": threads}

    from unisim_ray import LOCAL_RAY_SYSTEM_CONFIG

    # the same Ray settings the backend uses when it starts Ray itself
    ray.init(address="local", num_cpus=max(os.cpu_count() or 1, sum(args.shards)), include_dashboard=False,
             log_to_driver=False, logging_level=logging.WARNING,
             _system_config=LOCAL_RAY_SYSTEM_CONFIG if args.inline_results else {})
    rows = []
    try:
        for n in args.envs:
            # All configurations of one N are alive at once and timed in alternating rounds
            # (median kept), so that other load on the machine hits all of them alike.
            configs = [("in-process", 0, args.baseline_threads,
                        create_backend(args.inner, scene, n, args.dt, **inner_opts(args.baseline_threads)))]
            for k in args.shards:
                for mode, restarts in [("ray", 0), ("ray+rec", 1)][:1 + args.recovery]:
                    if k <= n:
                        configs.append((mode, k, args.shard_threads,
                                        create_backend("ray", scene, n, args.dt, inner=args.inner, shards=k,
                                                       inner_options=inner_opts(args.shard_threads),
                                                       max_shard_restarts=restarts, progress=False)))
            loops = [_loop(c[3], args.nsteps) for c in configs]
            samples: list[list[float]] = [[] for _ in configs]
            for r in range(args.rounds):
                order = range(len(loops)) if r % 2 == 0 else reversed(range(len(loops)))
                for i in order:
                    samples[i].append(_time(loops[i], args.seconds / args.rounds))
            best = [float(np.median(s)) for s in samples]
            restart = {}
            for i, (mode, _, _, backend) in enumerate(configs):
                if mode == "ray+rec":  # a shard killed: the next step rebuilds it
                    ray.kill(backend._actors[0], no_restart=True)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        loops[i]()
                    restart[i] = backend.recovery_seconds[-1]
            for c in configs:
                c[3].close()
            t_in = best[0]
            for i, ((mode, k, threads, _), t) in enumerate(zip(configs, best)):
                rows.append({"envs": n, "mode": mode, "shards": k, "threads": threads, "step_ms": t * 1e3,
                             "round_ms": [x * 1e3 for x in samples[i]],
                             "env_steps_per_s": n * args.nsteps / t, "ratio": t_in / t,
                             "added_ms": (t - t_in) * 1e3, "restart_s": restart.get(i)})
                print(f"  N={n:5d} {mode:<10} shards={k} {t * 1e3:8.3f} ms/step", file=sys.stderr, flush=True)
        # the floor of any remote step: one empty actor call round trip
        probe = ray.remote(_Ping).options(num_cpus=0).remote()
        ray.get(probe.ping.remote())
        t_rt = _time(lambda: ray.get(probe.ping.remote()), min(args.seconds, 1.0))
        ray.kill(probe)
    finally:
        ray.shutdown()

    header = f"{'envs':>6} {'mode':<10} {'shards':>6} {'threads':>7} {'ms/step':>9} {'env-steps/s':>12} " \
             f"{'vs in-proc':>10} {'added ms/step':>13} {'restart s':>9}"
    print(f"inner={args.inner} scene={Path(args.scene).name} nsteps={args.nsteps} dt={args.dt} "
          f"cpus={os.cpu_count()} ray={ray.__version__} unisim-core={unisim_core.__version__}")
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['envs']:>6} {r['mode']:<10} {r['shards'] or '-':>6} {r['threads']:>7} {r['step_ms']:>9.3f} "
              f"{r['env_steps_per_s']:>12,.0f} {r['ratio']:>9.2f}x {r['added_ms']:>+13.3f} "
              f"{'-' if r['restart_s'] is None else format(r['restart_s'], '.2f'):>9}")
    print(f"empty actor round trip (ray.get(actor.ping.remote())): {t_rt * 1e3:.3f} ms")
    if args.json:
        meta = {"inner": args.inner, "scene": args.scene, "nsteps": args.nsteps, "dt": args.dt,
                "cpus": os.cpu_count(), "ray": ray.__version__, "python": platform.python_version(),
                "round_trip_ms": t_rt * 1e3}
        Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
