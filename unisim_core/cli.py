"""The ``unisim`` command line: list, inspect, run and check backends."""

from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
import time
from collections.abc import Sequence

import numpy as np

from . import registry
from .capabilities import CONTRACT_VERSION
from .config import SceneCfg
from .errors import UniSimError
from .options import describe_options
from .scenes import scene_path


def _table(rows: Sequence[Sequence[object]], header: Sequence[str]) -> str:
    cells = [list(map(str, header))] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _parse_options(items: Sequence[str] | None) -> dict[str, object]:
    out: dict[str, object] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"--option: expected KEY=VALUE, got {item!r}")
        try:
            out[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            out[key] = value
    return out


def cmd_backends(args: argparse.Namespace) -> int:
    rows = [(r.name, r.distribution, r.version, r.status, r.reason) for r in registry.list_backends()]
    print(_table(rows, ("name", "distribution", "version", "status", "reason")))
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    rec = next((r for r in registry.list_backends() if r.name == args.name), None)
    if rec is None:
        raise registry.BackendNotFoundError(f"no backend named {args.name!r}")
    print(f"backend:       {rec.name}")
    print(f"distribution:  {rec.distribution} {rec.version}")
    print(f"status:        {rec.status}{' — ' + rec.reason if rec.reason else ''}")
    spec = rec.spec
    if spec is None:
        return 1
    print(f"contract:      {spec.contract_range} (core implements {CONTRACT_VERSION})")
    print(f"runtime:       {spec.required_runtime or 'none beyond the Python packages'}"
          f"{' — found' if rec.status == 'ok' else ''}")
    print(f"capabilities:  {', '.join(sorted(c.value for c in spec.capabilities)) or 'none'}")
    print("options:")
    print(_table(describe_options(spec.options_cls), ("name", "type", "default")))
    for key, value in registry.plugin_diagnostics(args.name).items():
        print(f"{key}: {value}")
    return 0


def _progress(done: int, total: int, start: float, stream=sys.stderr) -> None:
    width = 30
    frac = done / total
    rate = done / max(time.perf_counter() - start, 1e-9)
    bar = "#" * int(frac * width)
    stream.write(f"\r[{bar:<{width}}] {done}/{total} steps  {rate:,.0f} steps/s")
    if done == total:
        stream.write("\n")
    stream.flush()


def hold_position_ctrl(backend) -> np.ndarray:
    """``(num_envs, nu)`` control holding the default pose: position actuators get
    their joint's default position (clipped to the ctrl range), others zero."""
    info = backend.model_info
    qpos0 = backend.get_default_qpos()
    ctrl = np.zeros(backend.num_actuators)
    for a, j in enumerate(info.actuator_joint):
        if j >= 0 and info.actuator_kp[a] > 0 and info.joint_types[j] in ("hinge", "slide"):
            ctrl[a] = qpos0[info.joint_qposadr[j]]
    lo, hi = info.actuator_ctrl_range.T
    ctrl = np.clip(ctrl, lo, hi)
    return np.ascontiguousarray(np.broadcast_to(ctrl, (backend.num_envs, backend.num_actuators)),
                                dtype=backend.np_dtype)


def cmd_run(args: argparse.Namespace) -> int:
    scene = SceneCfg(args.scene or scene_path("quadruped"), default_keyframe=args.keyframe)
    options = _parse_options(args.option)
    t0 = time.perf_counter()
    backend = registry.create_backend(args.backend, scene, args.num_envs, args.sim_dt, **options)
    with backend:
        ids = np.arange(backend.num_envs)
        qpos = np.broadcast_to(backend.get_default_qpos(), (backend.num_envs, backend.nq))
        backend.set_state(ids, qpos, np.zeros((backend.num_envs, backend.nv)))
        ctrl = hold_position_ctrl(backend)
        backend.step(ctrl, args.decimation)
        cold = time.perf_counter() - t0
        frames = []
        if args.video:
            backend.init_renderer(spacing=1.0, headless=True, capture=True, width=640, height=360)
        show = sys.stderr.isatty() or args.progress
        start = time.perf_counter()
        every = max(1, args.steps // 50)
        for k in range(1, args.steps + 1):
            backend.step(ctrl, args.decimation)
            if args.video and k % max(1, round(1 / (30 * args.sim_dt * args.decimation))) == 0:
                frames.append(backend.capture_video_frame())
            if show and (k % every == 0 or k == args.steps):
                _progress(k, args.steps, start)
        wall = time.perf_counter() - start
        height = backend.get_base_pos()[:, 2]
        state = np.concatenate([backend.get_qpos(), backend.get_qvel()], axis=1)
        nonfinite = int((~np.isfinite(state).all(axis=1)).sum())
        env_steps = args.steps * backend.num_envs
        sim_time = args.steps * args.decimation * args.sim_dt
        rows = [
            ("backend", f"{args.backend} ({backend.num_envs} envs, dt={args.sim_dt}, decimation={args.decimation})"),
            ("scene", scene.model_file),
            ("cold start (construct → first step)", f"{cold:.3f} s"),
            ("env-steps/s (control steps)", f"{env_steps / wall:,.0f}"),
            ("physics steps/s (all envs)", f"{env_steps * args.decimation / wall:,.0f}"),
            ("real-time factor (per env)", f"{sim_time / wall:,.1f}x"),
            ("final base height range", f"[{np.nanmin(height):.3f}, {np.nanmax(height):.3f}] m"),
            ("envs with non-finite state", str(nonfinite)),
        ]
        if args.video:
            from .backend import write_video

            write_video(args.video, frames, fps=30)
            rows.append(("video", f"{args.video} ({len(frames)} frames)"))
    print(_table(rows, ("quantity", "value")))
    return 1 if nonfinite else 0


def cmd_check(args: argparse.Namespace) -> int:
    cmd = [sys.executable, "-m", "pytest", "--pyargs", "unisim_conformance", f"--unisim-backend={args.name}"]
    cmd += [f"--unisim-option={o}" for o in args.option or ()]
    if args.reference:
        cmd.append(f"--unisim-reference={args.reference}")
    cmd += list(args.pytest_args)
    return subprocess.call(cmd)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="unisim", description="UniSim: one contract for robot physics engines.")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("backends", help="list installed backends and their status").set_defaults(fn=cmd_backends)
    info = sub.add_parser("info", help="capabilities, options and runtime of one backend")
    info.add_argument("name")
    info.set_defaults(fn=cmd_info)
    run = sub.add_parser("run", help="roll a scene out under a hold-position controller")
    run.add_argument("--backend", default="mujoco")
    run.add_argument("--scene", default=None, help="MJCF path (default: the shipped quadruped)")
    run.add_argument("--keyframe", default="home", help="initial keyframe (default: home)")
    run.add_argument("--num-envs", type=int, default=64)
    run.add_argument("--steps", type=int, default=500, help="control steps")
    run.add_argument("--sim-dt", type=float, default=0.005)
    run.add_argument("--decimation", type=int, default=4, help="physics substeps per control step")
    run.add_argument("--video", default=None, help="write an mp4 of the run to this path")
    run.add_argument("--progress", action="store_true", help="show the progress bar even when not a tty")
    run.add_argument("--option", action="append", help="backend option KEY=VALUE (repeatable)")
    run.set_defaults(fn=cmd_run)
    check = sub.add_parser("check", help="run the conformance kit against a backend")
    check.add_argument("name")
    check.add_argument("--option", action="append", help="backend option KEY=VALUE (repeatable)")
    check.add_argument("--reference", default=None, help="reference backend for parity checks")
    check.add_argument("pytest_args", nargs=argparse.REMAINDER, help="extra pytest arguments")
    check.set_defaults(fn=cmd_check)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args)
    except (UniSimError, TypeError, ValueError, FileNotFoundError) as exc:
        print(f"unisim {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    os._exit(main())
