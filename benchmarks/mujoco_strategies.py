"""Ways to step N MuJoCo envs on a few threads, against the physical limit, in one run.

Workload (gymnasium's ant, as ``vs_unisim_core.py``): write ``ctrl (N, 8)`` from a seeded
sequence, step 4 substeps of 0.01 s, read qpos and qvel. Every strategy runs the same number of
calls in interleaved rounds from the same start, so all time the same trajectory (contacts, hence
costs, match). Reported per strategy: wall µs per call (median call: the first call of a round
finds the caches cold), ``of limit`` = limit / wall,
where the limit is one env's single-thread ``mj_step`` cost × N / min(N, threads), and
``cpu eff`` = one env's cost × N / the process CPU time per call (what the strategy spends,
whatever else runs on the machine: the better measure on a shared one).

- ``batch p vel``: ``Batch(persistent=True)``, ``step(stage=mjSTAGE_VEL)`` (the MuJoCo backend
  before it went non-persistent);
- ``batch p``: persistent, no forward stage after the step;
- ``batch np``: one MjData per thread (``persistent=False``), no stage (UniSim reading qpos/qvel);
- ``batch np vel``: the same computing ``mjSTAGE_VEL`` in the call (UniSim reading poses too);
- ``batch np 4x1``: four ``step(nstep=1)`` calls instead of one ``step(nstep=4)``;
- ``rollout``: ``mujoco.rollout.Rollout`` (persistent pool), state rows in and out per call;
- ``py threads``: a Python ``ThreadPoolExecutor`` over one MjData per env (``mj_step`` releases the GIL);
- ``unisim``: ``create_backend("mujoco", ..., threads=T)`` ``step`` + ``get_qpos`` + ``get_qvel``.

    python benchmarks/mujoco_strategies.py [--envs 1 64 512] [--threads 2] [--seconds 2]
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ThreadPoolExecutor

import mujoco
import numpy as np
from mujoco import rollout
from mujoco.batch import Batch
from vs_unisim_core import CTRL_CYCLE, SIM_DT, ant_xml, ctrl_sequence, one_env_loop

from unisim_core import SceneCfg, create_backend

NSTEPS = 4
_VEL = int(mujoco.mjtStage.mjSTAGE_VEL)


def batch(m, n, threads, persistent, stage=0, split=False):
    b = Batch(m, n, threads, persistent=persistent)
    b.reset()
    ctrl, qpos, qvel = b.bind("ctrl"), b.bind("qpos"), b.bind("qvel")
    seq = ctrl_sequence(n, m.nu)

    def call(i):
        ctrl[...] = seq[i % CTRL_CYCLE]
        if split:
            for _ in range(NSTEPS):
                b.step(None, 1, stage)
        else:
            b.step(None, NSTEPS, stage)
        return qpos.astype(np.float32), qvel.astype(np.float32)

    return call, lambda: None


def rollout_pool(m, n, threads):
    pool = rollout.Rollout(nthread=threads)
    datas = [mujoco.MjData(m) for _ in range(threads)]
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state = np.zeros((n, mujoco.mj_stateSize(m, spec)))
    d = mujoco.MjData(m)
    mujoco.mj_getState(m, d, state[0], spec)
    state[:] = state[0]
    out = np.zeros((n, NSTEPS, state.shape[1]))
    seq = ctrl_sequence(n, m.nu).astype(np.float64)
    qpos = slice(1, 1 + m.nq)
    qvel = slice(1 + m.nq, 1 + m.nq + m.nv)

    def call(i):
        u = np.repeat(seq[i % CTRL_CYCLE][:, None], NSTEPS, axis=1)
        pool.rollout([m] * n, datas, state, u, nstep=NSTEPS, state=out)
        state[:] = out[:, -1]
        return state[:, qpos].astype(np.float32), state[:, qvel].astype(np.float32)

    return call, pool.close


def py_threads(m, n, threads):
    datas = [mujoco.MjData(m) for _ in range(n)]
    seq = ctrl_sequence(n, m.nu)
    qpos, qvel = np.zeros((n, m.nq), np.float32), np.zeros((n, m.nv), np.float32)
    chunks = np.array_split(np.arange(n), min(n, threads))
    pool = ThreadPoolExecutor(max(1, len(chunks) - 1))

    def work(ids, u):
        for j in ids:
            d = datas[j]
            d.ctrl[:] = u[j]
            for _ in range(NSTEPS):
                mujoco.mj_step(m, d)
            qpos[j], qvel[j] = d.qpos, d.qvel

    def call(i):
        u = seq[i % CTRL_CYCLE]
        futures = [pool.submit(work, c, u) for c in chunks[1:]]
        work(chunks[0], u)
        for f in futures:
            f.result()
        return qpos.copy(), qvel.copy()

    return call, pool.shutdown


def unisim(xml, n, threads):
    sim = create_backend("mujoco", SceneCfg(xml), n, SIM_DT, threads=threads)
    seq = ctrl_sequence(n, sim.num_actuators)

    def call(i):
        sim.step(seq[i % CTRL_CYCLE], NSTEPS)
        return sim.get_qpos(), sim.get_qvel()

    return call, sim.close


def run(n: int, threads: int, seconds: float, rounds: int = 7) -> None:
    xml = ant_xml()
    m = mujoco.MjModel.from_xml_path(xml)
    m.opt.timestep = SIM_DT
    loops = {
        "batch p vel": batch(m, n, threads, True, _VEL),
        "batch p": batch(m, n, threads, True),
        "batch np": batch(m, n, threads, False),
        "batch np vel": batch(m, n, threads, False, _VEL),
        "batch np 4x1": batch(m, n, threads, False, split=True),
        "rollout": rollout_pool(m, n, threads),
        "py threads": py_threads(m, n, threads),
        "unisim": unisim(xml, n, threads),
    }
    probe, k = one_env_loop(m, n, NSTEPS)
    calls = {name: c for name, (c, _) in loops.items()} | {"one env": probe}
    for call in calls.values():
        for i in range(50):  # the ant lands
            call(i)
    per_round = max(3, int(seconds / rounds / (40e-6 * NSTEPS * n / min(n, threads) + 1e-4)))
    wall = {name: [] for name in calls}
    cpu = {name: [] for name in calls}
    i = 50
    for _ in range(rounds):
        for name, call in calls.items():
            c = time.process_time()
            for j in range(per_round):
                t = time.perf_counter()
                call(i + j)
                wall[name].append(time.perf_counter() - t)
            cpu[name].append((time.process_time() - c) / per_round)
        i += per_round
    for _, close in loops.values():
        close()
    env_cost = float(np.median(wall["one env"])) / k
    limit = env_cost * n / min(n, threads)
    print(f"\nN={n}: one env {env_cost * 1e6:.1f} µs per call of {NSTEPS} substeps, limit {limit * 1e6:,.0f} µs "
          f"({threads} threads)")
    print(f"{'strategy':>14} {'µs/call':>10} {'of limit':>9} {'cpu eff':>8}")
    for name in loops:
        w, c = float(np.median(wall[name])), float(np.median(cpu[name]))
        print(f"{name:>14} {w * 1e6:>10,.0f} {limit / w:>9.3f} {env_cost * n / c:>8.3f}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--envs", type=int, nargs="+", default=[1, 64, 512])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=2.0, help="timed seconds per strategy and N")
    args = ap.parse_args(argv)
    for n in args.envs:
        run(n, args.threads, args.seconds)


if __name__ == "__main__":
    main()
