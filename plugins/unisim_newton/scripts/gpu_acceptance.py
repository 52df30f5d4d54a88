"""GPU acceptance of the Newton backend: one command on any machine with an NVIDIA GPU.

    python plugins/unisim_newton/scripts/gpu_acceptance.py [report.json]

Run from a repository checkout with unisim-contract, unisim-mujoco and unisim-newton installed.
Under a 5-minute budget it checks, on ``cuda``: the first backend (kernel compilation is timed;
warp caches it), that 1 s of the PD-held quadruped stands like CPU MuJoCo (base height within
``unisim compare``'s contact tier, 5 mm; level within 3 degrees), then prints the overhead table
of ``benchmarks/newton_overhead.py`` (raw Newton vs the contract vs the mujoco backend) for
N = 64..4096 while the budget lasts.

Exit status: 0 every check passed, 1 a check failed, 2 no CUDA device (nothing to accept).
``--device cpu --envs 2`` runs the same checks on warp's CPU device: how the script itself is
tested without a GPU.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")
SCENE = os.path.join(ROOT, "unisim_core", "scenes", "quadruped.xml")
BUDGET_S = 300.0
DT = 0.005


def _bench_module():
    spec = importlib.util.spec_from_file_location("newton_overhead", os.path.join(ROOT, "benchmarks",
                                                                                  "newton_overhead.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_stands_like_mujoco(device: str, num_envs: int) -> dict:
    """1 s of PD hold at the home pose: base height vs CPU MuJoCo, and tilt."""
    from unisim_core import SceneCfg, create_backend

    t0 = time.perf_counter()
    with create_backend("newton", SceneCfg(SCENE, default_keyframe="home"), num_envs, DT, device=device) as b:
        first_s = time.perf_counter() - t0
        ctrl = np.tile(b.get_default_dof_pos(), (num_envs, 1))
        b.step(ctrl, int(1.0 / DT))
        z = b.get_base_pos()[:, 2].astype(np.float64)
        w = np.abs(b.get_base_quat()[:, 0].astype(np.float64))
    with create_backend("mujoco", SceneCfg(SCENE, default_keyframe="home"), 1, DT) as mj:
        mj.step(ctrl[:1].astype(mj.np_dtype), int(1.0 / DT))
        z_mj = float(mj.get_base_pos()[0, 2])
    tilt = float(np.degrees(2 * np.arccos(np.clip(w, 0, 1))).max())
    err = float(np.abs(z - z_mj).max())
    ok = err <= 5e-3 and tilt < 3.0
    return {"first_backend_s": first_s, "z_newton": z.tolist(), "z_mujoco": z_mj, "max_abs_dz": err,
            "max_tilt_deg": tilt, "verdict": "PASS" if ok else "FAIL"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", nargs="?")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--envs", type=int, nargs="+", default=[64, 256, 1024, 4096])
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args(argv)
    import warp as wp

    if args.device.startswith("cuda") and wp.get_cuda_device_count() == 0:
        print("gpu_acceptance: no CUDA device visible to warp; nothing to accept (use --device cpu to run the "
              "checks on the CPU)", file=sys.stderr)
        return 2
    start = time.perf_counter()
    report: dict = {"device": args.device, "checks": {}, "table": []}
    try:
        report["checks"]["stands_like_mujoco"] = check_stands_like_mujoco(args.device, args.envs[0])
    except Exception:  # noqa: BLE001 - the report names the failed check with its traceback
        report["checks"]["stands_like_mujoco"] = {"verdict": "FAIL", "error": traceback.format_exc()}
    bench = _bench_module()
    for n in args.envs:
        if time.perf_counter() - start > BUDGET_S * 0.6:
            report["table_truncated_at"] = n
            break
        report["table"].append(bench.bench(SCENE, n, args.device, args.seconds))
    print(bench.format_rows(report["table"]))
    failed = [name for name, c in report["checks"].items() if c.get("verdict") == "FAIL"]
    report["elapsed_s"] = time.perf_counter() - start
    if args.report:
        with open(args.report, "w") as fh:
            json.dump(report, fh, indent=1)
    print("FAILED: " + ", ".join(failed) if failed else f"PASSED in {report['elapsed_s']:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
