"""Contract overhead of the MuJoCo backend against raw ``mujoco.batch.Batch``, in one run.

raw:      write ctrl, ``Batch.step(nstep=nsteps)``, copy qpos and qvel out.
contract: ``backend.step(ctrl, nsteps)`` then ``get_qpos()`` and ``get_qvel()`` (same data).

Both run the demo quadruped from the "home" keyframe under a PD hold, with the same
thread count. The contract's step also computes the forward stages up to ``mjSTAGE_VEL`` at the new
state so that getters are current (free in a persistent batch); the raw loop does not
by default (its derived fields lag a substep): ``--raw-stage vel`` gives it the same.
Measurements of raw and contract are interleaved in rounds (best round kept), so that
other load on the machine hits both alike.

    python benchmarks/mujoco_overhead.py [--envs 1 64 512] [--threads 2] [--nsteps 4] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import mujoco  # noqa: E402
import numpy as np
from mujoco.batch import Batch  # noqa: E402

import unisim_core  # noqa: E402
import unisim_mujoco  # noqa: F401  (sets MUJOCO_GL before mujoco is imported)
from unisim_core import SceneCfg  # noqa: E402
from unisim_mujoco import MujocoBackend  # noqa: E402

SCENE = Path(unisim_core.__file__).parent / "scenes" / "quadruped.xml"
STAGES = {"none": 0, "vel": int(mujoco.mjtStage.mjSTAGE_VEL), "acc": int(mujoco.mjtStage.mjSTAGE_ACC)}


def make_raw(num_envs: int, threads: int, nsteps: int, stage: int):
    m = mujoco.MjModel.from_xml_path(str(SCENE))
    m.opt.timestep = 0.002
    b = Batch(m, num_envs, threads, persistent=True)
    b.reset(keyframe=m.key("home").id)
    ctrl_v, qpos_v, qvel_v = b.bind("ctrl"), b.bind("qpos"), b.bind("qvel")
    ctrl = np.tile(m.key_qpos[m.key("home").id][7:], (num_envs, 1)).astype(np.float32)

    def call():
        ctrl_v[...] = ctrl
        b.step(None, nsteps, stage)
        return qpos_v.astype(np.float32), qvel_v.astype(np.float32)

    return call, lambda: None


def make_contract(num_envs: int, threads: int, nsteps: int):
    sim = MujocoBackend(SceneCfg(str(SCENE), default_keyframe="home"), num_envs, 0.002, threads=threads)
    ctrl = np.tile(sim.get_default_dof_pos(), (num_envs, 1)).astype(np.float32)

    def call():
        sim.step(ctrl, nsteps)
        return sim.get_qpos(), sim.get_qvel()

    return call, sim.close


def measure(calls: dict, budget_s: float, rounds: int = 5) -> dict:
    """Best per-call time of each callable; rounds interleave them so that load on the
    machine (other processes) hits both alike."""
    t0 = time.perf_counter()
    for call in calls.values():
        call()  # warm up
    per_round = max(3, int(budget_s / rounds / max((time.perf_counter() - t0) / len(calls), 1e-7)))
    best = dict.fromkeys(calls, np.inf)
    for _ in range(rounds):
        for name, call in calls.items():
            t0 = time.perf_counter()
            for _ in range(per_round):
                call()
            best[name] = min(best[name], (time.perf_counter() - t0) / per_round)
    return best


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--envs", type=int, nargs="+", default=[1, 64, 512])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--nsteps", type=int, default=4)
    ap.add_argument("--budget", type=float, default=2.0, help="seconds per engine and N (split in rounds)")
    ap.add_argument("--raw-stage", choices=sorted(STAGES), default="none",
                    help="forward stage the raw loop computes after stepping (contract: vel/acc)")
    ap.add_argument("--json", type=Path, default=None, help="write the rows as JSON here")
    args = ap.parse_args(argv)
    rows = []
    header = f"{'N':>5} {'raw us/call':>12} {'contract us/call':>17} {'raw env-steps/s':>16} " \
             f"{'contract env-steps/s':>21} {'ratio':>6} {'overhead us/call':>17}"
    print(f"quadruped, threads={args.threads}, nsteps={args.nsteps}, raw stage={args.raw_stage}")
    print(header)
    for n in args.envs:
        raw_call, raw_close = make_raw(n, args.threads, args.nsteps, STAGES[args.raw_stage])
        con_call, con_close = make_contract(n, args.threads, args.nsteps)
        try:
            best = measure({"raw": raw_call, "contract": con_call}, args.budget)
        finally:
            raw_close()
            con_close()
        raw, con = best["raw"], best["contract"]
        row = {"num_envs": n, "threads": args.threads, "nsteps": args.nsteps, "raw_stage": args.raw_stage,
               "raw_us": raw * 1e6, "contract_us": con * 1e6,
               "raw_env_steps_per_s": n * args.nsteps / raw, "contract_env_steps_per_s": n * args.nsteps / con,
               "throughput_ratio": raw / con, "overhead_us": (con - raw) * 1e6}
        rows.append(row)
        print(f"{n:>5} {row['raw_us']:>12.1f} {row['contract_us']:>17.1f} {row['raw_env_steps_per_s']:>16.0f} "
              f"{row['contract_env_steps_per_s']:>21.0f} {row['throughput_ratio']:>6.3f} {row['overhead_us']:>17.1f}")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2))
    return rows


if __name__ == "__main__":
    main()
