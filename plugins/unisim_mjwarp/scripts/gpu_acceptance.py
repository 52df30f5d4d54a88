"""GPU acceptance of the MuJoCo Warp backend: one command on any machine with an NVIDIA GPU.

    python plugins/unisim_mjwarp/scripts/gpu_acceptance.py [report.json]

Run from a repository checkout with unisim-contract, unisim-mujoco and unisim-mjwarp installed.
Under a 5-minute budget it checks, on ``cuda``: the first backend (kernel compilation is timed;
warp caches it), that stepping runs as a captured CUDA graph and matches the uncaptured path
over 100 steps (float32 rounding: 1e-4), that the device arrays are CUDA DLPack views of the
engine buffers, that 1 s of the PD-held quadruped stands like CPU MuJoCo (``unisim compare``'s
contact tier), then prints the overhead table of ``benchmarks/mjwarp_overhead.py`` (raw
mujoco_warp vs the contract vs the device-array path vs the mujoco backend) for N = 64..4096.

Exit status: 0 every check passed, 1 a check failed, 2 no CUDA device (nothing to accept).
``--device cpu --envs 4 8`` runs the same checks on warp's CPU device (no graph capture there;
that check is reported as skipped): how the script itself is tested without a GPU.
"""

from __future__ import annotations

import argparse
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
PARITY_STEPS = 200  # 1 s


def _backend(num_envs: int, device: str, **options):
    from unisim_core import SceneCfg, create_backend

    return create_backend("mjwarp", SceneCfg(SCENE, default_keyframe="home"), num_envs, DT, device=device, **options)


def check_graph_capture(device: str, num_envs: int) -> dict:
    """Captured and plain stepping agree; the captured backend really holds a graph (a CUDA graph, or
    warp's recorded launches on its CPU device)."""
    with _backend(num_envs, device, graph_capture=True) as g, _backend(num_envs, device, graph_capture=False) as p:
        ctrl = np.tile(g.get_default_dof_pos(), (num_envs, 1))
        for b in (g, p):
            b.step(ctrl, 100)
        captured = g.graph_captured
        dev = float(np.max(np.abs(g.get_qpos() - p.get_qpos())))
    return {"ok": captured and dev < 1e-4, "graph": captured, "max_qpos_dev": dev}


def check_device_arrays(device: str, num_envs: int) -> dict:
    with _backend(num_envs, device) as b:
        views = b.get_device_arrays()
        kind = views.qpos.__dlpack_device__()[0]
        b.step(np.tile(b.get_default_dof_pos(), (num_envs, 1)), 5)
        same = views.qpos.ptr == b.warp_data.qpos.ptr
        live = np.allclose(views.qpos.numpy(), b.get_qpos())
    expected = 2 if device.startswith("cuda") else 1  # kDLCUDA / kDLCPU
    return {"ok": same and live and kind == expected, "dlpack_device": kind, "same_buffer": same, "live": live}


def check_parity(device: str, num_envs: int) -> dict:
    """1 s of PD hold next to CPU MuJoCo, judged by ``unisim compare``'s contact tier."""
    from unisim_core import SceneCfg, create_backend
    from unisim_core.tools.compare import TIERS, deviation_series, record_trajectory, verdict

    with _backend(num_envs, device) as b:
        mine = record_trajectory(b, "mjwarp", PARITY_STEPS)
    with create_backend("mujoco", SceneCfg(SCENE, default_keyframe="home"), num_envs, DT) as ref:
        theirs = record_trajectory(ref, "mujoco", PARITY_STEPS)
    dev = {k: float(np.max(v)) for k, v in deviation_series(theirs, mine).items()}
    status, failed = verdict(dev, TIERS["contact"])
    return {"ok": status == "PASS", "verdict": status, "failed": failed, "max_dev": dev}


def run(device: str, envs: list[int], seconds: float) -> dict:
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import mjwarp_overhead

    report: dict = {"device": device, "checks": {}, "timings_s": {}}
    start = time.perf_counter()
    with _backend(envs[0], device) as b:
        report["timings_s"]["first_backend (kernel compile or cache load)"] = time.perf_counter() - start
        report["resolved_device"] = b.device
    for name, fn in (("graph_capture", check_graph_capture), ("device_arrays", check_device_arrays),
                     ("parity_with_mujoco", check_parity)):
        t0 = time.perf_counter()
        try:
            report["checks"][name] = fn(device, envs[0])
        except Exception:  # noqa: BLE001 - a failed check is reported, the others still run
            report["checks"][name] = {"ok": False, "error": traceback.format_exc(limit=3)}
        report["timings_s"][name] = time.perf_counter() - t0
    t0 = time.perf_counter()
    rows = []
    for n in envs:
        if time.perf_counter() - start > BUDGET_S:
            report["checks"]["budget"] = {"ok": False, "error": f"over {BUDGET_S:.0f} s before N={n}"}
            break
        rows.append(mjwarp_overhead.bench(os.path.abspath(SCENE), n, device, seconds))
    report["table"] = rows
    report["timings_s"]["table"] = time.perf_counter() - t0
    report["timings_s"]["total"] = time.perf_counter() - start
    print(mjwarp_overhead.format_rows(rows))
    report["ok"] = all(c.get("ok", True) for c in report["checks"].values())
    return report


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("report", nargs="?", help="write the JSON report here")
    p.add_argument("--device", default="cuda", help="warp device (default cuda; 'cpu' tests the script)")
    p.add_argument("--envs", type=int, nargs="+", default=[64, 256, 1024, 4096])
    p.add_argument("--seconds", type=float, default=3.0, help="measuring time per N")
    a = p.parse_args(argv)
    import warp as wp

    if a.device.startswith("cuda") and wp.get_cuda_device_count() == 0:
        print("gpu_acceptance: no CUDA device visible to warp: nothing to accept here. Run it on a machine with "
              "an NVIDIA GPU and driver (or pass --device cpu to exercise the script).", file=sys.stderr)
        return 2
    report = run(a.device, a.envs, a.seconds)
    for name, result in report["checks"].items():
        state = "SKIP" if "skipped" in result else ("ok" if result.get("ok") else "FAIL")
        print(f"{state:>4}  {name}: {json.dumps({k: v for k, v in result.items() if k != 'ok'}, default=str)}")
    print(f"total {report['timings_s']['total']:.1f} s; {'PASSED' if report['ok'] else 'FAILED'}")
    if a.report:
        with open(a.report, "w") as f:
            json.dump(report, f, indent=2, default=str)
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
