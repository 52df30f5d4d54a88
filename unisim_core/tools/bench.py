"""Throughput of installed backends against their raw engines, in one run (``unisim bench``).

One workload for every engine (:data:`WORKLOAD`): each call writes a hold-position ``ctrl``
``(N, nu)``, steps ``nsteps`` physics substeps of ``sim_dt`` and reads ``qpos`` and ``qvel`` back
to host numpy (the shipped quadruped holding its ``home`` pose unless told otherwise). Three loops
run it on the same scene, alternating in blocks of ~0.1 s within each round so that other load and
the machine's drifting speed hit them alike, each call timed alone (median of the calls, the first
call of each block dropped):

- contract: ``backend.step(ctrl, nsteps)`` then ``get_qpos()`` and ``get_qvel()``;
- raw: the engine's own batched API doing the same work (plugin hook ``unisim_raw_stepper``);
- one_env: one env doing it on one thread with the engine's plain API (hook ``unisim_step_cost_probe``).

``ratio`` = raw time / contract time (1.0: no overhead), the median of the rounds' ratios (each
round's loops alternate in short blocks, so a round's ratio is paired; between rounds the machine's
speed may differ, which a ratio of medians pooled over the rounds would mix in); ``cpu_ratio``: raw /
contract process CPU time per call (every thread of this process, pooled medians), which other
processes' load inflates far less (but a batch's idle worker threads spinning down after their
block count to the next block's loop). The physical limit is the one-env cost × N / threads (the
threads the engine's batch can use: the backend's ``threads`` option, else the probe's ``threads``
attribute, else every CPU of this process); ``of_limit`` = limit / contract time. Device engines (warp) are timed to
the host copy of qpos/qvel, which waits for the device (``wp.array.numpy()`` synchronises its
stream): every call ends with the device idle.

Start-up, per engine: ``cold_start_s`` is the first ``create_backend`` → end of the first step in
this process (engine import and kernel compilation or cache load included). Per cell,
``first_start_s`` is the same span for the first backend of that N (warp engines compile kernels
specialised on the number of worlds here, once per N and machine), and ``warm_start_s`` for a
second backend of that N: the engine loaded and every kernel it needs in its caches.
Engines are imported by the plugins' loops only, never by ``unisim_core``.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np

__all__ = ["WORKLOAD", "BLOCK_S", "raw_stepper", "step_cost_probe", "backend_threads", "contract_stepper",
           "median_call_s", "measure", "bench_cell", "run_bench", "format_rows", "default_backends", "cpu_count"]

Call = Callable[[], object]

#: The one workload every loop runs, as the rows and the JSON state it.
WORKLOAD = "write ctrl (N, nu); step nsteps substeps; read qpos (N, nq) and qvel (N, nv) to host numpy"

#: Backends never benchmarked unless asked for by name (no raw engine, or not a local engine).
EXCLUDED_BY_DEFAULT = ("fake", "isaacsim", "ray")


def raw_stepper(backend_name: str, scene: str, n: int, sim_dt: float, nsteps: int, backend,
                ctrl: np.ndarray) -> tuple[Call, Call] | None:
    """``(call, close)`` of the plugin's raw-engine loop (``unisim_raw_stepper`` hook), ``None`` when
    the plugin offers none (or none for this scene)."""
    from unisim_core.contract.registry import plugin_hook

    make = plugin_hook(backend_name, "unisim_raw_stepper")
    return None if make is None else make(scene, n, sim_dt, nsteps, backend, ctrl)


def step_cost_probe(backend_name: str, scene: str, sim_dt: float, nsteps: int, backend,
                    ctrl: np.ndarray) -> Call | None:
    """One env's single-threaded step loop (``unisim_step_cost_probe`` hook), ``None`` when none."""
    from unisim_core.contract.registry import plugin_hook

    make = plugin_hook(backend_name, "unisim_step_cost_probe")
    return None if make is None else make(scene, sim_dt, nsteps, backend, ctrl[:1])


def backend_threads(backend, probe: Call | None = None) -> int:
    """Threads the backend's batch steps on: its ``threads`` option, else the probe's ``threads``
    attribute (an engine that steps its envs one after another says 1), else every CPU."""
    threads = getattr(backend.options, "threads", None) or getattr(probe, "threads", None)
    return int(threads) if threads else cpu_count()


def contract_stepper(name: str, scene: str, n: int, sim_dt: float, nsteps: int,
                     options: Mapping[str, object] | None = None, keyframe: str | None = "home"):
    """``(backend, call, start_s, ctrl)``: a backend built and stepped once (``start_s``: from the
    ``create_backend`` call to the end of that step), its loop and the hold-position control."""
    from unisim_core.contract.config import SceneCfg
    from unisim_core.contract.factory import create_backend
    from unisim_core.scenes.mjcf_file import has_keyframe
    from unisim_core.tools.compare import hold_position_ctrl

    key = keyframe if keyframe and has_keyframe(scene, keyframe) else None
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        backend = create_backend(name, SceneCfg(scene, default_keyframe=key), n, sim_dt, **dict(options or {}))
    ctrl = hold_position_ctrl(backend)
    backend.step(ctrl, nsteps)
    start = time.perf_counter() - t0
    backend.set_state(np.arange(n), np.tile(backend.get_default_qpos(), (n, 1)), np.zeros((n, backend.nv)))

    def call():
        backend.step(ctrl, nsteps)
        return backend.get_qpos(), backend.get_qvel()

    return backend, call, start, ctrl


def median_call_s(fn: Call, seconds: float, min_calls: int = 3) -> float:
    """Median seconds per call of ``fn`` over ~``seconds`` (at least ``min_calls`` calls, each timed
    alone, after one warm-up call); the GPU acceptance tables (``benchmarks/mjwarp_overhead.py``,
    ``benchmarks/newton_overhead.py``) time with it."""
    fn()
    samples = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or len(samples) < min_calls:
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return float(np.median(samples))


#: Seconds of one loop's block inside a round: the loops alternate in blocks this short, so that the
#: machine's speed drifting (on a shared 2-core VM, ±30 % over seconds) hits them alike.
BLOCK_S = 0.1


def measure(calls: Mapping[str, Call], budget_s: float, rounds: int = 3, steps: int | None = None,
            per_round: dict[str, list[float]] | None = None, cpu: dict[str, float] | None = None) -> dict[str, float]:
    """Median seconds per call of each callable, each call timed alone. Every callable runs the same
    number of times (one warm-up call, one sizing call, then ``steps`` per round, or as many as fit
    ``budget_s`` over all rounds, at least 3), so loops that start from the same state follow the same
    trajectory and pay the same state-dependent costs (contacts). Within a round the callables
    alternate in blocks of about :data:`BLOCK_S` (at least 3 calls; the order reversed every block),
    and the median drops the first call of each block, whose caches the other loops left cold (it
    costs a one-env loop up to twice its steady time after a 512-env step). ``per_round``, when
    given, receives each callable's median per round; ``cpu`` the median process CPU seconds per call
    (all threads; other processes' load inflates it far less than wall time)."""
    slowest = 1e-8
    for call in calls.values():
        call()  # warm-up
        t = time.perf_counter()
        call()
        slowest = max(slowest, time.perf_counter() - t)
    count = steps if steps else max(3, int(budget_s / rounds / len(calls) / slowest))
    count = max(count, 2)
    block = max(3, int(BLOCK_S / slowest))
    names = list(calls)
    times: dict[str, list[float]] = {name: [] for name in calls}
    cpus: dict[str, list[float]] = {name: [] for name in calls}
    clock, cpu_clock = time.perf_counter, time.process_time
    for _ in range(rounds):
        this_round: dict[str, list[float]] = {name: [] for name in calls}
        done = flip = 0
        while done < count:
            size = min(block, count - done)
            for name in (names if flip % 2 == 0 else names[::-1]):
                call, samples, cpu_samples = calls[name], [], []
                for _ in range(size):
                    t, c = clock(), cpu_clock()
                    call()
                    samples.append(clock() - t)
                    cpu_samples.append(cpu_clock() - c)
                keep = 1 if size > 1 else 0  # a block of one call (a short last block) keeps it
                this_round[name] += samples[keep:]
                cpus[name] += cpu_samples[keep:]
            done, flip = done + size, flip + 1
        for name, samples in this_round.items():
            times[name] += samples
            if per_round is not None:
                per_round.setdefault(name, []).append(float(np.median(samples)))
    if cpu is not None:
        cpu.update({name: float(np.median(t)) for name, t in cpus.items()})
    return {name: float(np.median(t)) for name, t in times.items()}


def bench_cell(name: str, scene: str, n: int, *, sim_dt: float = 0.002, nsteps: int = 4, budget_s: float = 1.0,
               options: Mapping[str, object] | None = None, steps: int | None = None, rounds: int = 3) -> dict:
    """One row: contract and raw env-steps/s (physics steps × envs per second), ratio, the physical
    limit and the contract's fraction of it, the first and warm starts (see the module docstring)."""
    first, _, first_start, _ = contract_stepper(name, scene, n, sim_dt, nsteps, options)
    first.close()
    backend, con, start, ctrl = contract_stepper(name, scene, n, sim_dt, nsteps, options)
    row: dict = {"backend": name, "num_envs": n, "nsteps": nsteps, "sim_dt": sim_dt, "first_start_s": first_start,
                 "warm_start_s": start,
                 "device": str(getattr(backend, "device", "cpu")),
                 "options": {k: repr(v) for k, v in (options or {}).items()}}
    raw = None
    try:
        calls = {"contract": con}
        raw = raw_stepper(name, scene, n, sim_dt, nsteps, backend, ctrl)
        if raw is not None:
            calls["raw"] = raw[0]
        one_env = step_cost_probe(name, scene, sim_dt, nsteps, backend, ctrl)
        if one_env is not None:
            calls["one_env"] = one_env
        rounds_s: dict[str, list[float]] = {}
        cpu: dict[str, float] = {}
        med = measure(calls, budget_s, rounds=rounds, steps=steps, per_round=rounds_s, cpu=cpu)
        threads = backend_threads(backend, one_env)
    finally:
        if raw is not None:
            raw[1]()
        backend.close()
    row["rounds_us"] = {k: [round(v * 1e6, 1) for v in vs] for k, vs in rounds_s.items()}
    row["cpu_us_per_call"] = {k: v * 1e6 for k, v in cpu.items()}
    row["contract_us_per_call"] = med["contract"] * 1e6
    row["contract_env_steps_per_s"] = n * nsteps / med["contract"]
    row["ratio"] = row["of_limit"] = None
    if "raw" in med:
        row["raw_us_per_call"] = med["raw"] * 1e6
        row["raw_env_steps_per_s"] = n * nsteps / med["raw"]
        row["round_ratios"] = [r / c for r, c in zip(rounds_s["raw"], rounds_s["contract"])]
        row["ratio"] = float(np.median(row["round_ratios"]))
        row["cpu_ratio"] = cpu["raw"] / cpu["contract"] if cpu["contract"] > 0 else None
        row["overhead_us_per_call"] = (med["contract"] - med["raw"]) * 1e6
    else:
        row["note"] = f"the {name!r} plugin offers no raw-engine loop for this scene (hook unisim_raw_stepper)"
    if "one_env" in med:
        limit = med["one_env"] * (1 if n == 1 else n / min(threads, n))
        row["threads"] = threads
        row["limit_us_per_call"] = limit * 1e6
        row["of_limit"] = limit / med["contract"]
    return row


def default_backends() -> list[str]:
    from unisim_core.contract.registry import list_backends

    return [r.name for r in list_backends() if r.status == "ok" and r.name not in EXCLUDED_BY_DEFAULT]


def run_bench(backends: Sequence[str], num_envs: Sequence[int], scene: str, *, sim_dt: float = 0.002,
              nsteps: int = 4, budget_s: float = 1.0, options: Mapping[str, Mapping[str, object]] | None = None,
              steps: int | None = None, rounds: int = 3, on_row: Callable[[dict], None] | None = None) -> list[dict]:
    """One row per backend and N (:func:`bench_cell`); each backend is first built once at N=1 (its
    ``cold_start_s``, on each of its rows) so that every cell's ``warm_start_s`` finds the engine loaded.
    A backend that refuses the scene by an MJCF feature gives one ``refused`` row (the feature); a
    failing one gives ``error`` rows; neither hides the others."""
    from unisim_core.contract.errors import UnsupportedCapabilityError

    rows = []
    for name in backends:
        opts = (options or {}).get(name)
        try:
            first, _, cold, _ = contract_stepper(name, scene, 1, sim_dt, nsteps, opts)
            first.close()
        except UnsupportedCapabilityError as exc:
            rows.append({"backend": name, "refused": str(exc.capability), "detail": str(exc)})
            if on_row:
                on_row(rows[-1])
            continue
        except Exception as exc:  # noqa: BLE001 - one failing backend never hides the others
            cold, error = None, f"{type(exc).__name__}: {exc}"
        for n in num_envs:
            if cold is None:
                row = {"backend": name, "num_envs": n, "error": error}
            else:
                try:
                    row = bench_cell(name, scene, n, sim_dt=sim_dt, nsteps=nsteps, budget_s=budget_s,
                                     options=opts, steps=steps, rounds=rounds)
                    row["cold_start_s"] = cold
                except Exception as exc:  # noqa: BLE001
                    row = {"backend": name, "num_envs": n, "error": f"{type(exc).__name__}: {exc}"}
            rows.append(row)
            if on_row:
                on_row(row)
    return rows


def format_rows(rows: Sequence[dict]) -> str:
    from unisim_core.tools.tables import table as _table

    def num(r, key, fmt):
        return "-" if r.get(key) is None else format(r[key], fmt)

    out = []
    for r in rows:
        if "refused" in r:
            out.append([r["backend"], "-", "refused", "", "", "", "", "", "", "", "", "",
                        f"refuses the scene: {r['refused']}"])
            continue
        if "error" in r:
            out.append([r["backend"], r["num_envs"], "error", "", "", "", "", "", "", "", "", "", r["error"][:80]])
            continue
        out.append([r["backend"], r["num_envs"], num(r, "raw_env_steps_per_s", ",.0f"),
                    f"{r['contract_env_steps_per_s']:,.0f}", num(r, "ratio", ".2f"),
                    num(r, "cpu_ratio", ".2f"), num(r, "overhead_us_per_call", ",.1f"),
                    num(r, "limit_us_per_call", ",.0f"),
                    num(r, "of_limit", ".2f"), num(r, "first_start_s", ".2f"), f"{r['warm_start_s']:.2f}",
                    num(r, "cold_start_s", ".1f"),
                    "; ".join(x for x in (r.get("note", ""), "" if r.get("device", "cpu") == "cpu" else
                                          f"device {r['device']}",
                                          ", ".join(f"{k}={v}" for k, v in r.get("options", {}).items())) if x)])
    return _table(out, ("backend", "N", "raw env-steps/s", "contract env-steps/s", "ratio", "cpu ratio",
                        "overhead µs/call",
                        "limit µs/call", "of limit", "first start s", "warm start s", "cold start s", "note"))


def cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
