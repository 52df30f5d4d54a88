"""Cross-backend trajectory comparison (``unisim compare``).

The same scene, initial state and hold-position control run on every backend; per step
the base position, base orientation (wxyz), joint positions and velocities (and the
full ``qpos``) are recorded, and each backend is compared with the first (the
reference). Deviations are maxima over envs and coordinates; orientation deviation is
the angle between the quaternions (rad). A tolerance *tier* turns the maxima into a
verdict; the tiers mirror the parity figures of the MotrixSim plugin (see
``plugins/unisim_motrix/README.md``).

Scene arguments resolve through :func:`unisim_core.scenes.resolve_scene` (MJCF timestep, keyframe
and ``<option>`` patches: ``scenes.mjcf_file``); the report (table, plot) is ``compare_report``'s.
No engine is imported here: backends come from the registry.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from unisim_core.scenes import resolve_scene
from unisim_core.scenes.mjcf_file import keyframe_names, patched_scene, scene_timestep

__all__ = [
    "QUANTITIES", "TIERS", "SCENE_TIERS", "Trajectory", "CompareResult", "hold_position_ctrl", "record_trajectory",
    "initial_state", "deviation_series", "verdict", "compare", "split_backend_items",
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


# ---------------------------------------------------------------------------- state and records
def initial_state(backend, perturb: float, qpos: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(qpos, qvel)`` rows: the default pose (keyframe or qpos0; ``qpos`` (nq,) instead when given),
    and with ``perturb`` = ε a deterministic offset: hinge/slide joint i gets ε·(1, -0.6, 1, -0.6, ...);
    a free joint gets a rotation of 0.8ε rad about x and qvel ε·(1, 0, 4, 0.6, 2, 0.4)."""
    info = backend.model_info
    q = np.array(backend.get_default_qpos() if qpos is None else qpos, dtype=np.float64)
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
    torque_driven: bool = False  #: every actuator a motor (see :func:`torque_driven`)


def _record(backend) -> dict[str, np.ndarray]:
    return {"base_pos": backend.get_base_pos(), "base_quat": backend.get_base_quat(),
            "dof_pos": backend.get_dof_pos(), "dof_vel": backend.get_dof_vel(), "qpos": backend.get_qpos()}


def rollout(name: str, scene_file: str, keyframe: str | None, num_envs: int, sim_dt: float, decimation: int,
            steps: int, perturb: float, options: Mapping[str, object],
            hold_gains: tuple[float, float] | None = None) -> Trajectory:
    from unisim_core.contract.config import SceneCfg
    from unisim_core.contract.factory import create_backend

    scene = SceneCfg(scene_file, default_keyframe=keyframe)
    with create_backend(name, scene, num_envs, sim_dt, **dict(options)) as b:
        traj = record_trajectory(b, name, steps, decimation, perturb, hold_gains=hold_gains)
    traj.options, traj.scene_file = dict(options), scene_file
    return traj


def motor_hold(backend, gains: tuple[float, float]):
    """Install a PD hold of the default pose on a model driven by torque motors: an
    :class:`~unisim_core.tools.actuators.ActuatorModel` (``tau = kp (q0 - q) - kd qd`` every substep, clipped
    to each motor's ctrl range, the same numpy on every engine); returns the targets to step with."""
    from unisim_core.tools.actuators import ActuatorModel, IdealPDCfg

    kp, kd = gains
    limit = {re.escape(j): float(max(abs(lo), abs(hi)))
             for j, (lo, hi) in zip(backend.get_actuator_joint_names(), backend.get_actuator_ctrl_range())}
    model = ActuatorModel(backend, [IdealPDCfg(joint_names=(".*",), stiffness=kp, damping=kd, effort_limit=limit)])
    q0 = backend.get_default_dof_pos()[backend.get_joint_dof_pos_indices(list(model.joint_names))]
    return np.ascontiguousarray(np.broadcast_to(q0, (backend.num_envs, len(q0))), dtype=backend.np_dtype)


def torque_driven(backend) -> bool:
    """Whether the model has actuators and every one is a motor (no position or velocity gain)."""
    kp, kd = backend.get_actuator_gains()
    return len(kp) > 0 and not np.any(kp) and not np.any(kd)


def record_trajectory(backend, name: str, steps: int, decimation: int = 1, perturb: float = 0.0,
                      ctrl: np.ndarray | None = None, qpos: np.ndarray | None = None,
                      hold_gains: tuple[float, float] | None = None) -> Trajectory:
    """Reset every env of an open ``backend`` to :func:`initial_state` (from ``qpos`` when given), hold
    ``ctrl`` (default: the default pose, with :func:`hold_position_ctrl` for servos, or with a PD hold
    of gains ``hold_gains`` (kp N·m/rad, kd N·m·s/rad) for a model driven by torque motors, which
    otherwise gets zero torque) for ``steps`` calls of ``step(ctrl, decimation)`` and record them."""
    b, num_envs = backend, backend.num_envs
    q, v = initial_state(b, perturb, qpos)
    b.set_state(np.arange(num_envs), np.tile(q, (num_envs, 1)), np.tile(v, (num_envs, 1)))
    if ctrl is None and hold_gains is not None and torque_driven(b):
        ctrl = motor_hold(b, hold_gains)
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
    if hold_gains is not None and torque_driven(b):
        b.set_pre_step_control(None)  # the hold's actuator model leaves with the recording
    return Trajectory(backend=name, time=t, dof_names=dof_names, torque_driven=torque_driven(b), **arrays)


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
            keyframe: str | None = None, hold_gains: tuple[float, float] | None = None) -> CompareResult:
    """Run ``scene`` on each backend and compare with ``backends[0]``.

    ``keyframe``: the initial keyframe, found through ``<include>`` as MuJoCo finds it (an unknown
    one is a ``ValueError`` naming those there are); default ``home`` when the model has it, else
    ``qpos0``. The default pose is held by the model's position servos; a model driven by torque
    motors is held by a PD law of ``hold_gains`` (kp, kd) on every engine, and without them its
    comparison has no verdict (the robot would collapse under zero torque) and says so.

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
    keys = keyframe_names(path)
    if keyframe is None:
        keyframe = "home" if "home" in keys else None
    elif keyframe not in keys:
        raise ValueError(f"--keyframe: {path} has no keyframe {keyframe!r} (looked through its <include> files); "
                         f"its keyframes: {keys}")
    if hold_gains is not None:
        hold_gains = _gains(hold_gains)
    temp: list[str] = []
    trajs: dict[str, Trajectory] = {}
    try:
        for b in backends:
            f = patched_scene(path, mjcf_options.get(b, {}), temp)
            trajs[b] = rollout(b, f, keyframe, num_envs, sim_dt, decimation, steps, perturb, options.get(b, {}),
                               hold_gains)
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
    if hold_gains is None and trajs[ref].torque_driven:
        why = ("the model is driven by torque motors and no hold gains were given: zero torque lets it collapse, "
               "so the engines are compared but not judged (pass --hold-gains KP,KD for a PD hold)")
        verdicts = {b: ("NO VERDICT", [why]) for b in verdicts}
    return CompareResult(scene=name, scene_file=path, reference=ref, num_envs=num_envs, sim_dt=sim_dt,
                         decimation=decimation, steps=steps, perturb=float(perturb), tier=tier, tolerances=tols,
                         trajectories=trajs, deviations=devs, verdicts=verdicts)


def _gains(gains) -> tuple[float, float]:
    try:
        kp, kd = (float(g) for g in gains)
    except (TypeError, ValueError):
        raise ValueError(f"--hold-gains: expected KP,KD (two numbers >= 0), got {gains!r}") from None
    if not (np.isfinite(kp) and np.isfinite(kd) and kp >= 0 and kd >= 0):
        raise ValueError(f"--hold-gains: expected KP,KD (two finite numbers >= 0), got {gains!r}")
    return kp, kd


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
