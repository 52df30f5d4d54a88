"""What the per-env model tables cost Genesis: ``scene.step()`` of the quadruped with
``RigidOptions(batch_links_info=True, batch_dofs_info=True)`` (how unisim-genesis builds every
scene, so that randomization is per env) beside the same scene without them, in one process,
in paired blocks (the order flipped every block; the median block and the median per-pair ratio,
as ``call_cost.py``). CPU time per step.

    python benchmarks/genesis_batched_info.py [--num-envs 64] [--blocks 9] [--steps 50]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from unisim_core.scenes import scene_path


def build(gs, batched: bool, n: int):
    scene = gs.Scene(sim_options=gs.options.SimOptions(dt=0.002),
                     rigid_options=gs.options.RigidOptions(integrator=gs.integrator.implicitfast,
                                                           batch_links_info=batched, batch_dofs_info=batched),
                     show_viewer=False)
    ent = scene.add_entity(gs.morphs.MJCF(file=str(scene_path("quadruped")), align=False, default_armature=None))
    scene.build(n_envs=n)
    ent.set_qpos(np.tile(ent.get_qpos().cpu().numpy()[0], (n, 1)))
    return scene


def block_cpu_us(scene, steps: int) -> float:
    t0 = time.process_time()
    for _ in range(steps):
        scene.step()
    return (time.process_time() - t0) / steps * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--blocks", type=int, default=9)
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()
    import genesis as gs

    gs.init(backend=gs.cpu, precision="64", logging_level="error")
    plain, batched = build(gs, False, args.num_envs), build(gs, True, args.num_envs)
    block_cpu_us(plain, 5), block_cpu_us(batched, 5)
    tp, tb = [], []
    for k in range(args.blocks):
        order = (plain, batched) if k % 2 == 0 else (batched, plain)
        times = {id(s): block_cpu_us(s, args.steps) for s in order}
        tp.append(times[id(plain)])
        tb.append(times[id(batched)])
    ratio = float(np.median(np.array(tb) / np.array(tp)))
    print(f"N={args.num_envs}: plain {np.median(tp):.0f} us/step, batched {np.median(tb):.0f} us/step, "
          f"batched/plain {ratio:.3f} (median of {args.blocks} paired blocks of {args.steps} steps)")


if __name__ == "__main__":
    main()
