"""``unisim zoo``: a compatibility matrix of real robot models × backends.

Every model runs on every backend in its own process (a crash, a hang or a segfault is a result,
not the end of the run): keyframe 0 (or ``qpos0`` without keyframes), the keyframe's ``ctrl``
clipped to each actuator's ctrl range held for ``steps`` steps at the model's own timestep. A named
keyframe 0 is the scene's ``default_keyframe`` (the backend's own keyframe table); an unnamed one, which
the contract's tables may leave out, is read from the file and set with ``set_state`` (its quaternions
normalised as MuJoCo compiles them).
The MuJoCo backend with one env is the reference; every cell (MuJoCo included) runs
``num_envs`` envs and is compared with it, env by env. A cell is

- ``ok``: within its tier (figure: the quantity nearest its tolerance, max over the run);
- ``refused``: :class:`~unisim_core.contract.errors.UnsupportedCapabilityError` naming the MJCF feature;
- ``deviates``: it runs, past the tier (figure given), or its state diverged;
- ``error``: anything else (a crash, a timeout, an engine error, a layout unlike the reference's).

Tiers are ``unisim compare``'s (:data:`unisim_core.tools.compare.TIERS`): the reference engine is held
to ``tight``; any other engine to ``contact`` where the collision filter lets two geoms touch,
else ``tight``. No engine is imported here: backends come from the registry, in child processes.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np

from unisim_core.tools.compare import QUANTITIES, TIERS, Trajectory, deviation_series, verdict
from unisim_core.tools.output_file import write_figure
from unisim_core.tools.tables import table

__all__ = ["REFERENCE", "CLASSES", "ZooModel", "Cell", "discover", "robot_entry", "gymnasium_models",
           "classify", "cell_tier", "run_zoo", "summary", "format_matrix", "to_markdown", "plot_matrix",
           "load_runs", "merge_cells", "tree_commit", "documented_causes"]

REFERENCE = "mujoco"
CLASSES = ("ok", "refused", "deviates", "error")
_COLORS = {"ok": "#4caf50", "refused": "#9e9e9e", "deviates": "#ff9800", "error": "#e53935"}
_ARRAYS = ("time", "base_pos", "base_quat", "dof_pos", "dof_vel", "qpos")


# ---------------------------------------------------------------------------- discovery
@dataclass(frozen=True)
class ZooModel:
    """One model of the matrix: ``label`` (robot folder, ``gymnasium/ant``, ...) and its MJCF ``path``.

    ``root`` is the folder the matrix shows the model's files relative to (``""``: the folder holding
    the robot's folder, e.g. the corpus), shown as ``root_name`` (``"gymnasium"`` for gymnasium's
    assets; ``""``: not shown), so that no text of the matrix carries the machine's own paths."""

    label: str
    path: str
    root: str = ""
    root_name: str = ""

    def relative(self, text: str) -> str:
        """``text`` with every path under :attr:`root` written relative to it (``unitree_go1/scene.xml``,
        ``gymnasium/ant.xml``), whether spelled absolute, resolved or as given, and the temporary folder
        as ``<tmp>``."""
        root = self.root or os.path.dirname(os.path.dirname(self.path)) or "."
        shown = f"{self.root_name}/" if self.root_name else ""
        spellings = {os.path.realpath(tempfile.gettempdir()): "<tmp>/", tempfile.gettempdir(): "<tmp>/"}
        spellings |= {os.path.abspath(root): shown, os.path.realpath(root): shown, os.path.normpath(root): shown}
        for spelling in sorted(spellings, key=len, reverse=True):  # the longest first: /a/b/c before b/c
            if spelling not in (".", os.sep):
                text = re.sub(r"(?<![\w.\-/])" + re.escape(spelling.rstrip(os.sep) + os.sep),
                              lambda _, s=spellings[spelling]: s, text)
        return text


def _includes_of(xml: Path) -> set[str]:
    import xml.etree.ElementTree as ET

    try:
        return {e.get("file", "") for e in ET.parse(xml).getroot().iter("include")}
    except ET.ParseError:
        return set()


def robot_entry(folder: str | os.PathLike) -> str | None:
    """The Menagerie entry point of a robot folder: ``scene.xml``, else the first ``scene*.xml``,
    else the first MJCF file no other file of the folder includes; ``None`` without one."""
    folder = Path(folder)
    xmls = sorted(p for p in folder.glob("*.xml") if p.is_file())
    for cands in ([p for p in xmls if p.name == "scene.xml"], [p for p in xmls if p.name.startswith("scene")]):
        if cands:
            return str(cands[0])
    included = {os.path.basename(f) for p in xmls for f in _includes_of(p)}
    roots = [p for p in xmls if p.name not in included]
    return str(roots[0]) if roots else None


def gymnasium_models() -> list[ZooModel]:
    """gymnasium's installed MuJoCo assets (``gymnasium/envs/mujoco/assets/*.xml``); ``[]`` without gymnasium."""
    import importlib.util

    spec = importlib.util.find_spec("gymnasium")
    if spec is None or not spec.submodule_search_locations:
        return []
    assets = Path(list(spec.submodule_search_locations)[0]) / "envs" / "mujoco" / "assets"
    return [ZooModel(f"gymnasium/{p.stem}", str(p), str(assets), "gymnasium") for p in sorted(assets.glob("*.xml"))]


def discover(sources: Sequence[str]) -> list[ZooModel]:
    """Models named by ``sources``: an MJCF file; a robot folder (its :func:`robot_entry`); a folder of
    robot folders (each one's entry); or ``gymnasium`` (:func:`gymnasium_models`)."""
    out: list[ZooModel] = []
    for src in sources:
        if src == "gymnasium":
            found = gymnasium_models()
            if not found:
                raise FileNotFoundError("zoo: source 'gymnasium': gymnasium is not installed (pip install gymnasium)")
            out += found
            continue
        p = Path(src)
        if p.is_file():
            out.append(ZooModel(p.stem, str(p)))
        elif p.is_dir():
            entry = robot_entry(p) if any(p.glob("*.xml")) else None
            if entry:
                out.append(ZooModel(p.name, entry))
            else:
                out += [ZooModel(d.name, e) for d in sorted(p.iterdir()) if d.is_dir() and (e := robot_entry(d))]
        else:
            raise FileNotFoundError(f"zoo: DIR {src!r}: no such file or folder (or 'gymnasium')")
    if not out:
        raise FileNotFoundError(f"zoo: no MJCF model found in {list(sources)}")
    return out


# ---------------------------------------------------------------------------- one cell (child process)
@dataclass(frozen=True)
class _Key:
    """Keyframe 0 of a file as written: ``name`` (``None`` when unnamed), ``qpos``/``ctrl`` (``None`` where
    the key gives none); ``found`` is False for a file without keyframes."""

    found: bool = False
    name: str | None = None
    qpos: np.ndarray | None = None
    ctrl: np.ndarray | None = None


def _first_key(path: str) -> tuple[_Key, float]:
    """``(keyframe 0, timestep)``: the file's first ``<key>`` (includes expanded) and ``<option timestep>``."""
    from unisim_core.plugin.mjcf_lite import read_tree

    root = read_tree(path)
    key = next(root.iter("key"), None)
    dt = 0.002
    for opt in root.iter("option"):
        dt = float(opt.get("timestep", dt))
    if key is None:
        return _Key(), dt
    vec = lambda attr: np.array([float(x) for x in key.get(attr).split()]) if key.get(attr) else None  # noqa: E731
    return _Key(True, key.get("name") or None, vec("qpos"), vec("ctrl")), dt


def _unnamed_key_qpos(b, key: _Key) -> np.ndarray | None:
    """The start of an unnamed keyframe 0, which the contract's keyframe tables may leave out (MuJoCo's
    do): its ``qpos`` as MuJoCo compiles it (free/ball quaternions normalised, ``qpos0`` of the backend's
    model where the key gives no ``qpos``), laid out by the backend's own joint tables. ``None`` for a
    named keyframe (the scene's ``default_keyframe``, read from the backend's table) or none at all."""
    from unisim_core.plugin.mjcf_features import normalize_key_quats

    if not key.found or key.name is not None:
        return None
    info = b.model_info
    if key.qpos is None:
        return np.array(info.qpos0, dtype=np.float64)
    if key.qpos.shape != (b.nq,):
        raise ValueError(f"keyframe 0: qpos has {key.qpos.size} numbers, the model nq={b.nq}")
    return normalize_key_quats(key.qpos, info.joint_types, info.joint_qposadr)


def _layout(b) -> dict:
    info = b.model_info
    return {"nq": b.nq, "nv": b.nv, "nu": b.num_actuators, "sensor_names": list(info.sensor_names),
            "sensor_dims": [int(d) for d in info.sensor_dims], "joint_types": list(info.joint_types),
            "can_collide": _can_collide(info)}


def _can_collide(info) -> bool:
    """Whether MuJoCo's collision filter lets any two geoms of ``info`` touch (contype/conaffinity
    bitmasks, bodies welded together, parent-child pairs; ``<pair>``/``<exclude>`` are ignored)."""
    from unisim_core.plugin.mjcf_lite import collision_candidates

    has_joint = np.zeros(len(info.body_names), dtype=bool)
    has_joint[np.asarray(info.joint_body, dtype=np.int64)] = True
    return bool(collision_candidates(info.body_parent, has_joint, info.geom_body, info.geom_contype,
                                     info.geom_conaffinity))


def run_cell(backend: str, path: str, steps: int, num_envs: int) -> tuple[dict, dict[str, np.ndarray]]:
    """Run one cell in this process: ``(report, arrays)``; ``report["status"]`` is ``ran``, ``refused``,
    ``diverged`` or ``error`` (with ``type``/``message``/``feature``), arrays the recorded trajectory."""
    from unisim_core.contract.config import SceneCfg
    from unisim_core.contract.errors import DivergenceError, UnsupportedCapabilityError
    from unisim_core.contract.factory import create_backend
    from unisim_core.tools.compare import record_trajectory

    rep: dict = {"backend": backend, "path": path}
    try:
        key, dt = _first_key(path)
        rep.update(keyframe=key.name or ("0 (unnamed)" if key.found else None), sim_dt=dt)
        with create_backend(backend, SceneCfg(path, default_keyframe=key.name), num_envs, dt) as b:
            rep["layout"] = _layout(b)
            ctrl = np.zeros(b.num_actuators)
            if key.ctrl is not None:
                ctrl[:min(len(key.ctrl), len(ctrl))] = key.ctrl[:len(ctrl)]
            lo, hi = np.asarray(b.model_info.actuator_ctrl_range, dtype=np.float64).reshape(-1, 2).T
            ctrl = np.ascontiguousarray(np.broadcast_to(np.clip(ctrl, lo, hi), (num_envs, len(ctrl))),
                                        dtype=b.np_dtype)
            tr = record_trajectory(b, backend, steps, ctrl=ctrl, qpos=_unnamed_key_qpos(b, key))
        rep["status"] = "ran"
        return rep, {k: getattr(tr, k) for k in _ARRAYS}
    except UnsupportedCapabilityError as exc:
        rep.update(status="refused", feature=str(exc.capability), type=type(exc).__name__, message=str(exc))
    except DivergenceError as exc:
        rep.update(status="diverged", type=type(exc).__name__, message=str(exc))
    except Exception as exc:  # noqa: BLE001 - every other failure is the cell's result
        rep.update(status="error", type=f"{type(exc).__module__}.{type(exc).__qualname__}", message=str(exc))
    return rep, {}


def _child_main(argv: Sequence[str]) -> int:
    backend, path, out, steps, num_envs = argv[0], argv[1], argv[2], int(argv[3]), int(argv[4])
    rep, arrays = run_cell(backend, path, steps, num_envs)
    if arrays:
        np.savez(out + ".npz", **arrays)
    with open(out + ".json", "w") as f:
        json.dump(rep, f)
    return 0


def spawn_cell(backend: str, path: str, steps: int, num_envs: int, timeout: float, workdir: str
               ) -> tuple[dict, dict[str, np.ndarray]]:
    """:func:`run_cell` in a child process bounded by ``timeout`` s; a timeout, a signal or an exit
    without a report becomes ``status="error"`` with what the child printed last."""
    out = os.path.join(workdir, f"{backend}-{threading.get_ident()}-{time.perf_counter_ns()}")  # one per --jobs thread
    cmd = [sys.executable, "-m", "unisim_core.tools.zoo", backend, path, out, str(steps), str(num_envs)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        text, _ = proc.communicate(timeout=timeout)
        why = None if proc.returncode == 0 else _exit_reason(proc.returncode)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        text, _ = proc.communicate()
        why = f"timeout: no result after {timeout:g} s (killed)"
    wall = time.perf_counter() - t0
    tail = text.decode(errors="replace").strip().splitlines()[-3:]
    if why is None and os.path.isfile(out + ".json"):
        with open(out + ".json") as f:
            rep = json.load(f)
        arrays = dict(np.load(out + ".npz")) if os.path.isfile(out + ".npz") else {}
    else:
        rep, arrays = {"status": "error", "type": "process", "message": why or "the child wrote no report"}, {}
        if tail:
            rep["message"] += " — last output: " + " | ".join(tail)
    rep["wall_s"] = round(wall, 2)
    return rep, arrays


def _exit_reason(code: int) -> str:
    if code < 0:
        try:
            return f"crashed: killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"crashed: killed by signal {-code}"
    return f"crashed: exit status {code}"


# ---------------------------------------------------------------------------- classification (pure)
@functools.cache
def documented_causes() -> dict[tuple[str, str], str]:
    """``{(backend, model label): cause}`` of deviating cells, as each installed plugin documents its own
    engine's through the ``unisim_zoo_causes`` hook (:mod:`unisim_core.contract.hooks`); no engine is imported.
    A deviating cell without one is shown as ``not documented``."""
    from unisim_core.contract.registry import list_backends, plugin_hook

    out: dict[tuple[str, str], str] = {}
    for record in list_backends():
        causes = plugin_hook(record.name, "unisim_zoo_causes")
        if isinstance(causes, dict):
            out.update({(record.name, str(model)): str(cause) for model, cause in causes.items()})
    return out


@dataclass
class Cell:
    """One model × backend result. ``cls`` one of :data:`CLASSES`; ``figure`` the short text shown in
    the matrix; ``detail`` the full message; ``max_deviation`` per quantity of :data:`QUANTITIES`."""

    model: str
    backend: str
    cls: str
    figure: str
    detail: str = ""
    tier: str | None = None
    max_deviation: dict = field(default_factory=dict)
    wall_s: float | None = None
    ran_at: str | None = None
    commit: str | None = None
    cause: str | None = None


def cell_tier(backend: str, can_collide: bool, reference: str = REFERENCE) -> str:
    """The tier a cell is judged by: ``tight`` for the reference engine and contact-free models,
    ``contact`` otherwise (names of :data:`unisim_core.tools.compare.TIERS`)."""
    return "tight" if backend == reference or not can_collide else "contact"


def _traj(name: str, arrays: dict[str, np.ndarray], num_envs: int | None = None) -> Trajectory:
    a = {k: np.asarray(arrays[k], dtype=np.float64) for k in _ARRAYS}
    if num_envs is not None:  # the one-env reference against every env of a cell
        a = {k: (v if k == "time" else np.repeat(v, num_envs, axis=1)) for k, v in a.items()}
    return Trajectory(backend=name, **a)


def _layout_diff(ref: dict, got: dict) -> list[str]:
    return [f"{k} {got.get(k)!r} (reference {ref.get(k)!r})" for k in ("nq", "nv", "nu", "sensor_names", "sensor_dims")
            if got.get(k) != ref.get(k)]


def classify(model: str, backend: str, rep: dict, arrays: dict, ref: dict | None, ref_arrays: dict | None,
             reference: str = REFERENCE) -> Cell:
    """The cell of ``backend``'s report ``rep`` (and trajectory ``arrays``) against the reference's."""
    wall = rep.get("wall_s")
    status = rep.get("status")
    if status == "refused":
        return Cell(model, backend, "refused", rep.get("feature", "?"), rep.get("message", ""), wall_s=wall)
    if status == "diverged":
        return Cell(model, backend, "deviates", "diverged", rep.get("message", ""), wall_s=wall,
                    cause=documented_causes().get((backend, model)))
    if status != "ran":
        msg = f"{rep.get('type', 'error')}: {rep.get('message', '')}"
        return Cell(model, backend, "error", rep.get("type", "error").rsplit(".", 1)[-1], msg, wall_s=wall)
    if ref is None or ref.get("status") != "ran":
        why = "no reference" if ref is None else f"reference {reference} {ref.get('status')}: {ref.get('message', '')}"
        return Cell(model, backend, "error", "no reference", why, wall_s=wall)
    diff = _layout_diff(ref["layout"], rep["layout"])
    if diff:
        return Cell(model, backend, "error", "layout", "layout differs from the file's: " + "; ".join(diff),
                    wall_s=wall)
    tier = cell_tier(backend, bool(ref["layout"].get("can_collide")), reference)
    got = _traj(backend, arrays)
    try:
        series = deviation_series(_traj(reference, ref_arrays, got.qpos.shape[1]), got)
    except ValueError as exc:
        return Cell(model, backend, "error", "layout", f"recorded shapes differ: {exc}", tier, wall_s=wall)
    dev = {k: float(np.max(s)) for k, s in series.items()}
    tols = TIERS[tier]
    status, reasons = verdict(dev, tols)
    worst = max(tols, key=lambda k: dev[k] / tols[k] if math.isfinite(dev[k]) else math.inf)
    figure = f"{worst} {dev[worst]:.1e}"
    cls = "ok" if status == "PASS" else "deviates"
    detail = "; ".join(reasons) if reasons else f"within tier {tier!r} {tols}"
    return Cell(model, backend, cls, figure, detail, tier, dev, wall,
                cause=documented_causes().get((backend, model)) if cls == "deviates" else None)


# ---------------------------------------------------------------------------- the run
def run_zoo(models: Sequence[ZooModel], backends: Sequence[str], *, steps: int = 200, num_envs: int = 2,
            timeout: float = 600.0, reference: str = REFERENCE, jobs: int = 1,
            on_cell: Callable[[int, int, Cell], None] | None = None) -> list[Cell]:
    """Every model on every backend (and the one-env reference run per model), one process each.

    ``jobs`` models run at once (each one's reference, then its backends in order); ``on_cell`` is
    called as cells finish, one call at a time; the cells come back in model, then backend order."""
    if steps < 1 or num_envs < 1 or not timeout > 0:
        raise ValueError(f"zoo: expected steps >= 1, num_envs >= 1, timeout > 0; got {steps}, {num_envs}, {timeout}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"--jobs: expected a positive integer, got {jobs!r}")
    if not backends or len(set(backends)) != len(backends):
        raise ValueError(f"--backends: expected distinct backend names, got {list(backends)}")
    total = len(models) * len(backends)
    commit = tree_commit()
    lock = threading.Lock()
    finished: list[Cell] = []

    def one_model(m: ZooModel, work: str) -> list[Cell]:
        ref, ref_arrays = spawn_cell(reference, m.path, steps, 1, timeout, work)
        cells = []
        for b in backends:
            rep, arrays = spawn_cell(b, m.path, steps, num_envs, timeout, work)
            cell = classify(m.label, b, rep, arrays, ref, ref_arrays, reference)
            cell.detail, cell.ran_at, cell.commit = m.relative(cell.detail), _utc_now(), commit
            cells.append(cell)
            with lock:
                finished.append(cell)
                if on_cell:
                    on_cell(len(finished), total, cell)
        return cells

    with tempfile.TemporaryDirectory(prefix="unisim-zoo-") as work:
        if jobs == 1:
            return [c for m in models for c in one_model(m, work)]
        with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="unisim-zoo") as pool:
            futures = [pool.submit(one_model, m, work) for m in models]
            return [c for f in futures for c in f.result()]


def _utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def tree_commit() -> str | None:
    """``git describe --always --dirty`` of the checkout this ``unisim_core`` is imported from (``None``
    outside a git checkout): the code a cell ran on."""
    try:
        out = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=os.path.dirname(__file__),
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


# ---------------------------------------------------------------------------- merging runs
def load_runs(paths: Sequence[str]) -> tuple[list[list[Cell]], list[dict]]:
    """The cells and the run description (``command``, ``steps``, ``complete``, ...) of each ``--json`` file
    in ``paths``; a file that is not a zoo JSON raises ``ValueError`` naming it."""
    names = {f.name for f in fields(Cell)}
    runs, metas = [], []
    for p in paths:
        with open(p) as f:
            data = json.load(f)
        if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
            raise ValueError(f"--from-json: expected a `unisim zoo --json` file with a 'cells' list, got {p!r}")
        cells = [Cell(**{k: v for k, v in c.items() if k in names}) for c in data["cells"]]
        for c in cells:  # causes are the table's, not the run's: a cause documented since then is shown
            c.cause = documented_causes().get((c.backend, c.model)) if c.cls == "deviates" else None
        runs.append(cells)
        metas.append({k: data.get(k) for k in ("command", "steps", "num_envs", "timeout_s", "complete")}
                     | {"file": os.path.basename(p), "cells": len(cells)})
    return runs, metas


def merge_cells(*runs: Sequence[Cell]) -> list[Cell]:
    """One matrix from several runs: for each (model, backend) the cell of the last run holding it;
    models and backends keep their first-seen order."""
    at: dict[tuple[str, str], Cell] = {}
    for run in runs:
        for c in run:
            at[(c.model, c.backend)] = c
    models = list(dict.fromkeys(c.model for run in runs for c in run))
    backends = list(dict.fromkeys(c.backend for run in runs for c in run))
    return [at[(m, b)] for m in models for b in backends if (m, b) in at]


# ---------------------------------------------------------------------------- reports
def summary(cells: Sequence[Cell]) -> dict[str, dict[str, int]]:
    """``{backend: {class: count}}`` over ``cells``, backends in first-seen order."""
    out: dict[str, dict[str, int]] = {}
    for c in cells:
        out.setdefault(c.backend, dict.fromkeys(CLASSES, 0))[c.cls] += 1
    return out


def _grid(cells: Sequence[Cell]) -> tuple[list[str], list[str], dict[tuple[str, str], Cell]]:
    models = list(dict.fromkeys(c.model for c in cells))
    backends = list(dict.fromkeys(c.backend for c in cells))
    return models, backends, {(c.model, c.backend): c for c in cells}


def _text(c: Cell | None) -> str:
    return "-" if c is None else f"{c.cls} {c.figure}"


def format_matrix(cells: Sequence[Cell]) -> str:
    """The matrix (models × backends) and the per-backend summary as text tables."""
    models, backends, at = _grid(cells)
    rows = [[m] + [_text(at.get((m, b))) for b in backends] for m in models]
    s = summary(cells)
    return (table(rows, ["model"] + backends) + "\n\n"
            + table([[b] + [f"{s[b][k]}" for k in CLASSES] for b in backends], ["backend", *CLASSES]))


def to_markdown(cells: Sequence[Cell], meta: dict) -> str:
    """A markdown report: how it was run (``meta``), the summary, the matrix and every non-ok cell's detail."""
    models, backends, at = _grid(cells)
    s = summary(cells)
    md = lambda x: str(x).replace("|", "\\|").replace("\n", " ")
    lines = ["# Real robots on every engine (`unisim zoo`)", "",
             "Every model starts from keyframe 0 (or `qpos0`), holds keyframe 0's `ctrl` clipped to the ctrl range, "
             "and runs at its own timestep on each backend in its own process; the MuJoCo backend with one env is "
             "the reference. A cell is `ok` (within its tier: the figure is the quantity nearest its tolerance), "
             "`refused` (the MJCF feature the backend names), `deviates` (runs, past the tier, figure given) or "
             "`error` (a crash, timeout, engine error or a layout unlike the file's: a defect). Tiers are "
             "`unisim compare`'s: MuJoCo `tight` (qpos 1e-4), other engines `contact` (base 5 mm, joints 1e-2 rad) "
             "where geoms can collide, else `tight`. See docs/cli.md (`unisim zoo`).", "",
             f"Refresh (this file is the command's `--markdown` output): `{meta.get('command', 'unisim zoo')}` "
             f"({meta.get('steps')} steps, {meta.get('num_envs')} envs per cell, reference "
             f"{meta.get('reference', REFERENCE)} with 1 env).", "",
             "A deviating cell shows its cause as the engine's plugin documents it (hook `unisim_zoo_causes`, "
             "`unisim_<engine>/_zoo_causes.py`); after a cause is documented, `unisim zoo --from-json F.json "
             "--json F.json --markdown F.md` rewrites this page from the same cells. To refresh one column, run "
             "`unisim zoo DIR... --backends X --json new.json` and merge it with `unisim zoo --from-json F.json "
             "new.json ...` (a later run's cell replaces the earlier one). Paths are relative to the models' root.",
             "",
             ]
    if meta.get("merged"):
        lines += ["One invocation with every backend (`unisim zoo DIR... --backends mujoco,motrix,...`) "
                  "refreshes every column; where that takes longer than one sitting (see the cells' wall time per "
                  "backend), runs of subsets are merged with `--from-json`, each cell stamped with when (UTC) and on "
                  "which commit it ran. This matrix merges these runs (a later run's cell replaces an earlier one of "
                  "the same model and backend):", ""]
        lines += [f"- `{r.get('command')}` ({r.get('cells')} cells, "
                  f"{'complete' if r.get('complete') else 'interrupted'}, `{r.get('file')}`)" for r in meta["merged"]]
        lines += [""]
    lines += ["| backend | " + " | ".join(CLASSES) + " | cells' wall time | ran (UTC) | commit |",
              "|---" * (len(CLASSES) + 4) + "|"]
    lines += [f"| {b} | " + " | ".join(str(s[b][k]) for k in CLASSES) + f" | {_wall(cells, b)} | {_span(cells, b)} |"
              for b in backends]
    lines += ["", "| model | " + " | ".join(backends) + " |", "|---" * (len(backends) + 1) + "|"]
    lines += [f"| {m} | " + " | ".join(md(_text(at.get((m, b)))) for b in backends) + " |" for m in models]
    lines += ["", "Details of every cell that is not `ok` (a deviating cell with its cause as the engine's plugin "
              "documents it, hook `unisim_zoo_causes`):", ""]
    lines += [f"- **{c.model} × {c.backend}** ({c.cls}): {md(c.detail)[:600]}"
              + (f" **Cause:** {md(c.cause or 'not documented')}." if c.cls == "deviates" else "")
              for c in cells if c.cls != "ok"]
    return "\n".join(lines) + "\n"


def _wall(cells: Sequence[Cell], backend: str) -> str:
    """Total and largest wall time of ``backend``'s cell processes (the reference runs not counted)."""
    walls = [c.wall_s for c in cells if c.backend == backend and c.wall_s is not None]
    return f"{sum(walls) / 60:.0f} min (max {max(walls):.0f} s)" if walls else "-"


def _span(cells: Sequence[Cell], backend: str) -> str:
    """``first – last`` ran_at of ``backend``'s cells and the commits they ran on (``|`` separated)."""
    mine = [c for c in cells if c.backend == backend]
    times = sorted(c.ran_at for c in mine if c.ran_at)
    commits = list(dict.fromkeys(c.commit for c in mine if c.commit))
    when = f"{times[0][:16]} – {times[-1][:16]}".replace("T", " ") if times else "-"
    if len(times) < len(mine):  # cells of runs made before cells were stamped
        when += f" ({len(mine) - len(times)} of {len(mine)} cells unstamped)"
    return when + " | " + (", ".join(f"`{x}`" for x in commits) or "-")


def to_json(cells: Sequence[Cell], meta: dict) -> dict:
    return {**meta, "classes": list(CLASSES), "tiers": TIERS, "quantities": {k: v[0] for k, v in QUANTITIES.items()},
            "summary": summary(cells), "cells": [asdict(c) for c in cells]}


def plot_matrix(cells: Sequence[Cell], path: str) -> str:
    """A PNG of the matrix, one square per cell coloured by class. Needs matplotlib (``unisim-contract[plot]``)."""
    from unisim_core.contract.errors import OptionalDependencyError

    try:
        import matplotlib
    except ImportError:
        raise OptionalDependencyError("unisim zoo --plot needs matplotlib: "
                                      "pip install 'unisim-contract[plot]'") from None
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    models, backends, at = _grid(cells)
    grid = np.array([[CLASSES.index(at[(m, b)].cls) if (m, b) in at else np.nan for b in backends] for m in models])
    fig, ax = plt.subplots(figsize=(1.3 * len(backends) + 3, 0.28 * len(models) + 1.6))
    ax.imshow(grid, cmap=ListedColormap([_COLORS[k] for k in CLASSES]), vmin=-0.5, vmax=len(CLASSES) - 0.5,
              aspect="auto")
    ax.set_xticks(range(len(backends)), backends, fontsize=8)
    ax.set_yticks(range(len(models)), models, fontsize=7)
    ax.legend(handles=[Patch(color=_COLORS[k], label=k) for k in CLASSES], loc="upper left",
              bbox_to_anchor=(1.01, 1.0), fontsize=8)
    ax.set_title("unisim zoo", fontsize=10)
    fig.tight_layout()
    write_figure("--plot", path, fig)
    return path


if __name__ == "__main__":  # the child process of spawn_cell
    sys.exit(_child_main(sys.argv[1:]))
