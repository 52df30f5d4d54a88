"""The report of a ``unisim compare`` run (a :class:`~unisim_core.tools.compare.CompareResult`): the text
table of running maximum deviations with the verdicts, and a PNG plot of the trajectories.
"""

from __future__ import annotations

import os

import numpy as np

from unisim_core.contract.errors import OptionalDependencyError
from unisim_core.tools.compare import QUANTITIES, CompareResult
from unisim_core.tools.output_file import write_figure
from unisim_core.tools.tables import table

__all__ = ["format_table", "plot_trajectories"]


def _fmt(x: float) -> str:
    return f"{x:.2e}"


def format_table(res: CompareResult, checkpoints: int = 4) -> str:
    """Running max deviation per quantity at ``checkpoints`` times, tolerance and status."""
    n = res.steps
    marks = sorted({max(1, round(n * (i + 1) / checkpoints)) for i in range(checkpoints)})
    t = res.trajectories[res.reference].time
    header = ["backend", "quantity", "unit"] + [f"≤{t[m]:.3g}s" for m in marks] + ["tolerance", "status"]
    rows = []
    for b, series in res.deviations.items():
        for k, s in series.items():
            run = np.maximum.accumulate(s)
            tol = res.tolerances.get(k)
            status = "-" if tol is None else ("ok" if np.isfinite(run[-1]) and run[-1] <= tol else "EXCEEDS")
            rows.append([b, k, QUANTITIES[k][0] or "-"] + [_fmt(run[m]) for m in marks]
                        + ["-" if tol is None else _fmt(tol), status])
    shown = os.path.relpath(res.scene_file)
    shown = res.scene_file if shown.startswith("..") else shown
    lines = [
        f"scene {res.scene} ({shown}), {res.num_envs} env(s), dt={res.sim_dt:g}, decimation="
        f"{res.decimation}, {res.steps} steps = {t[-1]:.3g} s, perturb={res.perturb:g}",
    ]
    for b, tr in res.trajectories.items():
        lines.append(f"  {b}{' (reference)' if b == res.reference else ''}: options {tr.options or '{}'}")
    lines.append(f"max deviation vs {res.reference} "
                 "(running max up to each time; base_quat: angle between quaternions)")
    lines.append(table(rows, header))
    tier = f"tier {res.tier!r}" if res.tier else "no tier"
    for b, (v, reasons) in res.verdicts.items():
        lines.append(f"verdict {b} vs {res.reference} ({tier}, tolerances {res.tolerances or '{}'}): {v}"
                     + (f" — {'; '.join(reasons)}" if reasons else ""))
    return "\n".join(lines)


def plot_trajectories(res: CompareResult, path: str, max_joints: int = 3) -> str:
    """PNG of base height and the first ``max_joints`` joints over time (env 0), one subplot
    per quantity, one line per backend. Needs matplotlib (``pip install 'unisim-contract[plot]'``)."""
    try:
        import matplotlib
    except ImportError:
        raise OptionalDependencyError(
            "plotting (unisim compare --plot) needs matplotlib, which unisim-contract's 'plot' extra installs: "
            "pip install 'unisim-contract[plot]'") from None

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    ref = res.trajectories[res.reference]
    nj = min(max_joints, ref.dof_pos.shape[2])
    panels = [("base height (m)", lambda tr: tr.base_pos[:, 0, 2])]
    for j in range(nj):
        label = ref.dof_names[j] if ref.dof_names else f"joint {j}"
        panels.append((f"{label} (rad)", lambda tr, j=j: tr.dof_pos[:, 0, j]))
    fig, axes = plt.subplots(len(panels), 1, figsize=(7, 1.9 * len(panels) + 0.6), sharex=True, squeeze=False)
    styles = ["-", "--", ":", "-."]
    for ax, (label, get) in zip(axes[:, 0], panels):
        for i, (b, tr) in enumerate(res.trajectories.items()):
            ax.plot(tr.time, get(tr), styles[i % len(styles)], lw=1.4, label=b)
        ax.set_ylabel(label, fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
    axes[-1, 0].set_xlabel("time (s)")
    fig.suptitle(f"unisim compare: {res.scene} — {res.verdict}", fontsize=10)
    fig.tight_layout()
    write_figure("--plot", path, fig)
    return path
