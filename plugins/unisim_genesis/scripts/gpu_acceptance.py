"""GPU acceptance of unisim-genesis: one command, under 5 minutes on a CUDA machine.

  python plugins/unisim_genesis/scripts/gpu_acceptance.py [report.json] [--device cuda] [--envs 4096]

Checks, on the device: the quadruped (N envs) stands under a PD hold of ``home`` for 1 s like
MuJoCo (base z within 1 cm of 0.267 m, upright, every env alike); set_state of one env leaves the
others bit-identical; then measures contract env-steps/s. Prints a table and ``PASSED``/``FAILED``;
exit 0 on success, 1 on a failed check, 2 when torch sees no CUDA device (and ``--device`` is not
``cpu``). Kernel compilation (first run on a machine) is reported apart from the timings.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

QUADRUPED = Path(__file__).resolve().parents[3] / "unisim_core" / "scenes" / "quadruped.xml"
HOME = np.array([0.0, 0.9, -1.8] * 4)


def _checks(sim) -> dict:
    from unisim_core.contract import quat as Q

    n = sim.num_envs
    ctrl = np.tile(HOME, (n, 1))
    sim.step(ctrl, 500)
    z = sim.get_base_pos()[:, 2]
    up = Q.quat_apply(sim.get_base_quat(), np.tile([0.0, 0.0, 1.0], (n, 1)))[:, 2]
    stand = {"z_min": float(z.min()), "z_max": float(z.max()), "up_min": float(up.min()),
             "ok": bool(np.all(np.abs(z - 0.267) < 0.01) and np.all(up > np.cos(np.radians(3.0))))}
    before = sim.get_qpos()
    q = before[:1].copy()
    q[0, 2] += 0.05
    sim.set_state(np.array([0]), q, np.zeros((1, sim.nv)))
    after = sim.get_qpos()
    isolation = {"ok": bool(np.array_equal(after[1:], before[1:]) and np.allclose(after[0], q[0], atol=1e-5))}
    return {"pd_stand": stand, "set_state_isolation": isolation}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("report", nargs="?", help="write the JSON report here")
    p.add_argument("--device", default="cuda")
    p.add_argument("--envs", type=int, default=4096)
    p.add_argument("--seconds", type=float, default=5.0, help="timing budget")
    a = p.parse_args(argv)
    import torch

    if a.device != "cpu" and not torch.cuda.is_available():
        print("gpu_acceptance: no CUDA device visible to torch; nothing to accept here (use --device cpu for the "
              "CPU path)", file=sys.stderr)
        return 2
    from unisim_core import SceneCfg, create_backend

    t0 = time.perf_counter()
    sim = create_backend("genesis", SceneCfg(str(QUADRUPED), default_keyframe="home"), a.envs, 0.002,
                         device=a.device)
    report = {"device": sim.device, "num_envs": a.envs, "construct_s": time.perf_counter() - t0}
    try:
        report["checks"] = _checks(sim)
        ctrl = np.tile(HOME, (a.envs, 1))
        calls, t1 = 0, time.perf_counter()
        while time.perf_counter() - t1 < a.seconds or calls < 3:
            sim.step(ctrl, 4)
            sim.get_qpos()
            calls += 1
        report["env_steps_per_s"] = a.envs * 4 * calls / (time.perf_counter() - t1)
    finally:
        sim.close()
    ok = all(c["ok"] for c in report["checks"].values())
    print(f"{'device':>8} {'N':>6} {'construct s':>12} {'env-steps/s':>12}  checks")
    print(f"{report['device']:>8} {a.envs:>6} {report['construct_s']:>12.1f} {report['env_steps_per_s']:>12,.0f}  "
          + ", ".join(f"{k}={'ok' if v['ok'] else 'FAIL'}" for k, v in report["checks"].items()))
    print("PASSED" if ok else "FAILED")
    if a.report:
        Path(a.report).write_text(json.dumps(report, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
