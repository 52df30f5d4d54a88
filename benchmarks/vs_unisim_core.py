"""UniSim (mujoco backend) against the registry's ``unisim-core[mujoco]==2.2.0``, side by side.

Same model (gymnasium's ant), same workload, same CPUs: every call writes ``ctrl (N, 8)``
float32 (a fixed seeded sequence, cycled), steps ``--nsteps`` substeps of 0.01 s and reads
qpos and qvel as float32. The stacks run *alternately*, one subprocess each per round
(``--rounds``), pinned to the same ``--threads`` CPUs; the table holds the median over rounds
of each run's median µs per call, and the speedup (their time / ours) in wall time and in CPU
time of the process (the latter is not inflated by other load on a shared machine).

- ``unisim-core 2.2.0``: steps MuJoCo 3.11 through ``mjbatch-uni``; timed through the fastest of
  its two public hot paths, ``step_tensor`` + ``get_state_views`` and the host-bridge plan
  (``write_control``, ``step``, ``read_state_sensors``), each with its own CPU torch tensors.
- ``UniSim``: ``backend.step(ctrl, nsteps)``, ``get_qpos()``, ``get_qvel()``.
- ``limit``: the physical limit, one env stepped by ``mj_step`` on one thread, × N × nsteps /
  min(N, threads), measured in our process (MuJoCo 4) and in theirs (MuJoCo 3.11).

Every loop first steps 50 calls, so the ant has landed and all loops time the same regime.
The other stack lives in a virtual environment built once and cached (``--venv``, default
``~/.cache/unisim/bench-venvs/unisim-core-2.2.0``): ``pip install torch==2.13.0
unisim-core[mujoco]==2.2.0`` (``torch==2.13.0`` resolves to the CPU wheel that
``requirements-heavy.txt`` uses; a machine without it downloads the default build).

    python benchmarks/vs_unisim_core.py [--envs 1 64 512] [--threads 2] [--rounds 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

OTHER = "unisim-core[mujoco]==2.2.0"
DEFAULT_VENV = Path.home() / ".cache" / "unisim" / "bench-venvs" / "unisim-core-2.2.0"
SIM_DT = 0.01
WARMUP_CALLS = 50
CTRL_CYCLE = 16
STREAMS = 64


def ant_xml() -> str:
    """gymnasium's ant, the model both stacks load (gymnasium is a dev requirement)."""
    import gymnasium

    return str(Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets" / "ant.xml")


# ---------------------------------------------------------------------------------- in a worker
def ctrl_sequence(n: int, nu: int) -> np.ndarray:
    """``(CTRL_CYCLE, n, nu)`` float32 controls in [-1, 1], the same for both stacks; env i follows
    stream ``i % STREAMS`` whatever N."""
    streams = np.random.default_rng(0).uniform(-1.0, 1.0, (CTRL_CYCLE, STREAMS, nu)).astype(np.float32)
    return np.ascontiguousarray(streams[:, np.arange(n) % STREAMS])


def time_loop(call, est_s: float, budget_s: float, blocks: int = 5) -> np.ndarray:
    """``[wall, cpu]``: median seconds per call (wall clock, and CPU time of this process, which
    other load on the machine does not inflate) over ``blocks`` timed blocks, after
    ``WARMUP_CALLS`` calls."""
    for i in range(WARMUP_CALLS):
        call(i)
    per_block = max(3, int(budget_s / blocks / est_s))
    times, i = [], WARMUP_CALLS
    for _ in range(blocks):
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(per_block):
            call(i)
            i += 1
        times.append([time.perf_counter() - t0, time.process_time() - c0])
    return np.median(times, axis=0) / per_block


def one_env_loop(m, n: int, nsteps: int):
    """``(call, k)``: ``call(i)`` steps one env at a time on this thread with plain ``mj_step``,
    ``k = min(n, 8)`` envs under the first ``k`` control streams (contacts, hence costs, differ
    between envs); its time / k is one env's cost."""
    import mujoco

    datas = [mujoco.MjData(m) for _ in range(min(n, 8))]
    seq = ctrl_sequence(len(datas), m.nu)

    def call(i):
        for j, d in enumerate(datas):
            d.ctrl[:] = seq[i % CTRL_CYCLE, j]
            for _ in range(nsteps):
                mujoco.mj_step(m, d)
        return [(d.qpos.astype(np.float32), d.qvel.astype(np.float32)) for d in datas]

    return call, len(datas)


def one_env_cost(xml: str, n: int, nsteps: int, budget_s: float) -> np.ndarray:
    """Seconds of one env's ``nsteps`` single-thread ``mj_step`` calls (``one_env_loop``)."""
    import mujoco

    m = mujoco.MjModel.from_xml_path(xml)
    m.opt.timestep = SIM_DT
    call, k = one_env_loop(m, n, nsteps)
    return time_loop(call, 40e-6 * nsteps * k, budget_s) / k


def ours(xml: str, n: int, threads: int, nsteps: int, budget_s: float) -> np.ndarray:
    from unisim_core import SceneCfg, create_backend

    sim = create_backend("mujoco", SceneCfg(xml), n, SIM_DT, threads=threads)
    seq = ctrl_sequence(n, sim.num_actuators)

    def call(i):
        sim.step(seq[i % CTRL_CYCLE], nsteps)
        return sim.get_qpos(), sim.get_qvel()

    try:
        return time_loop(call, 40e-6 * nsteps * n / min(n, threads), budget_s)
    finally:
        sim.close()


def theirs(xml: str, n: int, threads: int, nsteps: int, budget_s: float) -> np.ndarray:
    """unisim-core 2.2.0's faster public hot path (it sizes its pool to the CPUs this process may use)."""
    import torch
    from unisim import create_backend
    from unisim.backend.base import TensorIOSpec
    from unisim.scene import SceneCfg

    torch.set_num_threads(1)
    be = create_backend("mujoco", scene=SceneCfg(model_file=xml), num_envs=n, sim_dt=SIM_DT)
    be.materialize()
    seq = torch.from_numpy(ctrl_sequence(n, be.num_actuators))
    plan = be.bind_host_bridge_io(TensorIOSpec(state_fields=("qpos", "qvel"), device="cpu"))

    def tensor_api(i):
        be.step_tensor(seq[i % CTRL_CYCLE], nsteps)
        views = be.get_state_views(("qpos", "qvel"))
        return views["qpos"], views["qvel"]

    def host_bridge(i):
        plan.write_control(seq[i % CTRL_CYCLE])
        plan.step(nsteps)
        views = plan.read_state_sensors()
        return views["qpos"], views["qvel"]

    est = 40e-6 * nsteps * n / min(n, threads)
    try:
        return min(time_loop(tensor_api, est, budget_s / 2), time_loop(host_bridge, est, budget_s / 2),
                   key=lambda t: t[0])
    finally:
        plan.close()
        be.close()


def worker(args) -> None:
    """Time one stack at every N and print one JSON line: ``{"calls": {N: [wall, cpu]}, "one_env": ...}``
(seconds per call)."""
    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[: args.threads])
    import mujoco

    run = ours if args.worker == "ours" else theirs
    budget = lambda n: args.seconds * (1 + np.log10(n))  # noqa: E731  (bigger N: fewer, longer calls)
    out = {"mujoco": mujoco.__version__, "calls": {}, "one_env": {}}
    for n in args.envs:
        out["one_env"][str(n)] = one_env_cost(args.xml, n, args.nsteps, args.seconds).tolist()
        out["calls"][str(n)] = run(args.xml, n, args.threads, args.nsteps, budget(n)).tolist()
    print(json.dumps(out))


# ---------------------------------------------------------------------------------- driver
def ensure_venv(venv: Path) -> Path:
    """The other stack's interpreter, building its virtual environment the first time."""
    python = venv / "bin" / "python"
    marker = venv / ".unisim-bench-ready"
    if marker.exists():
        return python
    print(f"building {venv} with {OTHER} and a CPU torch (once; cached) ...", file=sys.stderr, flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "torch==2.13.0", OTHER], check=True)
    marker.write_text(OTHER + "\n")
    return python


def run_worker(python: Path, which: str, args) -> dict:
    cmd = [str(python), __file__, "--worker", which, "--xml", args.xml, "--threads", str(args.threads),
           "--nsteps", str(args.nsteps), "--seconds", str(args.seconds), "--envs", *map(str, args.envs)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    if proc.returncode:
        raise SystemExit(f"{which} worker failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def table(args, runs: dict[str, list[dict]]) -> list[dict]:
    """Per N: medians over rounds of wall and CPU µs per call, the limits and the ratios."""
    rows = []
    for n in args.envs:
        k = str(n)
        wall, cpu = ({w: float(np.median([r["calls"][k][col] for r in runs[w]])) * 1e6 for w in runs}
                     for col in (0, 1))
        limit = {w: float(np.median([r["one_env"][k][0] for r in runs[w]])) * n / min(n, args.threads) * 1e6
                 for w in runs}
        rows.append({"num_envs": n, "limit_us_mujoco4": limit["ours"], "limit_us_mujoco311": limit["theirs"],
                     "unisim_core_2_2_0_us": wall["theirs"], "unisim_us": wall["ours"],
                     "speedup": wall["theirs"] / wall["ours"], "cpu_speedup": cpu["theirs"] / cpu["ours"],
                     "of_limit": limit["ours"] / wall["ours"], "theirs_of_limit": limit["theirs"] / wall["theirs"],
                     "rounds_unisim_us": [r["calls"][k][0] * 1e6 for r in runs["ours"]],
                     "rounds_unisim_core_us": [r["calls"][k][0] * 1e6 for r in runs["theirs"]]})
    return rows


def main(argv: list[str] | None = None) -> list[dict] | None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--envs", type=int, nargs="+", default=[1, 64, 512])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--nsteps", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=1.0, help="timed seconds per stack and N=1 (more at larger N)")
    ap.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--worker", choices=["ours", "theirs"], help=argparse.SUPPRESS)
    ap.add_argument("--xml", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args)
    args.xml = ant_xml()
    pythons = {"theirs": ensure_venv(args.venv), "ours": Path(sys.executable)}
    runs: dict[str, list[dict]] = {"theirs": [], "ours": []}
    for r in range(args.rounds):
        for which, python in pythons.items():
            runs[which].append(run_worker(python, which, args))
            print(f"round {r + 1}/{args.rounds}: {which} done", file=sys.stderr, flush=True)
    rows = table(args, runs)
    print(f"ant, {args.nsteps} substeps of {SIM_DT} s per call, {args.threads} threads, median of "
          f"{args.rounds} alternating rounds (µs per call)")
    print(f"{'N':>5} {'limit (MuJoCo 4 / 3.11)':>24} {'unisim-core 2.2.0':>18} {'UniSim':>9} "
          f"{'speedup':>8} {'CPU speedup':>12} {'UniSim of limit':>16} {'them of limit':>14}")
    for r in rows:
        print(f"{r['num_envs']:>5} {r['limit_us_mujoco4']:>11,.0f} / {r['limit_us_mujoco311']:<10,.0f} "
              f"{r['unisim_core_2_2_0_us']:>18,.0f} {r['unisim_us']:>9,.0f} {r['speedup']:>7.2f}x "
              f"{r['cpu_speedup']:>11.2f}x {r['of_limit']:>16.2f} {r['theirs_of_limit']:>14.2f}")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2))
    return rows


if __name__ == "__main__":
    main()
