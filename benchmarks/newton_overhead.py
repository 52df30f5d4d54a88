"""Contract overhead of unisim-newton against raw Newton (same device), and the mujoco backend.

Per row (one N), side by side in one run, each call = one physics step of all N worlds:

raw:      unisim bench's raw loop (unisim_newton._bench.raw_stepper, one substep a call):
          ctrl.assign(ctrl); the captured SolverMuJoCo.step(s0, s1) replayed; swap; joint_q/qd.numpy()
contract: backend.step(ctrl, 1); backend.get_qpos(); backend.get_qvel()
mujoco:   the unisim-mujoco backend (CPU thread pool), step + get_qpos + get_qvel

  python benchmarks/newton_overhead.py [--device cpu|cuda] [--envs 4 16] [--seconds 2] [--json out.json]

On a CPU warp runs the worlds one core at a time, so keep N and ``--seconds`` small there. The
first run on a machine compiles warp's kernels (cached afterwards); ``construct_s`` includes it.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from unisim_core.tools.bench import median_call_s

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SCENE = os.path.join(HERE, "..", "unisim_core", "scenes", "quadruped.xml")
DT = 0.005


def bench(scene: str, num_envs: int, device: str, seconds: float, with_mujoco: bool = True) -> dict:
    from unisim_core import SceneCfg, create_backend
    from unisim_newton._bench import raw_stepper

    t0 = time.perf_counter()
    backend = create_backend("newton", SceneCfg(scene, default_keyframe="home"), num_envs, DT, device=device)
    construct_s = time.perf_counter() - t0
    ctrl = np.tile(backend.get_default_dof_pos(), (num_envs, 1)).astype(np.float32)
    raw, _ = raw_stepper(scene, num_envs, DT, 1, backend, ctrl)

    def contract():
        backend.step(ctrl, 1)
        return backend.get_qpos(), backend.get_qvel()

    row = {"num_envs": num_envs, "device": backend.device, "construct_s": construct_s}
    t_raw, t_con = [], []
    for _ in range(2):  # interleaved: the variants share thermal and load conditions
        t_raw.append(median_call_s(raw, seconds / 4))
        t_con.append(median_call_s(contract, seconds / 4))
    backend.close()
    row.update(raw_ms=min(t_raw) * 1e3, contract_ms=min(t_con) * 1e3)
    row["ratio"] = row["raw_ms"] / row["contract_ms"]
    if with_mujoco:
        with create_backend("mujoco", SceneCfg(scene, default_keyframe="home"), num_envs, DT) as mj:
            mj_ctrl = ctrl.astype(mj.np_dtype)
            mj_call = lambda: (mj.step(mj_ctrl, 1), mj.get_qpos(), mj.get_qvel())  # noqa: E731
            row["mujoco_ms"] = median_call_s(mj_call, seconds / 3) * 1e3
    return row


def format_rows(rows: list[dict]) -> str:
    lines = [f"{'N':>5} {'device':>7} {'raw ms':>9} {'contract ms':>12} {'raw/contract':>13} {'mujoco ms':>10} "
             f"{'env-steps/s':>12}"]
    for r in rows:
        mj = f"{r['mujoco_ms']:>10.2f}" if "mujoco_ms" in r else f"{'-':>10}"
        lines.append(f"{r['num_envs']:>5} {r['device']:>7} {r['raw_ms']:>9.2f} {r['contract_ms']:>12.2f} "
                     f"{r['ratio']:>13.2f} {mj} {r['num_envs'] / r['contract_ms'] * 1e3:>12.0f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--envs", type=int, nargs="+", default=[4, 16])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--scene", default=DEFAULT_SCENE)
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    rows = [bench(args.scene, n, args.device, args.seconds) for n in args.envs]
    print(format_rows(rows))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
