"""Video frames through the contract (``capture_video_frame``, the shared renderer of
``unisim_mujoco._render``) beside the raw ``mujoco.Renderer`` drawing the same model and state.

For each GL platform (EGL, the default where an EGL device answers; OSMesa, the fallback), render
quality (``fast``: the software-rasterizer default; ``full``: the model's own visual settings, what
``mujoco.Renderer`` draws out of the box) and batch size N (1 and 4 robots, composed into one
frame on the backend's grid), the two loops alternate in ``--blocks`` blocks of ``--frames``
frames, the order flipped every block. The raw loop draws the renderer's own ``MjModel`` (same
meshes, same flags) from ``MjData`` already at the state (``update_scene`` + ``mjv_addGeoms`` per
extra env, ``render``): the ratio raw / contract is the contract's overhead (reading the state,
kinematics, the copy of the frame), the frames/s are what a user gets. Wall frames/s are reported
with the CPU ms per frame of the whole process (GL's rasterizer threads included): on a shared
machine the wall clock also measures the neighbours.

The default scene is the Unitree Go1 of the corpus (``../shared/corpus/menagerie``: 94k mesh
faces; the Go2 is not in the corpus). Each platform runs in its own process (MuJoCo reads
``MUJOCO_GL`` once, at import):

    python benchmarks/render.py [--gl egl,osmesa] [--quality fast,full] [--num-envs 1,4]
        [--width 640 --height 480] [--frames 10 --blocks 6] [--scene path/to/scene.xml]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
GO1 = ROOT.parent / "shared" / "corpus" / "menagerie" / "unitree_go1" / "scene.xml"


def block(fn, frames: int) -> tuple[float, float]:
    """``(wall s, process CPU s)`` per frame over one block."""
    w, c = time.perf_counter(), time.process_time()
    for _ in range(frames):
        fn()
    return (time.perf_counter() - w) / frames, (time.process_time() - c) / frames


def raw_loop(video, sim):
    """The raw renderer's frame of the backend's current state: ``mujoco.Renderer`` on the shared
    renderer's model, MjData at the state (kinematics done once, outside the loop), the same camera,
    layout and flags."""
    import mujoco

    m, n = video.model, video.num_drawn
    datas = [mujoco.MjData(m) for _ in range(n)]
    for d, q in zip(datas, sim.get_qpos()[:n]):
        d.qpos[:] = q
        mujoco.mj_forward(m, d)
    raw = mujoco.Renderer(m, video._rect.height, video._rect.width, max_geom=video._scene.maxgeom)
    flags = np.array(video._scene.flags)
    cat = int(mujoco.mjtCatBit.mjCAT_DYNAMIC)

    def frame():
        raw.update_scene(datas[0], video.cam, video.opt)
        raw.scene.flags[:] = flags
        scn = raw.scene
        for i in range(1, n):
            start = scn.ngeom
            mujoco.mjv_addGeoms(m, datas[i], video.opt, video.pert, cat, scn)
            for g in range(start, scn.ngeom):
                scn.geoms[g].pos[:] += video.offsets[i]
        return raw.render()

    return frame, raw


def child(args) -> list[dict]:
    """One GL platform (this process's ``MUJOCO_GL``): every quality × N row."""
    import unisim_mujoco  # noqa: F401 - picks MUJOCO_GL before mujoco loads
    from unisim_core import SceneCfg, create_backend

    rows = []
    for quality in args.quality.split(","):
        os.environ["UNISIM_RENDER_QUALITY"] = quality
        for n in (int(x) for x in args.num_envs.split(",")):
            sim = create_backend("mujoco", SceneCfg(args.scene), n, 0.005)
            try:
                qpos = np.tile(sim.get_default_qpos(), (n, 1))
                sim.set_state(np.arange(n), qpos, np.zeros((n, sim.nv)))
                sim.init_renderer(1.0, capture=True, width=args.width, height=args.height)
                video = sim._video
                raw, renderer = raw_loop(video, sim)
                contract = sim.capture_video_frame
                same = bool(np.array_equal(contract(), raw()))
                frames = args.frames if quality == "fast" else max(1, args.frames // 10)
                c_wall, c_cpu, r_wall, r_cpu, ratios = [], [], [], [], []
                for k in range(args.blocks):
                    order = (contract, raw) if k % 2 == 0 else (raw, contract)
                    first, second = block(order[0], frames), block(order[1], frames)
                    cw, rw = (first, second) if order[0] is contract else (second, first)
                    c_wall.append(cw[0]), c_cpu.append(cw[1]), r_wall.append(rw[0]), r_cpu.append(rw[1])
                    ratios.append(rw[0] / cw[0])
                renderer.close()
                rows.append({
                    "gl": video.platform, "rasterizer": video.gl_renderer, "quality": video.quality, "n": n,
                    "faces": int(video.model.mesh_facenum.sum() * n), "same_pixels": same,
                    "contract_fps": 1.0 / float(np.median(c_wall)), "raw_fps": 1.0 / float(np.median(r_wall)),
                    "contract_cpu_ms": 1e3 * float(np.median(c_cpu)), "raw_cpu_ms": 1e3 * float(np.median(r_cpu)),
                    "ratio": float(np.median(ratios)),
                })
            finally:
                sim.close()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gl", default="egl,osmesa", help="GL platforms, each in its own process")
    ap.add_argument("--quality", default="fast,full")
    ap.add_argument("--num-envs", default="1,4")
    ap.add_argument("--width", type=int, default=640)
    ap.add_argument("--height", type=int, default=480)
    ap.add_argument("--frames", type=int, default=10, help="frames per block (full quality: a tenth)")
    ap.add_argument("--blocks", type=int, default=6, help="blocks per loop, alternating")
    ap.add_argument("--scene", default=str(GO1))
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args)))
        return
    from unisim_mujoco._gl import osmesa_loads

    print(f"scene {args.scene}, {args.width}x{args.height}, {args.blocks} alternating blocks of {args.frames} "
          f"frames (full quality: {max(1, args.frames // 10)})\n")
    print("| GL | rasterizer | quality | N | mesh faces drawn | contract frames/s | raw frames/s | raw / contract "
          "| contract CPU ms/frame | raw CPU ms/frame | same pixels |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for gl in args.gl.split(","):
        if gl == "osmesa" and not osmesa_loads():
            print("| osmesa | not installed (Debian: apt-get install libosmesa6) | | | | | | | | | |")
            continue
        argv = [sys.executable, __file__, "--child", *sys.argv[1:]]
        out = subprocess.run(argv, env={**os.environ, "MUJOCO_GL": gl}, capture_output=True, text=True)
        if out.returncode:
            print(f"| {gl} | failed: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode} "
                  f"| | | | | | | | | |")
            continue
        for r in json.loads(out.stdout.strip().splitlines()[-1]):
            print(f"| {r['gl']} | {r['rasterizer']} | {r['quality']} | {r['n']} | {r['faces']:,} | "
                  f"{r['contract_fps']:.1f} | {r['raw_fps']:.1f} | {r['ratio']:.2f} | {r['contract_cpu_ms']:.1f} | "
                  f"{r['raw_cpu_ms']:.1f} | {'yes' if r['same_pixels'] else 'NO'} |")


if __name__ == "__main__":
    main()
