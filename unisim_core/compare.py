"""Cross-backend trajectory comparison (``unisim compare``).

The same scene, initial state and hold-position control run on every backend; per step
the base position, base orientation (wxyz), joint positions and velocities (and the
full ``qpos``) are recorded, and each backend is compared with the first (the
reference). Deviations are maxima over envs and coordinates; orientation deviation is
the angle between the quaternions (rad). A tolerance *tier* turns the maxima into a
verdict; the tiers mirror the parity figures of the MotrixSim plugin (see
``plugins/unisim_motrix/README.md``).

No engine is imported here: backends come from the registry.
"""

from __future__ import annotations

import ast
import os
import re
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import OptionalDependencyError

__all__ = [
    "QUANTITIES", "TIERS", "SCENE_TIERS", "Trajectory", "CompareResult", "hold_position_ctrl", "record_trajectory",
    "resolve_scene", "scene_timestep", "initial_state", "deviation_series", "verdict", "compare",
    "format_table", "plot_trajectories", "split_backend_items",
]

#: Recorded quantities: name -> (unit, how the deviation is measured).
QUANTITIES: dict[str, tuple[str, str]] = {
    "base_pos": ("m", "max |Δ| over x, y, z"),
    "base_quat": ("rad", "angle between the quaternions"),
    "dof_pos": ("rad", "max |Δ| over joints"),
    "dof_vel": ("rad/s", "max |Δ| over joints"),
    "qpos": ("", "max |Δ| over qpos coordinates"),
}

#: Tolerance tiers: quantity -> max allowed deviation over the whole run.
TIERS: dict[str, dict[str, float]] = {
    # closed-form smooth dynamics, no contacts: both engines integrate the same ODE
    "tight": {"qpos": 1e-4},
    # contact-rich standing: different contact models, 1 s of simulated time
    "contact": {"base_pos": 5e-3, "dof_pos": 1e-2},
}

#: Scene name (file stem) -> tier.
SCENE_TIERS: dict[str, str] = {
    "pendulum": "tight", "double_pendulum": "tight", "free_body": "tight",
    "quadruped": "contact", "quadruped_hfield": "contact",
}

#: ``--perturb`` default per scene: the parity-test initial conditions
#: (pendulum 0.5 rad, double pendulum (0.5, -0.3) rad, tumbling free body).
DEFAULT_PERTURB: dict[str, float] = {"pendulum": 0.5, "double_pendulum": 0.5, "free_body": 0.5}


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


# ---------------------------------------------------------------------------- scenes
def resolve_scene(scene: str) -> tuple[str, str]:
    """``(path, name)`` of a scene given as a path, a shipped scene name (``quadruped``)
    or a conformance-kit scene name (``pendulum``; needs ``unisim-conformance``)."""
    p = Path(scene).expanduser()
    if p.suffix == ".xml" or os.sep in scene or p.is_file():
        if not p.is_file():
            raise FileNotFoundError(f"--scene: no such file {scene!r}")
        return str(p.resolve()), p.stem
    from .scenes import SCENES_DIR, scene_path

    if (SCENES_DIR / f"{scene}.xml").is_file():
        return str(scene_path(scene)), scene
    known = sorted(x.stem for x in SCENES_DIR.glob("*.xml"))
    from .registry import conformance_scenes

    contributed = conformance_scenes()  # the kit's scenes and those plugins contribute (hook)
    if scene in contributed:
        return str(Path(contributed[scene]).resolve()), scene
    hint = (f"conformance-kit and plugin scenes: {sorted(contributed)}" if contributed else
            "conformance-kit scenes (pendulum, double_pendulum, free_body, ...) need `pip install unisim-conformance`")
    raise FileNotFoundError(f"--scene: {scene!r} is neither a file nor a shipped scene {known}; {hint}")


def scene_timestep(path: str, default: float = 0.002) -> float:
    """``<option timestep>`` of an MJCF file (``default`` when absent)."""
    try:
        opt = ET.parse(path).getroot().find("option")
    except ET.ParseError:
        return default
    if opt is not None and opt.get("timestep"):
        return float(opt.get("timestep"))
    return default


def has_keyframe(path: str, name: str) -> bool:
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError:
        return False
    return any(k.get("name") == name for k in root.iter("key"))


def patched_scene(path: str, mjcf_options: Mapping[str, object], keep: list[str]) -> str:
    """A copy of the MJCF ``path`` with ``<option KEY="VALUE">`` set (e.g. ``noslip_iterations``).

    Written beside the original when the file refers to other files (relative assets),
    else into a temporary folder; the path is appended to ``keep`` for later removal.
    """
    if not mjcf_options:
        return path
    tree = ET.parse(path)
    root = tree.getroot()
    opt = root.find("option")
    if opt is None:
        opt = ET.Element("option")
        root.insert(0, opt)
    for k, v in mjcf_options.items():
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k):
            raise ValueError(f"--scene-option: bad MJCF option name {k!r}")
        opt.set(k, str(v))
    refers = any(e.get("file") for e in root.iter()) or root.find("include") is not None
    folder = os.path.dirname(path) if refers else None
    fd, out = tempfile.mkstemp(suffix=".xml", prefix=f".{Path(path).stem}.unisim-compare-", dir=folder)
    with os.fdopen(fd, "wb") as f:
        tree.write(f)
    keep.append(out)
    return out


# ---------------------------------------------------------------------------- state and records
def initial_state(backend, perturb: float) -> tuple[np.ndarray, np.ndarray]:
    """``(qpos, qvel)`` rows: the default pose (keyframe or qpos0), and with ``perturb`` = ε
    a deterministic offset: hinge/slide joint i gets ε·(1, -0.6, 1, -0.6, ...); a free joint
    gets a rotation of 0.8ε rad about x and qvel ε·(1, 0, 4, 0.6, 2, 0.4)."""
    info = backend.model_info
    q = np.array(backend.get_default_qpos(), dtype=np.float64)
    v = np.zeros(backend.nv)
    if perturb:
        i = 0
        for j, kind in enumerate(info.joint_types):
            a, d = info.joint_qposadr[j], info.joint_dofadr[j]
            if kind in ("hinge", "slide"):
                q[a] += perturb * (1.0 if i % 2 == 0 else -0.6)
                i += 1
            elif kind == "free":
                half = 0.4 * perturb
                rot = np.array([np.cos(half), np.sin(half), 0.0, 0.0])
                w0, x0, y0, z0 = q[a + 3:a + 7]
                w1, x1 = rot[0], rot[1]
                q[a + 3:a + 7] = [w1 * w0 - x1 * x0, w1 * x0 + x1 * w0, w1 * y0 - x1 * z0, w1 * z0 + x1 * y0]
                q[a + 3:a + 7] /= np.linalg.norm(q[a + 3:a + 7])
                v[d:d + 6] = perturb * np.array([1.0, 0.0, 4.0, 0.6, 2.0, 0.4])
    return q, v


@dataclass
class Trajectory:
    """Per-step records of one backend, ``(steps + 1, num_envs, ...)`` (row 0: initial state)."""

    backend: str
    time: np.ndarray
    base_pos: np.ndarray
    base_quat: np.ndarray
    dof_pos: np.ndarray
    dof_vel: np.ndarray
    qpos: np.ndarray
    options: dict = field(default_factory=dict)
    scene_file: str = ""
    dof_names: tuple[str, ...] = ()


def _record(backend) -> dict[str, np.ndarray]:
    return {"base_pos": backend.get_base_pos(), "base_quat": backend.get_base_quat(),
            "dof_pos": backend.get_dof_pos(), "dof_vel": backend.get_dof_vel(), "qpos": backend.get_qpos()}


def rollout(name: str, scene_file: str, keyframe: str | None, num_envs: int, sim_dt: float, decimation: int,
            steps: int, perturb: float, options: Mapping[str, object]) -> Trajectory:
    from .config import SceneCfg
    from .registry import create_backend

    scene = SceneCfg(scene_file, default_keyframe=keyframe)
    with create_backend(name, scene, num_envs, sim_dt, **dict(options)) as b:
        traj = record_trajectory(b, name, steps, decimation, perturb)
    traj.options, traj.scene_file = dict(options), scene_file
    return traj


def record_trajectory(backend, name: str, steps: int, decimation: int = 1, perturb: float = 0.0,
                      ctrl: np.ndarray | None = None) -> Trajectory:
    """Reset every env of an open ``backend`` to :func:`initial_state`, hold ``ctrl`` (default: the
    default pose with :func:`hold_position_ctrl`) for ``steps`` calls of ``step(ctrl, decimation)``
    and record them."""
    b, num_envs = backend, backend.num_envs
    q, v = initial_state(b, perturb)
    b.set_state(np.arange(num_envs), np.tile(q, (num_envs, 1)), np.tile(v, (num_envs, 1)))
    ctrl = hold_position_ctrl(b) if ctrl is None else ctrl
    info = b.model_info
    joints = sorted((info.joint_qposadr[j], n) for j, n in enumerate(info.joint_names)
                    if info.joint_types[j] in ("hinge", "slide"))
    dof_names = tuple(n for _, n in joints) if len(joints) == b.num_dof else ()
    recs = [_record(b)]
    for _ in range(steps):
        b.step(ctrl, decimation)
        recs.append(_record(b))
    arrays = {k: np.stack([np.asarray(r[k], dtype=np.float64) for r in recs]) for k in recs[0]}
    t = np.arange(steps + 1) * b.sim_dt * decimation
    return Trajectory(backend=name, time=t, dof_names=dof_names, **arrays)


# ---------------------------------------------------------------------------- deviations and verdict
def _quat_angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    dot = np.abs(np.sum(a * b, axis=-1)) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    return 2.0 * np.arccos(np.clip(dot, 0.0, 1.0))


def deviation_series(ref: Trajectory, other: Trajectory) -> dict[str, np.ndarray]:
    """Per step, the deviation of ``other`` from ``ref`` for every quantity (max over envs, coords)."""
    out = {}
    for k in QUANTITIES:
        a, b = getattr(ref, k), getattr(other, k)
        if a.shape != b.shape:
            raise ValueError(f"{k}: shapes differ between {ref.backend} {a.shape} and {other.backend} {b.shape}")
        if k == "base_quat":
            d = _quat_angle(a, b)
        else:
            d = np.abs(a - b)
        d = d.reshape(d.shape[0], -1)
        out[k] = d.max(axis=1) if d.shape[1] else np.zeros(d.shape[0])
    return out


def verdict(max_dev: Mapping[str, float], tolerances: Mapping[str, float]) -> tuple[str, list[str]]:
    """``("PASS" | "FAIL" | "NO VERDICT", reasons)``: every toleranced quantity must be within
    its tolerance (a non-finite deviation fails)."""
    if not tolerances:
        return "NO VERDICT", ["no tolerance tier for this scene (use --tier or --tolerance)"]
    reasons = []
    for k, tol in tolerances.items():
        if k not in max_dev:
            raise ValueError(f"tolerance for unknown quantity {k!r}; known: {sorted(QUANTITIES)}")
        d = float(max_dev[k])
        if not (np.isfinite(d) and d <= tol):
            reasons.append(f"{k} {d:.3g} > {tol:.3g}")
    return ("FAIL" if reasons else "PASS"), reasons


@dataclass
class CompareResult:
    scene: str
    scene_file: str
    reference: str
    num_envs: int
    sim_dt: float
    decimation: int
    steps: int
    perturb: float
    tier: str | None
    tolerances: dict[str, float]
    trajectories: dict[str, Trajectory]
    deviations: dict[str, dict[str, np.ndarray]]  # backend -> quantity -> per-step deviation
    verdicts: dict[str, tuple[str, list[str]]]  # backend -> (verdict, reasons)

    @property
    def verdict(self) -> str:
        vs = [v for v, _ in self.verdicts.values()]
        if "FAIL" in vs:
            return "FAIL"
        return "PASS" if vs and all(v == "PASS" for v in vs) else "NO VERDICT"

    def max_deviation(self, backend: str) -> dict[str, float]:
        return {k: float(np.max(s)) for k, s in self.deviations[backend].items()}

    def to_json(self) -> dict:
        return {
            "scene": self.scene, "scene_file": self.scene_file, "reference": self.reference,
            "backends": list(self.trajectories), "num_envs": self.num_envs, "sim_dt": self.sim_dt,
            "decimation": self.decimation, "steps": self.steps, "perturb": self.perturb,
            "duration_s": float(self.steps * self.sim_dt * self.decimation),
            "options": {n: {k: repr(v) if not isinstance(v, (int, float, str, bool)) else v
                            for k, v in t.options.items()} for n, t in self.trajectories.items()},
            "tier": self.tier, "tolerances": self.tolerances, "verdict": self.verdict,
            "comparisons": {
                n: {"max_deviation": self.max_deviation(n), "verdict": v, "reasons": r,
                    "deviation_series": {k: s.tolist() for k, s in self.deviations[n].items()}}
                for n, (v, r) in self.verdicts.items()},
            "time": self.trajectories[self.reference].time.tolist(),
            "base_height_env0": {n: t.base_pos[:, 0, 2].tolist() for n, t in self.trajectories.items()},
        }


def compare(backends: Sequence[str], scene: str, *, steps: int | None = None, num_envs: int = 1,
            sim_dt: float | None = None, decimation: int = 1, perturb: float | None = None,
            options: Mapping[str, Mapping[str, object]] | None = None,
            mjcf_options: Mapping[str, Mapping[str, object]] | None = None,
            tier: str | None = None, tolerances: Mapping[str, float] | None = None,
            keyframe: str = "home") -> CompareResult:
    """Run ``scene`` on each backend and compare with ``backends[0]``.

    ``options``/``mjcf_options``: per backend name, backend options and MJCF ``<option>``
    attributes (the latter through a patched copy of the scene). ``steps`` defaults to 1 s
    of simulated time, ``sim_dt`` to the scene's timestep, ``perturb`` to the parity-test
    initial condition of pendulum-type scenes (0 elsewhere). ``tier`` defaults to the
    scene's; ``tolerances`` override or extend the tier's.
    """
    if len(backends) < 2:
        raise ValueError(f"--backends: expected at least two backends, got {list(backends)}")
    if len(set(backends)) != len(backends):
        raise ValueError(f"--backends: duplicate names in {list(backends)}")
    path, name = resolve_scene(scene)
    sim_dt = float(sim_dt) if sim_dt is not None else scene_timestep(path)
    if steps is None:
        steps = max(1, round(1.0 / (sim_dt * decimation)))
    if perturb is None:
        perturb = DEFAULT_PERTURB.get(name, 0.0)
    tier = tier if tier is not None else SCENE_TIERS.get(name)
    if tier is not None and tier not in TIERS:
        raise ValueError(f"--tier: unknown tier {tier!r}; known: {sorted(TIERS)}")
    tols = dict(TIERS[tier]) if tier else {}
    for k, v in (tolerances or {}).items():
        if k not in QUANTITIES:
            raise ValueError(f"--tolerance: unknown quantity {k!r}; known: {sorted(QUANTITIES)}")
        tols[k] = float(v)
    options = {k: dict(v) for k, v in (options or {}).items()}
    mjcf_options = {k: dict(v) for k, v in (mjcf_options or {}).items()}
    for what, table in (("--option", options), ("--scene-option", mjcf_options)):
        for k in table:
            if k not in backends:
                raise ValueError(f"{what}: {k!r} is not one of the compared backends {list(backends)}")
    keyframe = keyframe if keyframe and has_keyframe(path, keyframe) else None
    temp: list[str] = []
    trajs: dict[str, Trajectory] = {}
    try:
        for b in backends:
            f = patched_scene(path, mjcf_options.get(b, {}), temp)
            trajs[b] = rollout(b, f, keyframe, num_envs, sim_dt, decimation, steps, perturb, options.get(b, {}))
            trajs[b].scene_file = path if f == path else f"{path} + <option {mjcf_options[b]}>"
            trajs[b].options = {**options.get(b, {}), **{f"mjcf.{k}": v for k, v in mjcf_options.get(b, {}).items()}}
    finally:
        for f in temp:
            try:
                os.unlink(f)
            except OSError:
                pass
    ref = backends[0]
    devs = {b: deviation_series(trajs[ref], trajs[b]) for b in backends[1:]}
    verdicts = {b: verdict({k: float(np.max(s)) for k, s in d.items()}, tols) for b, d in devs.items()}
    return CompareResult(scene=name, scene_file=path, reference=ref, num_envs=num_envs, sim_dt=sim_dt,
                         decimation=decimation, steps=steps, perturb=float(perturb), tier=tier, tolerances=tols,
                         trajectories=trajs, deviations=devs, verdicts=verdicts)


# ---------------------------------------------------------------------------- output
def _fmt(x: float) -> str:
    return f"{x:.2e}"


def format_table(res: CompareResult, checkpoints: int = 4) -> str:
    """Running max deviation per quantity at ``checkpoints`` times, tolerance and status."""
    from .tables import table as _table

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
    lines.append(_table(rows, header))
    tier = f"tier {res.tier!r}" if res.tier else "no tier"
    for b, (v, reasons) in res.verdicts.items():
        lines.append(f"verdict {b} vs {res.reference} ({tier}, tolerances {res.tolerances or '{}'}): {v}"
                     + (f" — {'; '.join(reasons)}" if reasons else ""))
    return "\n".join(lines)


def plot_trajectories(res: CompareResult, path: str, max_joints: int = 3) -> str:
    """PNG of base height and the first ``max_joints`` joints over time (env 0), one subplot
    per quantity, one line per backend. Needs matplotlib (``pip install 'unisim-core[plot]'``)."""
    try:
        import matplotlib
    except ImportError:
        raise OptionalDependencyError(
            "plotting (unisim compare --plot) needs matplotlib, which unisim-core's 'plot' extra installs: "
            "pip install 'unisim-core[plot]'") from None

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
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


# ---------------------------------------------------------------------------- CLI helpers
def _value(text: str) -> object:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def split_backend_items(items: Sequence[str] | None, backends: Sequence[str], flag: str
                        ) -> dict[str, dict[str, object]]:
    """``["mujoco.integrator=implicitfast", "threads=1"]`` -> per-backend dicts; an item
    without a ``BACKEND.`` prefix applies to every backend."""
    out: dict[str, dict[str, object]] = {b: {} for b in backends}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"{flag}: expected [BACKEND.]KEY=VALUE, got {item!r}")
        target, dot, name = key.partition(".")
        if dot:
            if target not in out:
                raise ValueError(f"{flag}: {target!r} in {item!r} is not one of the compared backends "
                                 f"{list(backends)}")
            out[target][name] = _value(value)
        else:
            for b in out:
                out[b][key] = _value(value)
    return {b: d for b, d in out.items() if d}
