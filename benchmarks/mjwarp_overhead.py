"""Contract overhead of unisim-mjwarp against raw MuJoCo Warp (same device), and the mujoco backend.

Per row (one N), side by side in one run, each call = one physics step of all N worlds:

raw:      unisim bench's raw loop (unisim_mjwarp._bench.raw_stepper, one substep a call): d.ctrl.assign(ctrl);
          the substep's captured graph replayed on the backend's own Model/Data; d.qpos.numpy(); d.qvel.numpy()
contract: backend.step(ctrl, 1); backend.get_qpos(); backend.get_qvel()
views:    backend.step(ctrl, 1) and the state read through get_device_arrays() (no host copy)
mujoco:   the unisim-mujoco backend (CPU thread pool), step + get_qpos + get_qvel

  python benchmarks/mjwarp_overhead.py [--device cpu|cuda] [--envs 64 256 1024 4096] [--seconds 2] [--json out.json]

On a CPU, warp runs the worlds one core at a time: expect ~1-2 ms per world and step for the
quadruped, so large N take seconds per call; keep ``--seconds`` small there. The first run on a
machine compiles warp's kernels (cached afterwards); that time is reported separately.
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


def bench(scene: str, num_envs: int, device: str, seconds: float, with_mujoco: bool = True, rounds: int = 2) -> dict:
    import warp as wp

    from unisim_core import SceneCfg, create_backend
    from unisim_mjwarp._bench import raw_stepper

    t0 = time.perf_counter()
    backend = create_backend("mjwarp", SceneCfg(scene, default_keyframe="home"), num_envs, DT, device=device)
    construct_s = time.perf_counter() - t0
    ctrl = np.tile(backend.get_default_dof_pos(), (num_envs, 1)).astype(np.float32)
    raw, _ = raw_stepper(scene, num_envs, DT, 1, backend, ctrl)
    views = backend.get_device_arrays()

    def contract():
        backend.step(ctrl, 1)
        return backend.get_qpos(), backend.get_qvel()

    def on_device():
        backend.step(ctrl, 1)
        wp.synchronize_device(backend.device)
        return views.qpos, views.qvel

    row = {"num_envs": num_envs, "device": backend.device, "construct_s": construct_s}
    t_raw, t_con, t_dev = [], [], []
    for _ in range(rounds):  # interleaved: the variants share thermal and load conditions
        t_raw.append(median_call_s(raw, seconds / (3 * rounds)))
        t_con.append(median_call_s(contract, seconds / (3 * rounds)))
        t_dev.append(median_call_s(on_device, seconds / (3 * rounds)))
    backend.close()
    row.update(raw_ms=min(t_raw) * 1e3, contract_ms=min(t_con) * 1e3, views_ms=min(t_dev) * 1e3)
    row["ratio"] = row["raw_ms"] / row["contract_ms"]
    row["views_ratio"] = row["raw_ms"] / row["views_ms"]
    if with_mujoco:
        with create_backend("mujoco", SceneCfg(scene, default_keyframe="home"), num_envs, DT) as mj:
            mj_ctrl = ctrl.astype(mj.np_dtype)
            mj_call = lambda: (mj.step(mj_ctrl, 1), mj.get_qpos(), mj.get_qvel())  # noqa: E731
            row["mujoco_ms"] = median_call_s(mj_call, seconds / 3) * 1e3
    return row


def format_rows(rows: list[dict]) -> str:
    head = (f"{'N':>5} {'device':>7} {'raw ms':>9} {'contract ms':>12} {'views ms':>9} {'raw/contract':>13} "
            f"{'raw/views':>10} {'mujoco ms':>10} {'env-steps/s':>12}")
    lines = [head]
    for r in rows:
        mj = f"{r['mujoco_ms']:>10.2f}" if "mujoco_ms" in r else f"{'-':>10}"
        lines.append(f"{r['num_envs']:>5} {r['device']:>7} {r['raw_ms']:>9.2f} {r['contract_ms']:>12.2f} "
                     f"{r['views_ms']:>9.2f} {r['ratio']:>13.3f} {r['views_ratio']:>10.3f} {mj} "
                     f"{r['num_envs'] / r['contract_ms'] * 1e3:>12,.0f}")
    return "\n".join(lines)


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scene", default=DEFAULT_SCENE, help="MJCF with a 'home' keyframe (default: quadruped)")
    p.add_argument("--device", default=None, help="warp device (default: cuda when present, else cpu)")
    p.add_argument("--envs", type=int, nargs="+", default=[64, 256, 1024, 4096])
    p.add_argument("--seconds", type=float, default=2.0, help="measuring time per N (all variants together)")
    p.add_argument("--rounds", type=int, default=2, help="interleaved rounds of the three variants (min is kept)")
    p.add_argument("--no-mujoco", action="store_true", help="skip the unisim-mujoco column")
    p.add_argument("--json", help="write the rows to this JSON file")
    a = p.parse_args(argv)
    scene = os.path.abspath(a.scene)
    rows = []
    for n in a.envs:
        rows.append(bench(scene, n, a.device, a.seconds, with_mujoco=not a.no_mujoco, rounds=a.rounds))
        print(format_rows(rows[-1:]).splitlines()[-1] if len(rows) > 1 else format_rows(rows), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"scene": scene, "dt": DT, "rows": rows}, f, indent=2)
    return rows


if __name__ == "__main__":
    main()
