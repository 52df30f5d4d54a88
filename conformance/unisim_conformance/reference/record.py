"""Record the kit's reference trajectories from MuJoCo: ``python -m unisim_conformance.reference.record``.

Runs every scenario of :mod:`.scenarios` on raw MuJoCo (``mujoco.MjModel.from_xml_path`` of the
kit scene, float64, one ``MjData`` per env, ``mj_step``) and writes ``<name>.npz`` beside this
module (or into ``--out``). Needs ``mujoco``; the kit itself never imports it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from .. import scene_dt, scene_path
from . import REFERENCE_DIR
from .scenarios import SCENARIOS, Scenario


def _names(m, objtype, count: int, start: int = 0) -> list[str]:
    import mujoco

    return [mujoco.mj_id2name(m, objtype, i) or "" for i in range(start, count)]


def record(name: str, sc: Scenario) -> dict[str, np.ndarray]:
    """Run ``sc`` on MuJoCo and return the arrays of its reference file."""
    import mujoco

    m = mujoco.MjModel.from_xml_path(str(scene_path(sc.scene)))
    dt = scene_dt(sc.scene)
    m.opt.timestep = dt
    qpos0, qvel0 = sc.setup(m)
    samples = int(round(sc.duration / (dt * sc.substeps)))
    kick = np.zeros((samples, 2, m.nv))
    for at, delta in sc.kicks(m).items():
        kick[int(round(at / (dt * sc.substeps)))] = delta
    datas = [mujoco.MjData(m) for _ in range(2)]
    scratch = mujoco.MjData(m)
    rec = {k: [] for k in ("qpos", "qvel", "body_pos", "body_quat", "sensors")}

    def sample():
        # mj_step leaves xpos/sensors at the start of its last substep: evaluate them at the new
        # state on a scratch copy (the contract's getters reflect the state after the step)
        for key in rec:
            rec[key].append([])
        for d in datas:
            mujoco.mj_copyData(scratch, m, d)
            mujoco.mj_forward(m, scratch)
            for key, value in (("qpos", scratch.qpos), ("qvel", scratch.qvel), ("body_pos", scratch.xpos[1:]),
                               ("body_quat", scratch.xquat[1:]), ("sensors", scratch.sensordata)):
                rec[key][-1].append(value.copy())

    for e, d in enumerate(datas):
        d.qpos[:], d.qvel[:] = qpos0[e], qvel0[e]
        mujoco.mj_forward(m, d)
    sample()
    ctrl = np.zeros((samples, 2, m.nu))
    for i in range(samples):
        ctrl[i] = sc.ctrl(i * dt * sc.substeps, m, datas)
        for e, d in enumerate(datas):
            if np.any(kick[i, e]):
                d.qvel[:] += kick[i, e]
                mujoco.mj_forward(m, d)
            d.ctrl[:] = ctrl[i, e]
            for _ in range(sc.substeps):
                mujoco.mj_step(m, d)
        sample()
    out = {k: np.asarray(v, dtype=np.float32) for k, v in rec.items()}
    out.update(
        qpos0=np.asarray(qpos0, np.float64), qvel0=np.asarray(qvel0, np.float64),
        ctrl=ctrl.astype(np.float32), kick=kick.astype(np.float32),
        body_names=np.array(_names(m, mujoco.mjtObj.mjOBJ_BODY, m.nbody, 1)),
        sensor_names=np.array(_names(m, mujoco.mjtObj.mjOBJ_SENSOR, m.nsensor)),
        sensor_dims=np.asarray(m.sensor_dim, dtype=np.int64),
        sensor_types=np.array([mujoco.mjtSensor(int(t)).name[len("mjSENS_"):].lower() for t in m.sensor_type]),
        scene=np.array(sc.scene), sim_dt=np.array(dt), substeps=np.array(sc.substeps), tier=np.array(sc.tier),
        mujoco_version=np.array(mujoco.__version__),
    )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REFERENCE_DIR, help="output folder (default: beside this module)")
    ap.add_argument("names", nargs="*", help="scenarios to record (default: all)")
    args = ap.parse_args(argv)
    for name in args.names or sorted(SCENARIOS):
        arrays = record(name, SCENARIOS[name])
        path = args.out / f"{name}.npz"
        np.savez_compressed(path, **arrays)
        print(f"{path}: {arrays['qpos'].shape[0] - 1} samples, {path.stat().st_size / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
