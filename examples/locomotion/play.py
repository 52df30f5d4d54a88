"""Run a shipped velocity-tracking policy, unchanged, on any installed UniSim backend.

    python examples/locomotion/play.py --backend motrix            # one engine
    python examples/locomotion/play.py --backend mujoco --video walk.mp4
    python examples/locomotion/play.py --all                       # the sim2sim table, every engine
    python examples/locomotion/play.py --task go1 --all --baseline # Go1 on rough terrain, + standing still

The policies (``policy.pt`` beside this file for ``--task quadruped``, ``go1/policy.pt`` for
``--task go1``) were trained on MuJoCo by ``train.py``. Each run uses the training task without
randomization (nominal friction and mass, no pushes; noise, delay and terrain as trained) and the
same seeded command sequence on every engine; ``--baseline`` adds a standing-still row (zero
action: the default pose held) per engine. ``--all`` evaluates every installed backend except the test
double (``fake``) and the example plugin (``example``), prints a Markdown table and plots it
(``--plot``, default ``sim2sim.png`` beside this file). A backend that cannot run the task gets a
row with its error instead of stopping the table.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import attrs
import numpy as np

from unisim_core import Capability, list_backends
from unisim_gym import (
    UniSimVectorEnv,
    VelocityEvaluation,
    VelocityTrackingCfg,
    VelocityTrackingTask,
    evaluate_velocity_policy,
    go1_rough_cfg,
    load_policy,
)

HERE = Path(__file__).resolve().parent
#: ``--task`` name -> (evaluation config: the training task without randomization, default policy).
TASKS = {"quadruped": (lambda: VelocityTrackingCfg(randomize=False), HERE / "policy.pt"),
         "go1": (lambda: go1_rough_cfg(randomize=False, terrain_curriculum=False, episode_length_s=10.0),
                 HERE / "go1" / "policy.pt")}
#: Registered backends that are not engines: the core's test double and the third-party example.
NOT_ENGINES = frozenset({"fake", "example"})
COLUMNS = ("backend", "episodes", "mean return", "v_xy error (m/s)", "w_z error (rad/s)", "falls / 100 ep",
           "steps/s")


def installed_engines() -> list[str]:
    """Names of the backends whose status is ``ok``, without the non-engines."""
    return [r.name for r in list_backends() if r.status == "ok" and r.name not in NOT_ENGINES]


def row(ev: VelocityEvaluation) -> list[str]:
    return [ev.backend, str(ev.episodes), f"{ev.mean_return:.2f}", f"{ev.lin_vel_error:.3f}",
            f"{ev.ang_vel_error:.3f}", f"{ev.falls_per_100:.1f}", f"{ev.steps_per_s:,.0f}"]


def markdown(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def plot_table(results: list[VelocityEvaluation], path: Path) -> None:
    """Bar charts of return, tracking error and falls per backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r.backend for r in results]
    panels = (("mean return", [r.mean_return for r in results]),
              ("v_xy error (m/s)", [r.lin_vel_error for r in results]),
              ("falls / 100 episodes", [r.falls_per_100 for r in results]),
              ("env steps/s (noisy)", [r.steps_per_s for r in results]))
    fig, axes = plt.subplots(1, len(panels), figsize=(3.2 * len(panels), 3))
    for ax, (title, values) in zip(axes, panels):
        ax.bar(names, values, color="tab:orange")
        ax.set_title(title, fontsize=10)
        ax.tick_params(axis="x", rotation=30)
    fig.suptitle("One MuJoCo-trained policy, unchanged, on every engine")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def record_video(policy, backend: str, path: Path, seconds: float, seed: int, size: tuple[int, int] = (480, 320),
                 fps: int = 50, cfg: VelocityTrackingCfg | None = None, track_body: str = "base") -> None:
    """A one-env clip with the camera tracking the base (needs the backend's VIDEO_CAPTURE);
    ``size`` is ``(width, height)`` in pixels, ``fps`` at most the 50 Hz control rate."""
    import imageio.v2 as imageio

    env = UniSimVectorEnv(VelocityTrackingTask(cfg or VelocityTrackingCfg(randomize=False)), backend, 1, seed=seed)
    try:
        if Capability.VIDEO_CAPTURE not in env.backend.capabilities:
            raise SystemExit(f"--video: backend {backend!r} offers no video capture; record with --backend mujoco")
        env.backend.init_renderer(0.0, offset_mode="none", headless=True, capture=True, width=size[0], height=size[1],
                                  camera_kwargs={"distance": 1.6, "azimuth": 120.0, "elevation": -15.0,
                                                 "track_body": track_body})
        obs, _ = env.reset(seed=seed)
        stride = max(1, round(1.0 / (env.control_dt * fps)))
        with imageio.get_writer(str(path), fps=1.0 / (env.control_dt * stride)) as writer:
            for i in range(round(seconds / env.control_dt)):
                obs, *_ = env.step(policy(obs))
                if i % stride == 0:
                    writer.append_data(env.backend.capture_video_frame())
    finally:
        env.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = p.add_mutually_exclusive_group()
    which.add_argument("--backend", default="mujoco", help="backend name, e.g. mujoco, motrix, ray")
    which.add_argument("--all", action="store_true", help="every installed engine (the sim2sim table)")
    which.add_argument("--backends", nargs="+", help="these engines (a table, like --all)")
    p.add_argument("--task", choices=sorted(TASKS), default="quadruped")
    p.add_argument("--policy", type=Path, help="default: the task's shipped policy")
    p.add_argument("--baseline", action="store_true", help="add a standing-still row (zero action) per engine")
    p.add_argument("--num-envs", type=int, default=32)
    p.add_argument("--episodes-per-env", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--video", type=Path, help="write a clip (.mp4 or .gif) of one robot")
    p.add_argument("--video-seconds", type=float, default=8.0)
    p.add_argument("--video-size", type=int, nargs=2, default=(480, 320), metavar=("W", "H"))
    p.add_argument("--video-fps", type=int, default=50)
    p.add_argument("--plot", type=Path, help="with --all: the table as a PNG (default: sim2sim.png beside the policy)")
    a = p.parse_args(argv)
    make_cfg, default_policy = TASKS[a.task]
    policy = load_policy(a.policy or default_policy)
    names = installed_engines() if a.all else a.backends or [a.backend]
    a.all = a.all or bool(a.backends)
    results, rows = [], []
    runs = [(name, policy, name) for name in names]
    if a.baseline:
        runs += [(name, lambda obs: np.zeros_like(policy(obs)), f"{name} (standing still)")
                 for name in names]
    for name, pol, label in runs:
        print(f"evaluating on {label} ...", file=sys.stderr, flush=True)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # engines' modelling notes; the table is the output
                ev = evaluate_velocity_policy(pol, name, num_envs=a.num_envs, episodes_per_env=a.episodes_per_env,
                                              seed=a.seed, task=lambda: VelocityTrackingTask(make_cfg()))
        except Exception as exc:  # one engine's failure is a row, not the end of the table
            if not a.all:
                raise
            rows.append([label, "-", f"failed: {type(exc).__name__}: {str(exc).splitlines()[0][:80]}", "", "", "",
                         ""])
            continue
        ev = attrs.evolve(ev, backend=label)
        results.append(ev)
        rows.append(row(ev))
    print(markdown(rows))
    if a.all and results:
        plot = a.plot or (a.policy or default_policy).parent / "sim2sim.png"
        plot_table(results, plot)
        print(f"plot: {plot}", file=sys.stderr)
    if a.video is not None:
        record_video(policy, a.backend, a.video, a.video_seconds, a.seed, tuple(a.video_size), a.video_fps,
                     cfg=make_cfg(), track_body="base" if a.task == "quadruped" else "trunk")
        print(f"video: {a.video}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
