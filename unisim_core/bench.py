"""Throughput of installed backends against their raw engines, in one run (``unisim bench``).

For each backend and ``num_envs`` N, two loops run on the same scene (the shipped
quadruped under a hold of its ``home`` pose unless told otherwise), interleaved in rounds
so that other load on the machine hits both alike (best round kept):

- contract: ``backend.step(ctrl, nsteps)`` then ``get_qpos()`` and ``get_qvel()``;
- raw: the engine's own batched API doing the same work (write ctrl, step ``nsteps``,
  read qpos and qvel), from :data:`RAW_STEPPERS`.

``ratio`` = raw time / contract time (1.0: no overhead). Cold start is the wall time from
the ``create_backend`` call to the end of the first ``step``. Engine imports happen inside
the raw steppers only, never when ``unisim_core`` is imported.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np

__all__ = ["RAW_STEPPERS", "raw_stepper", "contract_stepper", "measure", "bench_cell", "run_bench",
           "format_rows", "default_backends"]

Call = Callable[[], object]

#: Backends never benchmarked unless asked for by name (no raw engine, or not a local engine).
EXCLUDED_BY_DEFAULT = ("fake", "isaacsim", "ray")


def _raw_mujoco(scene: str, n: int, sim_dt: float, nsteps: int, backend, ctrl) -> tuple[Call, Call]:
    import mujoco
    from mujoco.batch import Batch

    import unisim_mujoco  # noqa: F401  (sets MUJOCO_GL before mujoco is imported)

    m = mujoco.MjModel.from_xml_path(scene)
    m.opt.timestep = sim_dt
    opts = backend.options
    if getattr(opts, "integrator", None):
        from unisim_mujoco.options import INTEGRATORS

        m.opt.integrator = getattr(mujoco.mjtIntegrator, INTEGRATORS[opts.integrator])
    if getattr(opts, "iterations", None):
        m.opt.iterations = opts.iterations
    if getattr(opts, "ls_iterations", None):
        m.opt.ls_iterations = opts.ls_iterations
    if getattr(opts, "noslip_iterations", None):
        m.opt.noslip_iterations = opts.noslip_iterations
    threads = opts.threads
    b = Batch(m, n, 0 if threads is None else threads, persistent=True)
    key = backend.scene.default_keyframe
    b.reset(keyframe=m.key(key).id if key else -1)
    ctrl_v, qpos_v, qvel_v = b.bind("ctrl"), b.bind("qpos"), b.bind("qvel")
    ctrl = np.asarray(ctrl, dtype=np.float64)

    def call():
        ctrl_v[...] = ctrl
        b.step(None, nsteps, 0)
        return qpos_v.astype(np.float32), qvel_v.astype(np.float32)

    return call, lambda: None


def _raw_motrix(scene: str, n: int, sim_dt: float, nsteps: int, backend, ctrl) -> tuple[Call, Call]:
    import motrixsim

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        M = motrixsim.load_model(scene)
    M.options.timestep = sim_dt
    if getattr(backend.options, "max_iterations", None) is not None:
        M.options.max_iterations = backend.options.max_iterations
    D = motrixsim.SceneData(M, batch=[n])
    keys = [k for k in M.keyframes if k.name == backend.scene.default_keyframe]
    if keys:
        keys[0].apply(D)
    M.forward_kinematic(D)
    ctrl = np.ascontiguousarray(ctrl, dtype=np.float32)

    def call():
        D.actuator_ctrls = ctrl
        if nsteps == 1:
            M.step(D)
        else:
            M.step_n(D, nsteps)
        return D.dof_pos, D.dof_vel

    return call, lambda: None


#: backend name -> ``fn(scene, n, sim_dt, nsteps, backend, ctrl) -> (call, close)``; ``backend`` is the
#: contract backend of the same cell (its options, keyframe and ``ctrl`` are mirrored by the raw loop).
RAW_STEPPERS: dict[str, Callable[..., tuple[Call, Call]]] = {"mujoco": _raw_mujoco, "motrix": _raw_motrix}


def raw_stepper(backend_name: str, scene: str, n: int, sim_dt: float, nsteps: int, backend,
                ctrl: np.ndarray) -> tuple[Call, Call]:
    """``(call, close)`` of the raw-engine loop for ``backend_name`` (``KeyError`` if none)."""
    return RAW_STEPPERS[backend_name](scene, n, sim_dt, nsteps, backend, ctrl)


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


def _calibrate(call: Call, target_s: float = 0.01) -> float:
    """Seconds per call, from a batch of calls lasting about ``target_s`` (after a warm-up call)."""
    call()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            call()
        dt = time.perf_counter() - t0
        if dt >= target_s or n >= 1 << 16:
            return max(dt / n, 1e-8)
        n *= 2


def measure(calls: Mapping[str, Call], budget_s: float, rounds: int = 5, steps: int | None = None) -> dict[str, float]:
    """Best per-call seconds of each callable; rounds interleave them (warm-up first). Each
    round runs every callable ``steps`` times, or as often as fits ``budget_s`` over all rounds."""
    per_call = max(_calibrate(call) for call in calls.values())
    per_round = steps if steps else max(3, int(budget_s / rounds / len(calls) / per_call))
    best = dict.fromkeys(calls, np.inf)
    for _ in range(rounds):
        for name, call in calls.items():
            t = time.perf_counter()
            for _ in range(per_round):
                call()
            best[name] = min(best[name], (time.perf_counter() - t) / per_round)
    return best


def bench_cell(name: str, scene: str, n: int, *, sim_dt: float = 0.002, nsteps: int = 4, budget_s: float = 1.0,
               options: Mapping[str, object] | None = None, steps: int | None = None) -> dict:
    """One row: contract and raw env-steps/s (physics steps × envs per second), ratio, cold start."""
    backend, con, cold, ctrl = contract_stepper(name, scene, n, sim_dt, nsteps, options)
    row: dict = {"backend": name, "num_envs": n, "nsteps": nsteps, "sim_dt": sim_dt, "cold_start_s": cold,
                 "options": {k: repr(v) for k, v in (options or {}).items()}}
    try:
        calls = {"contract": con}
        raw_close = None
        if name in RAW_STEPPERS:
            raw, raw_close = raw_stepper(name, scene, n, sim_dt, nsteps, backend, ctrl)
            calls = {"raw": raw, "contract": con}
        best = measure(calls, budget_s, steps=steps)
        if raw_close:
            raw_close()
    finally:
        backend.close()
    row["contract_us_per_call"] = best["contract"] * 1e6
    row["contract_env_steps_per_s"] = n * nsteps / best["contract"]
    if "raw" in best:
        row["raw_us_per_call"] = best["raw"] * 1e6
        row["raw_env_steps_per_s"] = n * nsteps / best["raw"]
        row["ratio"] = best["raw"] / best["contract"]
        row["overhead_us_per_call"] = (best["contract"] - best["raw"]) * 1e6
    else:
        row["ratio"] = None
        row["note"] = f"no raw-engine loop for {name!r} (known: {sorted(RAW_STEPPERS)})"
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
    from .cli import _table

    out = []
    for r in rows:
        if "error" in r:
            out.append([r["backend"], r["num_envs"], "error", "", "", "", "", r["error"][:80]])
            continue
        raw = r.get("raw_env_steps_per_s")
        out.append([r["backend"], r["num_envs"], f"{r['contract_env_steps_per_s']:,.0f}",
                    "-" if raw is None else f"{raw:,.0f}",
                    "-" if r.get("ratio") is None else f"{r['ratio']:.2f}",
                    "-" if raw is None else f"{r['overhead_us_per_call']:.1f}",
                    f"{r['cold_start_s']:.3f}", r.get("note", "")])
    return _table(out, ("backend", "N", "env-steps/s", "raw env-steps/s", "ratio", "overhead µs/call",
                        "cold start s", "note"))


def cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
