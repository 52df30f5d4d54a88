"""Where a call's time goes: ``unisim bench``'s workload, contract and raw loop, under ``cProfile``,
its own time (``tottime``) summed by owner: the engine (its compiled calls and its Python), numpy,
the core (``unisim_core``), the plugin (``unisim_<engine>``) and the rest of Python (built-ins,
the loop itself). numpy's ufunc arithmetic and engine properties (attribute reads and writes) are not
traced: they count to the function doing them.
Figures are µs per call under the profiler, which inflates Python-heavy owners more than compiled
ones: read the split, and ``call_cost.py`` for the unprofiled totals. Then the contract's top
functions by own time.

    python benchmarks/call_profile.py [--backends sapien] [--num-envs 1] [--calls 2000] [--top 12]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats

from unisim_core.scenes import scene_path
from unisim_core.tools.bench import contract_stepper, raw_stepper

#: Engine modules by backend: their compiled calls and Python count as the engine's.
ENGINE_MODULES = {
    "mujoco": ("mujoco",), "motrix": ("motrixsim",), "sapien": ("sapien",),
    "mjwarp": ("warp", "mujoco_warp"), "newton": ("warp", "newton"),
    "genesis": ("genesis", "torch", "gstaichi", "quadrants"),
}
OWNERS = ("engine", "numpy", "unisim core", "plugin", "other Python")


def owner(key: tuple, engine: tuple[str, ...], plugin: str) -> str:
    """Which of :data:`OWNERS` a ``pstats`` entry ``(file, line, function)`` belongs to."""
    path, _, name = key
    if path == "~":  # a built-in: named by its module or type
        if any(f"{m}." in name or f"'{m}" in name for m in engine):
            return "engine"
        return "numpy" if "numpy" in name else "other Python"
    parts = path.replace("\\", "/").split("/")
    if any(p in engine for p in parts):
        return "engine"
    if "numpy" in parts:
        return "numpy"
    if "unisim_core" in parts:
        return "unisim core"
    return "plugin" if plugin in parts else "other Python"


def profile(fn, calls: int) -> pstats.Stats:
    fn()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        fn()
    prof.disable()
    return pstats.Stats(prof)


def split_us(stats: pstats.Stats, calls: int, engine: tuple[str, ...], plugin: str) -> dict[str, float]:
    out = dict.fromkeys(OWNERS, 0.0)
    for key, (_, _, tottime, _, _) in stats.stats.items():
        out[owner(key, engine, plugin)] += tottime / calls * 1e6
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", default="sapien")
    ap.add_argument("--num-envs", default="1")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--top", type=int, default=12, help="the contract's functions listed by own time")
    args = ap.parse_args()
    scene = str(scene_path("quadruped"))
    for name in args.backends.split(","):
        engine, plugin = ENGINE_MODULES.get(name, (name,)), f"unisim_{name}"
        for n in (int(x) for x in args.num_envs.split(",")):
            backend, contract, _, ctrl = contract_stepper(name, scene, n, 0.002, 4)
            raw = raw_stepper(name, scene, n, 0.002, 4, backend, ctrl)
            try:
                stats = {"contract": profile(contract, args.calls)}
                if raw:
                    stats["raw"] = profile(raw[0], args.calls)
            finally:
                if raw:
                    raw[1]()
                backend.close()
            print(f"\n### {name}, N={n} (µs per call under cProfile, {args.calls} calls)\n")
            print("| loop | " + " | ".join(OWNERS) + " | total |")
            print("|---" * (len(OWNERS) + 2) + "|")
            for loop, st in stats.items():
                us = split_us(st, args.calls, engine, plugin)
                print(f"| {loop} | " + " | ".join(f"{us[o]:,.1f}" for o in OWNERS) + f" | {sum(us.values()):,.1f} |")
            print(f"\ncontract, top {args.top} by own time:\n")
            print("| µs/call | calls/call | owner | function |")
            print("|---|---|---|---|")
            rows = sorted(stats["contract"].stats.items(), key=lambda kv: -kv[1][2])[:args.top]
            for key, (_, ncalls, tottime, _, _) in rows:
                where = key[2] if key[0] == "~" else f"{key[0].rsplit('/', 1)[-1]}:{key[1]}({key[2]})"
                print(f"| {tottime / args.calls * 1e6:,.1f} | {ncalls / args.calls:g} | "
                      f"{owner(key, engine, plugin)} | `{where}` |")


if __name__ == "__main__":
    main()
