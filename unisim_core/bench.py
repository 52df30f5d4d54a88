"""Throughput of installed backends against their raw engines, in one run (``unisim bench``).

For each backend and ``num_envs`` N, two loops run on the same scene (the shipped
quadruped under a hold of its ``home`` pose unless told otherwise), interleaved in rounds
so that other load on the machine hits both alike (median call kept):

- contract: ``backend.step(ctrl, nsteps)`` then ``get_qpos()`` and ``get_qvel()``;
- raw: the engine's own batched API doing the same work (write ctrl, step ``nsteps``,
  read qpos and qvel), from the plugin's ``unisim_raw_stepper`` hook.

``ratio`` = raw time / contract time (1.0: no overhead). The physical limit is one env's
single-threaded step cost (the plugin's ``unisim_step_cost_probe`` hook) × N / threads;
``of_limit`` = limit / contract time. Cold start is the wall time from the ``create_backend``
call to the end of the first ``step``. Engines are imported by the plugins' loops only, never
by ``unisim_core``.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np

__all__ = ["raw_stepper", "step_cost_probe", "backend_threads", "contract_stepper", "median_call_s", "measure",
           "bench_cell",
           "run_bench", "format_rows", "default_backends"]

Call = Callable[[], object]

#: Backends never benchmarked unless asked for by name (no raw engine, or not a local engine).
EXCLUDED_BY_DEFAULT = ("fake", "isaacsim", "ray")


def raw_stepper(backend_name: str, scene: str, n: int, sim_dt: float, nsteps: int, backend,
                ctrl: np.ndarray) -> tuple[Call, Call] | None:
    """``(call, close)`` of the plugin's raw-engine loop (``unisim_raw_stepper`` hook), ``None`` when
    the plugin offers none."""
    from .registry import plugin_hook

    make = plugin_hook(backend_name, "unisim_raw_stepper")
    return None if make is None else make(scene, n, sim_dt, nsteps, backend, ctrl)


def step_cost_probe(backend_name: str, scene: str, sim_dt: float, nsteps: int, backend,
                    ctrl: np.ndarray) -> Call | None:
    """One env's single-threaded step loop (``unisim_step_cost_probe`` hook), ``None`` when none."""
    from .registry import plugin_hook

    make = plugin_hook(backend_name, "unisim_step_cost_probe")
    return None if make is None else make(scene, sim_dt, nsteps, backend, ctrl[:1])


def backend_threads(backend) -> int:
    """Threads the backend steps on: its ``threads`` option, else every CPU of this process."""
    threads = getattr(backend.options, "threads", None)
    return int(threads) if threads else cpu_count()


def contract_stepper(name: str, scene: str, n: int, sim_dt: float, nsteps: int,
                     options: Mapping[str, object] | None = None, keyframe: str | None = "home"):
    """``(backend, call, cold_start_s, ctrl)``: a backend built and stepped once (timed), its loop
    and the hold-position control it steps with."""
    from .compare import has_keyframe, hold_position_ctrl
    from .config import SceneCfg
    from .registry import create_backend

    key = keyframe if keyframe and has_keyframe(scene, keyframe) else None
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        backend = create_backend(name, SceneCfg(scene, default_keyframe=key), n, sim_dt, **dict(options or {}))
    ctrl = hold_position_ctrl(backend)
    backend.step(ctrl, nsteps)
    cold = time.perf_counter() - t0
    backend.set_state(np.arange(n), np.tile(backend.get_default_qpos(), (n, 1)), np.zeros((n, backend.nv)))

    def call():
        backend.step(ctrl, nsteps)
        return backend.get_qpos(), backend.get_qvel()

    return backend, call, cold, ctrl


def median_call_s(fn: Call, seconds: float, min_calls: int = 3) -> float:
    """Median seconds per call of ``fn`` over ~``seconds`` (at least ``min_calls`` calls, each timed
    alone, after one warm-up call)."""
    fn()
    samples = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or len(samples) < min_calls:
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return float(np.median(samples))


def measure(calls: Mapping[str, Call], budget_s: float, rounds: int = 5, steps: int | None = None) -> dict[str, float]:
    """Median seconds per call of each callable, each call timed alone; rounds interleave the
    callables. Every callable runs the same number of times (one warm-up call, one sizing call,
    then ``steps`` per round, or as many as fit ``budget_s`` over all rounds), so loops that start
    from the same state follow the same trajectory and pay the same state-dependent costs
    (contacts). The median drops the first call of each round, whose caches the other loops left
    cold (it costs a one-env loop up to twice its steady time after a 512-env step)."""
    per_call = 1e-8
    for call in calls.values():
        call()  # warm-up
        t = time.perf_counter()
        call()
        per_call = max(per_call, time.perf_counter() - t)
    per_round = steps if steps else max(3, int(budget_s / rounds / len(calls) / per_call))
    times: dict[str, list[float]] = {name: [] for name in calls}
    clock = time.perf_counter
    for _ in range(rounds):
        for name, call in calls.items():
            out = times[name]
            for _ in range(per_round):
                t = clock()
                call()
                out.append(clock() - t)
    return {name: float(np.median(t)) for name, t in times.items()}


def bench_cell(name: str, scene: str, n: int, *, sim_dt: float = 0.002, nsteps: int = 4, budget_s: float = 1.0,
               options: Mapping[str, object] | None = None, steps: int | None = None) -> dict:
    """One row: contract and raw env-steps/s (physics steps × envs per second), ratio, the physical
    limit and the contract's fraction of it, cold start."""
    backend, con, cold, ctrl = contract_stepper(name, scene, n, sim_dt, nsteps, options)
    row: dict = {"backend": name, "num_envs": n, "nsteps": nsteps, "sim_dt": sim_dt, "cold_start_s": cold,
                 "options": {k: repr(v) for k, v in (options or {}).items()}}
    try:
        calls = {"contract": con}
        raw = raw_stepper(name, scene, n, sim_dt, nsteps, backend, ctrl)
        if raw is not None:
            calls["raw"] = raw[0]
        one_env = step_cost_probe(name, scene, sim_dt, nsteps, backend, ctrl)
        if one_env is not None:
            calls["one_env"] = one_env
        med = measure(calls, budget_s, steps=steps)
        if raw is not None:
            raw[1]()
        threads = backend_threads(backend)
    finally:
        backend.close()
    row["contract_us_per_call"] = med["contract"] * 1e6
    row["contract_env_steps_per_s"] = n * nsteps / med["contract"]
    row["ratio"] = row["of_limit"] = None
    if "raw" in med:
        row["raw_us_per_call"] = med["raw"] * 1e6
        row["raw_env_steps_per_s"] = n * nsteps / med["raw"]
        row["ratio"] = med["raw"] / med["contract"]
        row["overhead_us_per_call"] = (med["contract"] - med["raw"]) * 1e6
    else:
        row["note"] = f"the {name!r} plugin offers no raw-engine loop (hook unisim_raw_stepper)"
    if "one_env" in med:
        limit = med["one_env"] * (1 if n == 1 else n / min(threads, n))
        row["threads"] = threads
        row["limit_us_per_call"] = limit * 1e6
        row["of_limit"] = limit / med["contract"]
    return row


def default_backends() -> list[str]:
    from .registry import list_backends

    return [r.name for r in list_backends() if r.status == "ok" and r.name not in EXCLUDED_BY_DEFAULT]


def run_bench(backends: Sequence[str], num_envs: Sequence[int], scene: str, *, sim_dt: float = 0.002,
              nsteps: int = 4, budget_s: float = 1.0, options: Mapping[str, Mapping[str, object]] | None = None,
              steps: int | None = None, on_row: Callable[[dict], None] | None = None) -> list[dict]:
    rows = []
    for name in backends:
        for n in num_envs:
            try:
                row = bench_cell(name, scene, n, sim_dt=sim_dt, nsteps=nsteps, budget_s=budget_s,
                                 options=(options or {}).get(name), steps=steps)
            except Exception as exc:  # noqa: BLE001 - one failing backend never hides the others
                row = {"backend": name, "num_envs": n, "error": f"{type(exc).__name__}: {exc}"}
            rows.append(row)
            if on_row:
                on_row(row)
    return rows


def format_rows(rows: Sequence[dict]) -> str:
    from .tables import table as _table

    def num(r, key, fmt):
        return "-" if r.get(key) is None else format(r[key], fmt)

    out = []
    for r in rows:
        if "error" in r:
            out.append([r["backend"], r["num_envs"], "error", "", "", "", "", "", "", r["error"][:80]])
            continue
        out.append([r["backend"], r["num_envs"], f"{r['contract_env_steps_per_s']:,.0f}",
                    num(r, "raw_env_steps_per_s", ",.0f"), num(r, "ratio", ".2f"),
                    num(r, "overhead_us_per_call", ".1f"), num(r, "limit_us_per_call", ",.0f"),
                    num(r, "of_limit", ".2f"), f"{r['cold_start_s']:.3f}", r.get("note", "")])
    return _table(out, ("backend", "N", "env-steps/s", "raw env-steps/s", "ratio", "overhead µs/call",
                        "limit µs/call", "of limit", "cold start s", "note"))


def cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
