"""Closed-loop policy evaluation across engines: per-episode metrics, confidence intervals and verdicts.

Engine-free: the episodes are run elsewhere (``unisim_gym.evaluate_sim2sim``, ``unisim eval``);
this module summarizes them. Every engine runs the same episodes: episode ``k`` starts from the
same state with the same command on every engine (one seeded batch reset), so the engines'
episodes are **paired** and a difference is judged on the per-episode differences.

Verdict of an engine against the reference, per judged metric (tolerance ``tol``): with ``d_k``
the metric of episode ``k`` on the engine minus on the reference, ``mean(d) ± h`` its 95 %
Student-t confidence interval, the metric is within tolerance when the whole interval is:
``|mean(d)| + h <= tol``. The engine PASSes when every judged metric is; otherwise it FAILs,
and the reason says whether the difference itself exceeds ``tol`` or only its interval does
(too few episodes to show it: run more). Default tolerances (:data:`DEFAULT_TOLERANCES`):
``v_xy`` tracking error 0.1 m/s, ``w_z`` tracking error 0.1 rad/s, fall rate 0.1 (10 points);
return and episode length are reported, judged only when given a tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import attrs
import numpy as np

from unisim_core.contract.errors import InvalidInputError
from unisim_core.tools.tables import table

__all__ = ["METRICS", "DEFAULT_TOLERANCES", "EngineEpisodes", "MetricDiff", "EngineVerdict", "Sim2SimReport",
           "mean_ci", "t_quantile_975", "check_tolerances", "judge", "format_report", "plot_curves",
           "side_by_side_video", "installed_engines"]

#: Per-episode metrics: name -> (column title, unit).
METRICS: dict[str, tuple[str, str]] = {
    "return": ("return", ""),
    "lin_vel_error": ("v_xy error", "m/s"),
    "ang_vel_error": ("w_z error", "rad/s"),
    "fall": ("falls", "/episode"),
    "length_s": ("length", "s"),
}
#: Tolerances of the judged metrics (units of :data:`METRICS`).
DEFAULT_TOLERANCES: dict[str, float] = {"lin_vel_error": 0.1, "ang_vel_error": 0.1, "fall": 0.1}
#: Registered backends that are not engines (the test double, the third-party example) or that wrap one (ray).
NOT_ENGINES = frozenset({"fake", "example", "ray"})
#: Two-sided 95 % Student-t quantiles ``t_{0.975, df}`` for df = 1..30.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t_quantile_975(df: int) -> float:
    """``t_{0.975}`` of Student's t with ``df`` degrees of freedom (table to 30, then Abramowitz &
    Stegun 26.7.5's expansion about the normal quantile, within 1e-4 of the exact value)."""
    if df < 1:
        raise InvalidInputError(f"df: expected an int >= 1, got {df}")
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959963984540054
    return (z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)
            + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * df ** 3))


def mean_ci(x: np.ndarray) -> tuple[float, float]:
    """``(mean, h)``: the mean of the finite values of ``x`` and the half-width of its 95 %
    Student-t interval (``inf`` for one value, ``nan`` for none)."""
    x = np.asarray(x, dtype=np.float64)
    x = x[np.isfinite(x)]
    if len(x) == 0:
        return math.nan, math.nan
    if len(x) == 1:
        return float(x[0]), math.inf
    return float(x.mean()), t_quantile_975(len(x) - 1) * float(x.std(ddof=1)) / math.sqrt(len(x))


@attrs.frozen(kw_only=True)
class EngineEpisodes:
    """One engine's run: ``metrics`` ``{name: (episodes,)}`` (NaN where a task has no such
    metric), ``curves`` ``{name: (steps,)}`` per control step (means over the envs still in their
    first episode, and ``alive``: their fraction), ``qpos`` of env 0 per step ``(steps, nq)``
    (for video; ``None`` if not recorded), ``wall_s``, ``error`` (the failure, else ``None``), and
    the ``model_file`` and ``base_body`` the task ran."""

    backend: str
    metrics: dict[str, np.ndarray] = attrs.field(factory=dict)
    curves: dict[str, np.ndarray] = attrs.field(factory=dict)
    control_dt: float = 0.0
    qpos: np.ndarray | None = None
    wall_s: float = 0.0
    error: str | None = None
    model_file: str = ""
    base_body: str | None = None

    @property
    def episodes(self) -> int:
        return 0 if not self.metrics else len(next(iter(self.metrics.values())))


@attrs.frozen
class MetricDiff:
    """Paired difference engine - reference of one metric: ``mean ± half`` (95 %), its tolerance
    (``None``: not judged) and whether it is within it."""

    metric: str
    mean: float
    half: float
    tolerance: float | None
    ok: bool | None

    def reason(self) -> str:
        name, unit = METRICS[self.metric]
        text = f"{name} {self.mean:+.3g} ± {self.half:.2g} {unit}".rstrip()
        if self.ok is None or self.ok:
            return text
        if abs(self.mean) - self.half > self.tolerance:
            return f"{text}: differs by more than {self.tolerance:g}"
        if abs(self.mean) > self.tolerance:
            return f"{text}: beyond {self.tolerance:g}"
        return f"{text}: interval reaches past {self.tolerance:g} (more episodes narrow it)"


@attrs.frozen
class EngineVerdict:
    """``verdict``: ``"reference"``, ``"PASS"``, ``"FAIL"`` or ``"ERROR"``; ``diffs`` per metric."""

    backend: str
    verdict: str
    diffs: tuple[MetricDiff, ...] = ()
    detail: str = ""


@attrs.frozen
class Sim2SimReport:
    """Every engine's episodes and verdict; ``reference`` names the reference engine."""

    reference: str
    runs: tuple[EngineEpisodes, ...]
    verdicts: tuple[EngineVerdict, ...]
    tolerances: dict[str, float]
    seed: int = 0
    command: str = ""

    @property
    def passed(self) -> bool:
        return all(v.verdict in ("PASS", "reference") for v in self.verdicts)

    def to_json(self) -> dict:
        def num(x):
            return None if x is None or not math.isfinite(x) else float(x)

        runs = {}
        for r in self.runs:
            stats = {k: dict(zip(("mean", "ci95"), map(num, mean_ci(v)))) for k, v in r.metrics.items()}
            runs[r.backend] = {"episodes": r.episodes, "wall_s": r.wall_s, "error": r.error, "metrics": stats,
                               "per_episode": {k: [num(x) for x in v] for k, v in r.metrics.items()},
                               "curves": {k: [num(x) for x in v] for k, v in r.curves.items()},
                               "control_dt": r.control_dt}
        verdicts = {v.backend: {"verdict": v.verdict, "detail": v.detail,
                                "diffs": {d.metric: {"mean": num(d.mean), "ci95": num(d.half), "tolerance": d.tolerance,
                                                     "ok": d.ok} for d in v.diffs}} for v in self.verdicts}
        return {"reference": self.reference, "seed": self.seed, "command": self.command,
                "tolerances": self.tolerances, "runs": runs, "verdicts": verdicts,
                "rule": "PASS when, for every judged metric, |mean(d)| + h95 <= tolerance, with d the per-episode "
                        "difference engine - reference over paired episodes (same initial state and command)"}


def check_tolerances(tolerances: Mapping[str, float | None] | None) -> dict[str, float]:
    """:data:`DEFAULT_TOLERANCES` updated with ``tolerances`` (``None`` drops a metric from judging);
    an unknown metric or a negative tolerance is refused naming it."""
    tol = {**DEFAULT_TOLERANCES, **(tolerances or {})}
    unknown = sorted(set(tol) - set(METRICS))
    if unknown:
        raise InvalidInputError(f"tolerances: unknown metrics {unknown}; known: {list(METRICS)}")
    tol = {k: float(v) for k, v in tol.items() if v is not None}
    bad = {k: v for k, v in tol.items() if not v >= 0}
    if bad:
        raise InvalidInputError(f"tolerances: expected numbers >= 0, got {bad}")
    return tol


def judge(runs: Sequence[EngineEpisodes], reference: str, tolerances: Mapping[str, float] | None = None,
          *, seed: int = 0, command: str = "") -> Sim2SimReport:
    """Verdicts of ``runs`` against the run named ``reference`` (see the module docstring);
    ``tolerances`` replace or add to :data:`DEFAULT_TOLERANCES` (a metric set to ``None`` or
    absent from both is reported only)."""
    tol = check_tolerances(tolerances)
    by_name = {r.backend: r for r in runs}
    if reference not in by_name:
        raise InvalidInputError(f"reference: {reference!r} is not one of the evaluated backends {list(by_name)}")
    ref = by_name[reference]
    verdicts = []
    for r in runs:
        if r.error is not None:
            verdicts.append(EngineVerdict(r.backend, "ERROR", detail=r.error))
            continue
        if r.backend == reference:
            verdicts.append(EngineVerdict(r.backend, "reference"))
            continue
        if ref.error is not None:
            verdicts.append(EngineVerdict(r.backend, "ERROR", detail=f"the reference {reference!r} failed"))
            continue
        if r.episodes != ref.episodes:
            raise InvalidInputError(f"runs: {r.backend!r} has {r.episodes} episodes, the reference {ref.episodes}: "
                                    "paired episodes need the same number")
        diffs = []
        for name in METRICS:
            d = np.asarray(r.metrics.get(name, []), float) - np.asarray(ref.metrics.get(name, []), float)
            if not np.isfinite(d).any():
                continue
            mean, half = mean_ci(d)
            t = tol.get(name)
            diffs.append(MetricDiff(name, mean, half, t, None if t is None else abs(mean) + half <= t))
        judged = [d for d in diffs if d.ok is not None]
        failed = [d for d in judged if not d.ok]
        detail = "; ".join(d.reason() for d in failed) if failed else (
            "no judged metric" if not judged else "all judged metrics within tolerance")
        verdicts.append(EngineVerdict(r.backend, "FAIL" if failed or not judged else "PASS", tuple(diffs), detail))
    return Sim2SimReport(reference, tuple(runs), tuple(verdicts), tol, seed, command)


def _pm(mean: float, half: float, digits: int = 3) -> str:
    if not math.isfinite(mean):
        return "-"
    return f"{mean:.{digits}f} ± {half:.{digits}f}" if math.isfinite(half) else f"{mean:.{digits}f}"


def format_report(report: Sim2SimReport) -> str:
    """Two tables: the metrics per engine (mean ± 95 % half-width over episodes), and the paired
    differences against the reference with each engine's verdict and its reasons."""
    shown = [m for m in METRICS if any(np.isfinite(r.metrics.get(m, [np.nan])).any() for r in report.runs)]
    rows = []
    for r in report.runs:
        if r.error is not None:
            rows.append([r.backend, "-", "error (below)"])
            continue
        rows.append([r.backend, str(r.episodes)] + [_pm(*mean_ci(r.metrics[m]), 2 if m == "return" else 3)
                                                    for m in shown] + [f"{r.wall_s:.1f}"])
    head = ["engine", "episodes"] + [f"{METRICS[m][0]} ({METRICS[m][1]})" if METRICS[m][1] else METRICS[m][0]
                                     for m in shown] + ["wall s"]
    rows = [row + [""] * (len(head) - len(row)) for row in rows]
    out = [table(rows, head), ""]
    vrows = []
    for v in report.verdicts:
        diffs = {d.metric: d for d in v.diffs}
        cells = [(_pm(diffs[m].mean, diffs[m].half) + ("" if diffs[m].tolerance is None else
                                                       f" (≤ {diffs[m].tolerance:g})")) if m in diffs else "-"
                 for m in shown]
        vrows.append([v.backend] + cells + [v.verdict])
    out.append(table(vrows, [f"vs {report.reference}"] + [f"Δ {METRICS[m][0]}" for m in shown] + ["verdict"]))
    reasons = [f"  {v.backend}: {v.verdict}: {v.detail}" for v in report.verdicts if v.verdict in ("FAIL", "ERROR")]
    tol = ", ".join(f"{METRICS[k][0]} {v:g} {METRICS[k][1]}".rstrip() for k, v in report.tolerances.items())
    out.append(f"PASS: the 95 % interval of the paired difference (engine - {report.reference}, same initial states "
               f"and commands) lies within the tolerance for every judged metric ({tol}).")
    return "\n".join(out + reasons)


def plot_curves(report: Sim2SimReport, path: str) -> None:
    """A PNG of the per-step curves (mean over envs still in their first episode) per engine."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from unisim_core.tools.output_file import write_figure

    runs = [r for r in report.runs if r.error is None]
    names = [k for k in ("lin_vel_error", "ang_vel_error", "reward", "alive") if any(k in r.curves for r in runs)]
    titles = {"lin_vel_error": "v_xy error (m/s)", "ang_vel_error": "w_z error (rad/s)", "reward": "reward per step",
              "alive": "envs not fallen (fraction)"}
    fig, axes = plt.subplots(1, len(names), figsize=(3.6 * len(names), 3.0), squeeze=False)
    for ax, key in zip(axes[0], names):
        for r in runs:
            if key in r.curves:
                y = r.curves[key]
                ax.plot(np.arange(len(y)) * r.control_dt, y, label=r.backend, lw=1.2)
        ax.set_title(titles[key], fontsize=10)
        ax.set_xlabel("time (s)")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"one policy on every engine (reference {report.reference}; seed {report.seed})", fontsize=10)
    fig.tight_layout()
    write_figure("--plot", path, fig)


def side_by_side_video(runs: Sequence[EngineEpisodes], path: str, *, width: int = 320, height: int = 240,
                       fps: int = 25) -> int:
    """Write ``path`` (.mp4 or .gif): env 0 of every run side by side, each panel labelled with its
    engine, drawn by the shared renderer (:func:`unisim_core.contract._playback.video_renderer`: MuJoCo's,
    the same for every engine) from the run's recorded ``qpos``, the camera following the base.
    Returns the number of frames."""
    import os
    import tempfile

    from unisim_core.contract._playback import video_renderer
    from unisim_core.contract.config import CameraCfg
    from unisim_core.contract.errors import OptionalDependencyError
    from unisim_core.tools.output_file import check_output_file

    runs = [r for r in runs if r.error is None and r.qpos is not None]
    if not runs:
        raise InvalidInputError("--video: no run recorded a trajectory to draw")
    try:
        import imageio.v2 as imageio
    except ImportError:
        raise OptionalDependencyError("--video needs imageio (and imageio-ffmpeg for .mp4): pip install "
                                      "'unisim-mujoco[video]'") from None
    check_output_file("--video", path)
    camera = CameraCfg(distance=1.5, azimuth=120.0, elevation=-20.0, track_body=runs[0].base_body)
    renderer = video_renderer()(runs[0].model_file, 1, width, height, 0.0, "none", camera)
    try:
        stride = max(1, round(1.0 / (runs[0].control_dt * fps)))
        steps = min(len(r.qpos) for r in runs)
        frames = [np.concatenate([_label(renderer.draw(r.qpos[t:t + 1]), r.backend) for r in runs], axis=1)
                  for t in range(0, steps, stride)]
    finally:
        renderer.close()
    rate = 1.0 / (runs[0].control_dt * stride)
    gif = str(path).lower().endswith(".gif")
    folder, name = os.path.split(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".gif" if gif else ".mp4")
    os.close(fd)
    try:  # encode beside the target, then rename over it: an interrupted run leaves the old file
        kwargs = {"duration": 1000.0 / rate, "loop": 0} if gif else {"fps": rate, "codec": "libx264",
                                                                     "macro_block_size": 1}
        with imageio.get_writer(tmp, **kwargs) as w:
            for frame in frames:
                w.append_data(frame)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as open(path, "wb") would have made it
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return len(frames)


def _label(frame: np.ndarray, text: str) -> np.ndarray:
    """``frame`` with ``text`` drawn in its top-left corner (Pillow, when installed)."""
    try:
        from PIL import Image, ImageDraw
    except ImportError:
        return frame
    img = Image.fromarray(np.ascontiguousarray(frame))
    draw = ImageDraw.Draw(img)
    draw.rectangle((0, 0, 8 + 7 * len(text), 18), fill=(0, 0, 0))
    draw.text((4, 3), text, fill=(255, 255, 255))
    return np.asarray(img)


def installed_engines() -> list[str]:
    """Backends with status ``ok`` that are engines (not ``fake``, ``example`` or ``ray``), MuJoCo first."""
    from unisim_core.contract.registry import list_backends

    names = [r.name for r in list_backends() if r.status == "ok" and r.name not in NOT_ENGINES]
    return sorted(names, key=lambda n: (n != "mujoco", n))
