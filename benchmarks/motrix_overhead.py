"""Contract overhead of unisim-motrix against raw MotrixSim, side by side in one run.

raw:      D.actuator_ctrls = ctrl; M.step(D); D.dof_pos; D.dof_vel
contract: backend.step(ctrl, 1); backend.get_qpos(); backend.get_qvel()

  python benchmarks/motrix_overhead.py [--scene PATH] [--envs 1 64 512] [--seconds 1.0] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SCENE = os.path.join(HERE, "..", "unisim_core", "scenes", "quadruped.xml")


def _time(fn, seconds: float) -> float:
    """Median per-call seconds over ~``seconds`` of repeated batches."""
    fn()
    n = 1
    while True:  # calibrate a batch of about 20 ms
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt > 0.02:
            break
        n *= 2
    samples = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or len(samples) < 5:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - t0) / n)
    return float(np.median(samples))


def bench(scene: str, num_envs: int, dt: float, seconds: float) -> dict:
    import motrixsim

    from unisim_core import SceneCfg
    from unisim_motrix import MotrixBackend

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        backend = MotrixBackend(SceneCfg(scene, default_keyframe="home"), num_envs, dt)
    q0 = np.tile(backend.get_default_qpos(), (num_envs, 1))
    backend.set_state(np.arange(num_envs), q0, np.zeros((num_envs, backend.nv)))
    ctrl = np.tile(backend.get_default_dof_pos(), (num_envs, 1)).astype(np.float32)

    M = motrixsim.load_model(scene)
    M.options.timestep = dt
    M.options.max_iterations = backend.options.max_iterations
    D = motrixsim.SceneData(M, batch=[num_envs])
    M.keyframes[0].apply(D)
    M.forward_kinematic(D)
    ctrl_raw = np.ascontiguousarray(ctrl)

    def raw():
        D.actuator_ctrls = ctrl_raw
        M.step(D)
        return D.dof_pos, D.dof_vel

    def contract():
        backend.step(ctrl, 1)
        return backend.get_qpos(), backend.get_qvel()

    # interleave to share thermal/cache conditions
    t_raw, t_con = [], []
    for _ in range(3):
        t_raw.append(_time(raw, seconds / 3))
        t_con.append(_time(contract, seconds / 3))
    backend.close()
    r, c = min(t_raw), min(t_con)
    return {"num_envs": num_envs, "raw_us": r * 1e6, "contract_us": c * 1e6,
            "raw_env_steps_per_s": num_envs / r, "contract_env_steps_per_s": num_envs / c,
            "ratio": r / c}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scene", default=DEFAULT_SCENE, help="MJCF with a 'home' keyframe (default: quadruped)")
    p.add_argument("--envs", type=int, nargs="+", default=[1, 64, 512])
    p.add_argument("--dt", type=float, default=0.002)
    p.add_argument("--seconds", type=float, default=1.5, help="measuring time per variant and N")
    p.add_argument("--json", help="write the rows to this JSON file")
    a = p.parse_args(argv)
    rows = [bench(os.path.abspath(a.scene), n, a.dt, a.seconds) for n in a.envs]
    print(f"{'N':>5} {'raw µs/call':>12} {'contract µs/call':>17} {'raw env-steps/s':>16} "
          f"{'contract env-steps/s':>21} {'ratio':>6}")
    for r in rows:
        print(f"{r['num_envs']:>5} {r['raw_us']:>12.1f} {r['contract_us']:>17.1f} {r['raw_env_steps_per_s']:>16,.0f} "
              f"{r['contract_env_steps_per_s']:>21,.0f} {r['ratio']:>6.3f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"scene": a.scene, "dt": a.dt, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
