"""Cost of reading contact forces on the MuJoCo backend against raw MuJoCo, in one run.

contract: ``backend.step(ctrl, nsteps)`` then ``feet.read()`` (``bind_contact_forces`` on the four
          calves of the demo quadruped): one ``mj_forwardSkip`` per env on a scratch MjData.
raw:      ``num_envs`` MjData stepped with ``mj_step`` in a Python loop, then the feet's world
          contact forces summed with ``mj_contactForce`` per contact (what a user without the
          contract writes; a persistent MjData per env holds its contacts).

Both from the "home" keyframe under the PD hold. Rounds alternate (medians), so other load on the
machine hits both alike; the step and the read are timed separately.

    python benchmarks/mujoco_contacts.py [--envs 1 64] [--nsteps 4] [--rounds 30]
"""

from __future__ import annotations

import argparse
import time

import mujoco
import numpy as np

import unisim_mujoco  # noqa: F401  (sets MUJOCO_GL before mujoco is imported)
from unisim_core import SceneCfg, create_backend
from unisim_core.scenes import scene_path

FEET = ("FL_calf", "FR_calf", "RL_calf", "RR_calf")


def _raw(n: int):
    m = mujoco.MjModel.from_xml_path(str(scene_path("quadruped")))
    m.opt.timestep = 0.005
    datas = [mujoco.MjData(m) for _ in range(n)]
    key = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_KEY, "home")
    for d in datas:
        mujoco.mj_resetDataKeyframe(m, d, key)
    feet = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, f) for f in FEET]
    slot = {b: i for i, b in enumerate(feet)}
    ctrl = m.key_ctrl[key].copy()
    f6, out = np.zeros(6), np.zeros((n, len(feet), 3))

    def step(nsteps: int) -> None:
        for d in datas:
            d.ctrl[:] = ctrl
            mujoco.mj_step(m, d, nsteps)

    def read() -> None:
        out[...] = 0.0
        for e, d in enumerate(datas):
            for k in range(d.ncon):
                c = d.contact[k]
                b1, b2 = m.geom_bodyid[c.geom[0]], m.geom_bodyid[c.geom[1]]
                if b1 not in slot and b2 not in slot:
                    continue
                mujoco.mj_contactForce(m, d, k, f6)
                f = c.frame.reshape(3, 3).T @ f6[:3]  # force of geom1 on geom2, world frame
                if b2 in slot:
                    out[e, slot[b2]] += f
                if b1 in slot:
                    out[e, slot[b1]] -= f
    return step, read


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--envs", type=int, nargs="+", default=[1, 64])
    ap.add_argument("--nsteps", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args()
    for n in args.envs:
        b = create_backend("mujoco", SceneCfg(str(scene_path("quadruped")), default_keyframe="home"), n, 0.005)
        names = b.get_actuator_joint_names()
        q = np.asarray(b.get_keyframe_qpos("home"), dtype=np.float64)
        ctrl = np.tile(q[b.get_joint_state_qpos_indices(list(names))], (n, 1))
        feet = b.bind_contact_forces(list(FEET))
        raw_step, raw_read = _raw(n)
        t = {k: [] for k in ("contract_step", "contract_read", "raw_step", "raw_read")}
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            b.step(ctrl, args.nsteps)
            t1 = time.perf_counter()
            feet.read()
            t2 = time.perf_counter()
            raw_step(args.nsteps)
            t3 = time.perf_counter()
            raw_read()
            t4 = time.perf_counter()
            for k, dt in zip(t, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
                t[k].append(dt)
        med = {k: float(np.median(v)) * 1e3 for k, v in t.items()}
        print(f"N={n:5d}  step: contract {med['contract_step']:.3f} ms, raw {med['raw_step']:.3f} ms | "
              f"contact read: contract {med['contract_read']:.3f} ms, raw {med['raw_read']:.3f} ms, "
              f"contract/raw {med['contract_read'] / med['raw_read']:.2f}")
        b.close()


if __name__ == "__main__":
    main()
