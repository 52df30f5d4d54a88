"""CPU per ``scan()`` of the core's height scanner (``unisim_core.contract.heightfield``) beside the engines'
own ways to the same heights, in paired blocks (the order flipped every block, the median block and
the median per-pair ratio, as ``call_cost.py``).

Scene: ``quadruped_hfield`` (21 x 21 bowl), ``--num-envs`` robots spread over it, ``--points`` offsets
(17 x 11 = 187 by default, 0.1 m apart) around the base. Rows:

- ``mujoco core``: the contract's scanner on unisim-mujoco (its body poses + the core sampler);
- ``mj_ray``: raw MuJoCo, one ``mj_ray`` per point and env (what the heights cost without a sampler);
- ``motrix core`` / ``motrix native``: the core scanner over unisim-motrix's poses, and MotrixSim's
  ``TerrainScanner`` (the plugin's yaw scanner), when unisim-motrix is installed.

    python benchmarks/height_scan.py [--num-envs 64] [--blocks 9] [--calls 20]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from unisim_core import SceneCfg, create_backend
from unisim_core.contract.heightfield import HeightScanner, HFieldSampler
from unisim_core.scenes import scene_path


def block_cpu_us(fn, calls: int) -> float:
    t0 = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - t0) / calls * 1e6


def paired(a, b, calls: int, blocks: int) -> tuple[float, float, float]:
    """``(a µs, b µs, b / a)``: median blocks and the median per-pair ratio."""
    a(), b()
    ta, tb = [], []
    for k in range(blocks):
        first, second = (a, b) if k % 2 == 0 else (b, a)
        x, y = block_cpu_us(first, calls), block_cpu_us(second, calls)
        ta.append(x if first is a else y)
        tb.append(y if first is a else x)
    return float(np.median(ta)), float(np.median(tb)), float(np.median(np.array(tb) / np.array(ta)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num-envs", type=int, default=64)
    ap.add_argument("--blocks", type=int, default=9)
    ap.add_argument("--calls", type=int, default=20)
    args = ap.parse_args()
    import mujoco

    n = args.num_envs
    scene = SceneCfg(str(scene_path("quadruped_hfield")), default_keyframe="home")
    xs, ys = np.meshgrid(np.linspace(-0.8, 0.8, 17), np.linspace(-0.5, 0.5, 11))
    offsets = np.stack([xs.ravel(), ys.ravel()], axis=1)
    rng = np.random.default_rng(0)
    qpos0 = None
    rows = []

    def spread(b):
        nonlocal qpos0
        if qpos0 is None:
            qpos0 = np.tile(b.get_default_qpos(), (n, 1))
            qpos0[:, :2] = rng.uniform(-3.5, 3.5, (n, 2))
            yaw = rng.uniform(-np.pi, np.pi, n)
            qpos0[:, 3:7] = np.stack([np.cos(yaw / 2), 0 * yaw, 0 * yaw, np.sin(yaw / 2)], axis=1)
        b.set_state(np.arange(n), qpos0, np.zeros((n, b.nv)))

    mj = create_backend("mujoco", scene, n, 0.005)
    spread(mj)
    geom = mj.get_geom_id("terrain")
    core = mj.create_hfield_scanner(hfield_geom_id=geom, offsets=offsets, frame_body_id=mj.base_body_id)
    m, d = mj._m, mujoco.MjData(mj._m)
    d.qpos[:] = qpos0[0]
    d.qpos[:3] = 50.0  # the robot out of the rays' way: they hit the terrain only
    mujoco.mj_forward(m, d)
    pts = core.points_xy()
    group, hit = np.zeros(6, np.uint8), np.zeros(1, np.int32)
    group[m.geom_group[geom]] = 1
    down = np.array([0.0, 0.0, -1.0])

    def rays():
        for x, y in zip(pts[0].ravel(), pts[1].ravel()):
            mujoco.mj_ray(m, d, np.array([x, y, 5.0]), down, group, 1, -1, hit)

    heights = core.scan()
    rows.append(("mujoco core vs mj_ray", *paired(core.scan, rays, args.calls, args.blocks)))
    try:
        mx = create_backend("motrix", scene, n, 0.005)
    except Exception as exc:  # noqa: BLE001 - an optional comparison
        print(f"motrix not compared: {exc}")
        mx = None
    if mx is not None:
        spread(mx)
        native = mx.create_hfield_scanner(hfield_geom_id=geom, offsets=offsets, frame_body_id=mx.base_body_id)
        shared = HeightScanner(mx, HFieldSampler.from_mjmodel(m, geom), offsets, mx.base_body_id, "yaw", "height")
        diff = float(np.abs(native.scan() - shared.scan()).max())
        rows.append(("motrix core vs native", *paired(shared.scan, native.scan, args.calls, args.blocks)))
        print(f"motrix native vs core: max |dh| = {diff:.2e} m (native float32)")
    print(f"N={n}, P={len(offsets)}; mujoco core scan equals mj_ray to "
          f"{float(np.abs(heights[0] - (5.0 - _ray_heights(m, d, pts, group, hit, down))).max()):.1e} m (env 0)")
    print(f"{'pair':28s} {'first us':>10s} {'second us':>10s} {'second/first':>12s}")
    for name, a, b, ratio in rows:
        print(f"{name:28s} {a:10.1f} {b:10.1f} {ratio:12.2f}")


def _ray_heights(m, d, pts, group, hit, down):
    import mujoco

    return np.array([mujoco.mj_ray(m, d, np.array([x, y, 5.0]), down, group, 1, -1, hit)
                     for x, y in zip(pts[0][0], pts[1][0])])


if __name__ == "__main__":
    main()
