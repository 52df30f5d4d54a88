"""Contract overhead of unisim-sapien against raw SAPIEN calls, with the physical limit.

Per row (one N), interleaved in rounds in one run (median per call), each call = ``nsteps``
physics steps of all N envs of the shipped quadruped holding its ``home`` pose:

raw:       unisim_sapien's raw stepper (also behind ``unisim bench``): every env's ``PhysxCpuSystem.step()``
           x nsteps, then every articulation's ``get_qpos()``/``get_qvel()``, on the backend's own
           scenes (the same engine objects: the difference is the adapter)
contract:  backend.step(ctrl, nsteps); backend.get_qpos(); backend.get_qvel()
one_scene: raw SAPIEN on the other layout: one scene holding the N articulations 2 m apart
           (one ``step()`` per substep), same reads
limit:     one env's raw call x N (PhysX CPU steps hold the GIL: measured, threads do not help)

  python benchmarks/sapien_overhead.py [--envs 1 16 64 256] [--nsteps 4] [--seconds 2]
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np

from unisim_core.bench import contract_stepper, measure
from unisim_core.physx import physx_drives
from unisim_sapien._bench import raw_stepper
from unisim_sapien._build import build_env
from unisim_sapien._mjcf_extra import geom_assets

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SCENE = os.path.join(HERE, "..", "unisim_core", "scenes", "quadruped.xml")


def _one_scene(backend, n: int, nsteps: int):
    """Raw loop over one scene holding ``n`` copies of the backend's articulations (grid, 2 m)."""
    lite, path = backend._lite, str(backend.scene.model_file)
    assets = geom_assets(path, lite)
    drives = physx_drives(lite.joints, lite.actuators)
    side = int(np.ceil(np.sqrt(n)))
    scene, arts = None, []
    for k in range(n):
        scene, a = build_env(lite, assets, drives, backend.options.physx, backend.sim_dt, scene,
                             origin=(2.0 * (k % side), 2.0 * (k // side)))
        arts += a
    home = lite.keyframes["home"][7:].astype(np.float32)
    for a in arts:
        a.set_qpos(home)

    system = scene.physx_system

    def call():
        for _ in range(nsteps):
            system.step()
        return [a.get_qpos() for a in arts], [a.get_qvel() for a in arts]

    call.scene = scene  # the scene owns the entities: it must outlive the loop

    return call


def bench(scene: str, n: int, nsteps: int, dt: float, seconds: float) -> dict:
    backend, contract, _, ctrl = contract_stepper("sapien", scene, n, dt, nsteps, {})
    one, one_call, _, one_ctrl = contract_stepper("sapien", scene, 1, dt, nsteps, {})
    calls = {"raw": raw_stepper(scene, n, dt, nsteps, backend, ctrl)[0], "contract": contract,
             "one_scene": _one_scene(backend, n, nsteps),
             "one_env": raw_stepper(scene, 1, dt, nsteps, one, one_ctrl)[0]}
    try:
        best = measure(calls, seconds)
    finally:
        backend.close()
        one.close()
    limit = best.pop("one_env") * n
    row = {"num_envs": n, "nsteps": nsteps, **{f"{k}_ms": v * 1e3 for k, v in best.items()}, "limit_ms": limit * 1e3}
    row["raw/contract"] = best["raw"] / best["contract"]
    row["limit/contract"] = limit / best["contract"]
    row["one_scene/raw"] = best["one_scene"] / best["raw"]
    return row


def format_rows(rows: list[dict]) -> str:
    head = (f"{'N':>5} {'raw ms':>9} {'contract ms':>12} {'one-scene ms':>13} {'limit ms':>9} "
            f"{'raw/contract':>13} {'limit/contract':>15} {'one-scene/raw':>14}")
    lines = [head]
    for r in rows:
        lines.append(f"{r['num_envs']:>5} {r['raw_ms']:>9.3f} {r['contract_ms']:>12.3f} {r['one_scene_ms']:>13.3f} "
                     f"{r['limit_ms']:>9.3f} {r['raw/contract']:>13.3f} {r['limit/contract']:>15.3f} "
                     f"{r['one_scene/raw']:>14.3f}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scene", default=DEFAULT_SCENE)
    ap.add_argument("--envs", type=int, nargs="+", default=[1, 16, 64, 256])
    ap.add_argument("--nsteps", type=int, default=4)
    ap.add_argument("--dt", type=float, default=0.002)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = [bench(args.scene, n, args.nsteps, args.dt, args.seconds) for n in args.envs]
    print(json.dumps(rows, indent=1) if args.json else format_rows(rows))


if __name__ == "__main__":
    main()
