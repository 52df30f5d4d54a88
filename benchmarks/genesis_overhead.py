"""Contract overhead of unisim-genesis against raw Genesis calls, and the mujoco backend.

Per row (one N), interleaved in rounds in one run (best round kept), each call = ``nsteps``
physics steps of all N envs of the shipped quadruped holding its ``home`` pose:

raw:      unisim_genesis' raw stepper (also behind ``unisim bench``): entity.control_dofs_position,
          scene.step() x nsteps, entity.get_qpos() and get_dofs_velocity() as numpy, on the
          backend's own Genesis scene (the same engine instance: the difference is the adapter)
contract: backend.step(ctrl, nsteps); backend.get_qpos(); backend.get_qvel()
mujoco:   the unisim-mujoco backend, same calls

  python benchmarks/genesis_overhead.py [--device cpu|cuda] [--envs 4 64] [--nsteps 4] [--seconds 2]

The first run on a machine compiles Genesis' kernels (minutes on a CPU; cached afterwards): that
time is the ``construct_s`` column, not part of the per-call times.
"""

from __future__ import annotations

import argparse
import json
import os
import time

from unisim_core.bench import contract_stepper, measure
from unisim_genesis._bench import raw_stepper

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SCENE = os.path.join(HERE, "..", "unisim_core", "scenes", "quadruped.xml")


def bench(scene: str, n: int, device: str | None, nsteps: int, dt: float, seconds: float,
          with_mujoco: bool = True) -> dict:
    options = {} if device is None else {"device": device}
    t0 = time.perf_counter()
    backend, contract, _, ctrl = contract_stepper("genesis", scene, n, dt, nsteps, options)
    construct_s = time.perf_counter() - t0
    device = backend.device
    raw, _ = raw_stepper(scene, n, dt, nsteps, backend, ctrl)
    calls = {"raw": raw, "contract": contract}
    mj = None
    if with_mujoco:
        mj, mj_call, _, _ = contract_stepper("mujoco", scene, n, dt, nsteps)
        calls["mujoco"] = mj_call
    try:
        best = measure(calls, seconds)
    finally:
        backend.close()
        if mj is not None:
            mj.close()
    row = {"num_envs": n, "nsteps": nsteps, "device": device, "construct_s": construct_s,
           **{f"{k}_ms": v * 1e3 for k, v in best.items()}}
    row["ratio"] = best["raw"] / best["contract"]
    if "mujoco" in best:
        row["mujoco_over_genesis"] = best["contract"] / best["mujoco"]
    return row


def format_rows(rows: list[dict]) -> str:
    lines = [f"{'N':>5} {'device':>7} {'construct s':>12} {'raw ms':>9} {'contract ms':>12} {'raw/contract':>13} "
             f"{'mujoco ms':>10} {'genesis/mujoco':>15}"]
    for r in rows:
        mj = (f"{r['mujoco_ms']:>10.2f} {r['mujoco_over_genesis']:>15.1f}" if "mujoco_ms" in r
              else f"{'-':>10} {'-':>15}")
        lines.append(f"{r['num_envs']:>5} {r['device']:>7} {r['construct_s']:>12.1f} {r['raw_ms']:>9.2f} "
                     f"{r['contract_ms']:>12.2f} {r['ratio']:>13.3f} {mj}")
    return "\n".join(lines)


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scene", default=DEFAULT_SCENE, help="MJCF with a 'home' keyframe (default: quadruped)")
    p.add_argument("--device", default=None, help="cpu or cuda (default: cuda when torch sees one, else cpu)")
    p.add_argument("--envs", type=int, nargs="+", default=[4, 64])
    p.add_argument("--nsteps", type=int, default=4, help="physics steps per call")
    p.add_argument("--dt", type=float, default=0.002)
    p.add_argument("--seconds", type=float, default=2.0, help="measuring budget per N (all variants)")
    p.add_argument("--no-mujoco", action="store_true", help="skip the unisim-mujoco column")
    p.add_argument("--json", help="write the rows to this JSON file")
    a = p.parse_args(argv)
    scene = os.path.abspath(a.scene)
    rows = [bench(scene, n, a.device, a.nsteps, a.dt, a.seconds, not a.no_mujoco) for n in a.envs]
    print(format_rows(rows), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"scene": scene, "dt": a.dt, "rows": rows}, f, indent=2)
    return rows


if __name__ == "__main__":
    main()
