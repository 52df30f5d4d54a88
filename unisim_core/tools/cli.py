"""The ``unisim`` command line: list, inspect, run, check, compare and benchmark backends, and
the compatibility matrix of real models (``unisim zoo``)."""

from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import subprocess
import sys
import time
from collections.abc import Sequence

import numpy as np

from unisim_core.contract import factory, registry
from unisim_core.contract.capabilities import CONTRACT_VERSION
from unisim_core.contract.config import SceneCfg
from unisim_core.contract.errors import OptionalDependencyError, UniSimError
from unisim_core.contract.options import describe_options
from unisim_core.scenes import scene_path
from unisim_core.tools.compare import hold_position_ctrl
from unisim_core.tools.output_file import check_output_file, write_output_file
from unisim_core.tools.tables import progress
from unisim_core.tools.tables import table as _table


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


def capability_matrix(records: Sequence[registry.BackendRecord]) -> tuple[list[list[str]], list[str]]:
    """``(rows, header)``: one row per ``Capability`` (declaration order), one column per backend whose
    spec the registry has (``"yes"`` declared, ``"-"`` not), and a closing ``declared`` row
    (``n/N``). Read from ``BackendSpec.capabilities``: no engine is imported."""
    from unisim_core.contract.capabilities import Capability

    specs = [r for r in records if r.spec is not None]
    rows = [[cap.value] + ["yes" if cap in r.spec.capabilities else "-" for r in specs] for cap in Capability]
    rows.append(["declared"] + [f"{len(r.spec.capabilities & set(Capability))}/{len(Capability)}" for r in specs])
    return rows, ["capability"] + [r.name for r in specs]


def cmd_capabilities(args: argparse.Namespace) -> int:
    records = registry.list_backends()
    if args.backends:
        wanted = _csv(args.backends)
        known = {r.name for r in records}
        unknown = [n for n in wanted if n not in known]
        if unknown:
            raise registry.BackendNotFoundError(f"--backends: no backend named {unknown}; known: {sorted(known)}")
        records = [r for r in records if r.name in wanted]
    rows, header = capability_matrix(records)
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for row in rows:
            print("| " + " | ".join(f"`{c}`" if i == 0 and c != "declared" else c for i, c in enumerate(row)) + " |")
    else:
        print(_table(rows, header))
    missing = [r.name for r in records if r.spec is None]
    if missing:
        print(f"(no spec, left out: {', '.join(missing)}; see `unisim backends`)", file=sys.stderr)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    if args.video:  # fail before the run, not after it
        _require("imageio", "unisim run --video", "imageio[ffmpeg]")
    scene = SceneCfg(args.scene or scene_path("quadruped"), default_keyframe=args.keyframe)
    options = _parse_options(args.option)
    t0 = time.perf_counter()
    backend = factory.create_backend(args.backend, scene, args.num_envs, args.sim_dt, **options)
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
                progress(k, args.steps, start)
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
            from unisim_core.contract._playback import write_video

            write_video(args.video, frames, fps=30)
            rows.append(("video", f"{args.video} ({len(frames)} frames)"))
    print(_table(rows, ("quantity", "value")))
    return 1 if nonfinite else 0


def _require(module: str, feature: str, install: str) -> None:
    """Raise ``OptionalDependencyError`` naming ``install`` when ``module`` cannot be imported."""
    if importlib.util.find_spec(module) is None:
        raise OptionalDependencyError(f"{feature} needs {module}, which is not installed: pip install '{install}'")


def cmd_check(args: argparse.Namespace) -> int:
    _require("unisim_conformance", "unisim check (the conformance kit)", "unisim-conformance")
    cmd = [sys.executable, "-m", "pytest", "--pyargs", "unisim_conformance", f"--unisim-backend={args.name}"]
    cmd += [f"--unisim-option={o}" for o in args.option or ()]
    if args.reference:
        cmd.append(f"--unisim-reference={args.reference}")
    cmd += list(args.pytest_args)
    if any(a.startswith("--unisim-report") for a in cmd):
        return subprocess.call(cmd)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.json")
        rc = subprocess.call([*cmd, f"--unisim-report={report}"])
        if os.path.isfile(report):
            print(_failure_rules(report))
    return rc


def _failure_rules(report_path: str) -> str:
    """Each failed kit check of a ``--unisim-report`` with whether its rule is new since the kit rules the
    backend declares (``KIT_RULES``) or a regression of a rule it was written against."""
    import json

    with open(report_path, encoding="utf-8") as f:
        data = json.load(f)
    declared = int(data.get("backend_kit_rules", 1))
    source = f"KIT_RULES = {declared}" if data.get("backend_declares_kit_rules") else "no KIT_RULES (read as 1)"
    failed = [c for c in data.get("checks", []) if c["outcome"] == "failed"]
    head = f"unisim check: kit rules {data.get('kit_rules', '?')}; backend declares {source}; {len(failed)} failed"
    if not failed:
        return head
    rows = [(c["check"], str(c.get("rules", 1)),
             f"new rule (since {declared}): see the kit CHANGELOG 'Kit rules {c.get('rules')}'"
             if c.get("rules", 1) > declared else "regression (a rule the backend was written against)")
            for c in failed]
    new = sum(1 for c in failed if c.get("rules", 1) > declared)
    table = _table(rows, ("check", "rules", "verdict"))
    return f"{head} ({new} new rule(s), {len(failed) - new} regression(s))\n{table}"


def _csv(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def _tolerances(items: Sequence[str] | None) -> dict[str, float]:
    out = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        try:
            out[key] = float(value)
        except ValueError:
            sep = ""
        if not sep or not key:
            raise ValueError(f"--tolerance: expected QUANTITY=NUMBER, got {item!r}")
    return out


def _check_outputs(args: argparse.Namespace, *flags: str) -> None:
    """Refuse an output file given by ``--FLAG`` before the run, not after it (``output_file``)."""
    for flag in flags:
        if getattr(args, flag, None):
            check_output_file(f"--{flag}", getattr(args, flag))


def cmd_compare(args: argparse.Namespace) -> int:
    from unisim_core.tools import compare as C
    from unisim_core.tools.compare_report import format_table, plot_trajectories

    if args.plot:  # fail before the comparison runs, not after it
        _require("matplotlib", "unisim compare --plot", "unisim-contract[plot]")
    _check_outputs(args, "plot", "json")
    backends = _csv(args.backends)
    res = C.compare(
        backends, args.scene, steps=args.steps, num_envs=args.num_envs, sim_dt=args.sim_dt,
        decimation=args.decimation, perturb=args.perturb,
        options=C.split_backend_items(args.option, backends, "--option"),
        mjcf_options=C.split_backend_items(args.scene_option, backends, "--scene-option"),
        tier=args.tier, tolerances=_tolerances(args.tolerance), keyframe=args.keyframe,
        hold_gains=None if args.hold_gains is None else _csv(args.hold_gains))
    print(format_table(res))
    if args.plot:
        plot_trajectories(res, args.plot)
        print(f"plot: {args.plot}")
    if args.json:
        import json

        write_output_file("--json", args.json, lambda f: json.dump(res.to_json(), f, indent=1))
        print(f"json: {args.json}")
    return 1 if res.verdict == "FAIL" else 0


def _sim2sim_runner():
    """The episode runner a task layer registers in the ``unisim.sim2sim`` entry-point group (unisim-gym's
    ``evaluate_sim2sim``): the core imports no task layer."""
    from importlib.metadata import entry_points

    found = sorted(entry_points(group="unisim.sim2sim"), key=lambda ep: ep.name)
    if not found:
        raise OptionalDependencyError("unisim eval runs a task's episodes through a task layer, and none is installed: "
                                      "pip install 'unisim-gym[rslrl]' (it registers the 'unisim.sim2sim' entry point)")
    return found[0].load()


def cmd_eval(args: argparse.Namespace) -> int:
    from unisim_core.tools.compare import split_backend_items
    from unisim_core.tools.policy_eval import format_report, installed_engines, plot_curves, side_by_side_video

    evaluate_sim2sim = _sim2sim_runner()
    if args.plot:  # fail before the episodes run, not after them
        _require("matplotlib", "unisim eval --plot", "unisim-contract[plot]")
    _check_outputs(args, "plot", "json", "video")

    backends = _csv(args.backends) if args.backends else installed_engines()
    reference = args.reference or ("mujoco" if "mujoco" in backends else (backends or [None])[0])
    print(f"unisim eval: {args.policy} with task {args.task} on {', '.join(backends)} (reference {reference}): "
          f"{args.num_envs} episodes of at most {args.episode_s:g} s each, seed {args.seed}", file=sys.stderr,
          flush=True)
    report = evaluate_sim2sim(
        args.policy, backends, args.task, reference=reference, num_envs=args.num_envs, episode_s=args.episode_s,
        seed=args.seed, tolerances=_tolerances(args.tolerance),
        backend_options=split_backend_items(args.option, backends, "--option"), record_qpos=bool(args.video),
        on_engine=lambda name, run: print(f"  {name}: {'error' if run.error else 'done'} ({run.wall_s:.1f} s)",
                                          file=sys.stderr, flush=True))
    print(format_report(report))
    if args.plot:
        plot_curves(report, args.plot)
        print(f"plot: {args.plot}")
    if args.video:
        frames = side_by_side_video(report.runs, args.video)
        print(f"video: {args.video} ({frames} frames)")
    if args.json:
        import json

        doc = {**report.to_json(), "command": "unisim eval " + " ".join(args.argv)}
        write_output_file("--json", args.json, lambda f: json.dump(doc, f, indent=1))
        print(f"json: {args.json}")
    return 0 if report.passed else 1


def cmd_bench(args: argparse.Namespace) -> int:
    from unisim_core.scenes import resolve_scene
    from unisim_core.tools import bench as B
    from unisim_core.tools.compare import split_backend_items

    backends = _csv(args.backends) if args.backends else B.default_backends()
    if not backends:
        raise ValueError("--backends: no installed backend to benchmark (see `unisim backends`)")
    num_envs = [int(x) for x in _csv(args.num_envs)]
    if not num_envs or min(num_envs) < 1:
        raise ValueError(f"--num-envs: expected positive integers, got {args.num_envs!r}")
    if args.rounds < 1:
        raise ValueError(f"--rounds: expected a positive integer, got {args.rounds}")
    scene, _ = resolve_scene(args.scene)
    _check_outputs(args, "json")
    options = split_backend_items(args.option, backends, "--option")
    print(f"scene {scene}, dt={args.sim_dt}, nsteps={args.decimation} per call, {args.rounds} alternating rounds, "
          f"~{args.seconds:g} s per cell; workload: {B.WORKLOAD}; env-steps/s = physics steps x envs per second; "
          "ratio = raw time / contract time (median of the rounds' ratios); of limit = (one env's single-thread "
          "step cost x N / threads) / contract time; first/warm start = create_backend -> first step done, for "
          "the first/second backend of that N in this process (warm: the engine loaded and its kernels cached)",
          flush=True)
    rows = B.run_bench(backends, num_envs, scene, sim_dt=args.sim_dt, nsteps=args.decimation,
                       budget_s=args.seconds, options=options, steps=args.steps, rounds=args.rounds,
                       on_row=lambda r: print(f"  done {r['backend']} N={r.get('num_envs', '-')}", file=sys.stderr,
                                              flush=True))
    print(B.format_rows(rows))
    if args.json:
        import json

        doc = {"scene": scene, "sim_dt": args.sim_dt, "nsteps": args.decimation, "cpus": B.cpu_count(),
               "rounds": args.rounds, "workload": B.WORKLOAD, "load_avg": os.getloadavg(), "rows": rows}
        write_output_file("--json", args.json, lambda f: json.dump(doc, f, indent=1))
        print(f"json: {args.json}")
    return 1 if any("error" in r for r in rows) else 0


def cmd_zoo(args: argparse.Namespace) -> int:
    from unisim_core.tools import zoo as Z

    if args.plot:  # fail before the matrix runs, not after it
        _require("matplotlib", "unisim zoo --plot", "unisim-contract[plot]")
    _check_outputs(args, "json", "markdown", "plot")
    if not args.dirs and not args.from_json:
        raise ValueError("zoo: expected DIR... to run, or --from-json F... to merge earlier runs, got neither")
    prior, runs = Z.load_runs(args.from_json or [])
    backends = _csv(args.backends)
    models = Z.discover(args.dirs) if args.dirs else []
    shapes = {(r["steps"], r["num_envs"]) for r in runs} | ({(args.steps, args.num_envs)} if models else set())
    if len(shapes) > 1:
        raise ValueError(f"--from-json: expected runs of one --steps/--num-envs to merge, got {sorted(shapes)}")
    args.steps, args.num_envs = shapes.pop()
    tty = sys.stderr.isatty()
    start = time.perf_counter()
    meta = {"command": "unisim zoo " + " ".join(args.argv), "steps": args.steps, "num_envs": args.num_envs,
            "reference": Z.REFERENCE, "timeout_s": args.timeout,
            "models": {m.label: m.relative(m.path) for m in models},
            "merged": runs}
    done_cells: list = []

    def write(cells, final: bool) -> None:  # after every cell, so that an interrupted run leaves its results
        cells = Z.merge_cells(*prior, cells)
        if args.json:
            import json

            doc = {**Z.to_json(cells, meta), "complete": final}
            write_output_file("--json", args.json, lambda f: json.dump(doc, f, indent=1))
        if args.markdown:
            write_output_file("--markdown", args.markdown, lambda f: f.write(Z.to_markdown(cells, meta)))

    def shown(done: int, total: int, cell) -> None:
        done_cells.append(cell)
        write(done_cells, False)
        label = f"{cell.model} x {cell.backend}: {cell.cls} {cell.figure} ({cell.wall_s} s)"
        if tty:
            progress(done, total, start, "cells", label)
        else:
            print(f"[{done}/{total}] {label}", file=sys.stderr, flush=True)

    cells = []
    if models:
        print(f"zoo: {len(models)} models x {len(backends)} backends, {args.steps} steps, {args.num_envs} envs per "
              f"cell, reference {Z.REFERENCE} (1 env), timeout {args.timeout:g} s per process", file=sys.stderr,
              flush=True)
        cells = Z.run_zoo(models, backends, steps=args.steps, num_envs=args.num_envs, timeout=args.timeout,
                          jobs=args.jobs, on_cell=shown)
    write(cells, True)
    cells = Z.merge_cells(*prior, cells)
    print(Z.format_matrix(cells))
    for flag, path in (("json", args.json), ("markdown", args.markdown)):
        if path:
            print(f"{flag}: {path}")
    if args.plot:
        Z.plot_matrix(cells, args.plot)
        print(f"plot: {args.plot}")
    return 1 if any(c.cls == "error" for c in cells) else 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="unisim", description="UniSim: one contract for robot physics engines.")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("backends", help="list installed backends and their status").set_defaults(fn=cmd_backends)
    info = sub.add_parser("info", help="capabilities, options and runtime of one backend")
    info.add_argument("name")
    info.set_defaults(fn=cmd_info)
    caps = sub.add_parser("capabilities", help="the backend x capability matrix (from the registry, no engine "
                                                "imported)")
    caps.add_argument("--backends", default=None, help="comma-separated backends (default: every one listed)")
    caps.add_argument("--markdown", action="store_true", help="print a Markdown table")
    caps.set_defaults(fn=cmd_capabilities)
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
    check = sub.add_parser(
        "check", help="run the conformance kit against a backend", allow_abbrev=False,
        usage="unisim check [-h] NAME [--option KEY=VALUE] [--reference REFERENCE] [PYTEST_ARGS ...]",
        description="Run the conformance kit against backend NAME. --option and --reference go before or "
                    "after NAME; every other argument (e.g. -m conventions -q) is passed on to pytest, "
                    "as is everything after `--`.")
    check.add_argument("name")
    check.add_argument("--option", action="append", metavar="KEY=VALUE",
                       help="backend option KEY=VALUE (repeatable)")
    check.add_argument("--reference", default=None, help="reference backend for parity checks")
    check.set_defaults(fn=cmd_check, pytest_args=[])
    cmp = sub.add_parser(
        "compare", help="run one scene on several backends and compare their trajectories",
        description="Run the same scene, initial state and hold-position control on each backend and "
                    "report the max deviation of each quantity against the first backend (the reference), "
                    "with a verdict against the scene's tolerance tier.")
    cmp.add_argument("--backends", default="mujoco,motrix", help="comma-separated, reference first "
                     "(default: mujoco,motrix)")
    cmp.add_argument("--scene", default="quadruped", help="MJCF path, shipped scene (quadruped) or "
                     "conformance scene (pendulum, double_pendulum, free_body, ...); default: quadruped")
    cmp.add_argument("--steps", type=int, default=None, help="control steps (default: 1 s of simulated time)")
    cmp.add_argument("--num-envs", type=int, default=1)
    cmp.add_argument("--sim-dt", type=float, default=None, help="physics step (default: the scene's timestep)")
    cmp.add_argument("--decimation", type=int, default=1, help="physics substeps per control step")
    cmp.add_argument("--keyframe", default=None, help="initial keyframe, found through <include> (default: 'home' "
                     "if the model has it, else qpos0; a name the model lacks is an error listing its keyframes)")
    cmp.add_argument("--hold-gains", default=None, metavar="KP,KD",
                     help="PD gains (N m/rad, N m s/rad) holding the default pose of a model driven by torque motors, "
                          "the same law on every engine (without them such a model gets no verdict)")
    cmp.add_argument("--perturb", type=float, default=None,
                     help="deterministic initial offset: joint i += EPS*(1, -0.6, ...), free joints rotated "
                          "0.8*EPS rad about x with qvel EPS*(1,0,4,0.6,2,0.4) (default: 0.5 for pendulum, "
                          "double_pendulum, free_body; 0 elsewhere)")
    cmp.add_argument("--option", action="append", metavar="[BACKEND.]KEY=VALUE",
                     help="backend option, e.g. mujoco.noslip_iterations=10 or mujoco.integrator=implicitfast "
                          "(repeatable; no prefix: all)")
    cmp.add_argument("--scene-option", action="append", metavar="[BACKEND.]KEY=VALUE",
                     help="MJCF <option> attribute set in a copy of the scene, e.g. mujoco.cone=elliptic (repeatable)")
    cmp.add_argument("--tier", default=None, help="tolerance tier: tight (qpos 1e-4) or contact (base_pos 5e-3 m, "
                     "dof_pos 1e-2 rad); default: the scene's")
    cmp.add_argument("--tolerance", action="append", metavar="QUANTITY=NUMBER",
                     help="override/add a tolerance (base_pos, base_quat, dof_pos, dof_vel, qpos)")
    cmp.add_argument("--plot", default=None, help="write a PNG of base height and joints per backend")
    cmp.add_argument("--json", default=None, help="write the result (deviation series included) as JSON")
    cmp.set_defaults(fn=cmd_compare)
    ev = sub.add_parser(
        "eval", help="run a policy with its task on several engines: metrics with confidence intervals and a "
                     "PASS/FAIL verdict per engine against a reference",
        description="Run a policy (TorchScript .pt or .onnx) with its task on each backend from the same seeded "
                    "initial states and commands, one episode per env, and report per engine the return, tracking "
                    "errors, falls and episode length (mean ± 95 % interval over episodes) and a verdict against the "
                    "reference: PASS when the 95 % interval of the paired per-episode difference lies within the "
                    "tolerance for every judged metric. Exit status 1 when an engine fails or errors.")
    ev.add_argument("--policy", required=True, help="policy file: TorchScript (.pt, e.g. "
                    "examples/locomotion/policy.pt) or ONNX (.onnx)")
    ev.add_argument("--task", default="quadruped", help="task: quadruped, go1 (unisim_gym presets, no "
                    "randomization) or MODULE:FUNCTION returning a unisim_gym.Task (default: quadruped)")
    ev.add_argument("--backends", default=None, help="comma-separated (default: every installed engine, "
                    "mujoco first; not fake, example, ray)")
    ev.add_argument("--reference", default=None, help="reference engine (default: mujoco if listed, else the first)")
    ev.add_argument("--num-envs", type=int, default=16, help="envs, one episode each (default: 16)")
    ev.add_argument("--episode-s", type=float, default=4.0, help="episode length, s (default: 4)")
    ev.add_argument("--seed", type=int, default=0, help="seed of the initial states and commands (default: 0)")
    ev.add_argument("--tolerance", action="append", metavar="METRIC=NUMBER",
                    help="judge METRIC (lin_vel_error m/s, ang_vel_error rad/s, fall, return, length_s) within "
                         "NUMBER (defaults: lin_vel_error=0.1, ang_vel_error=0.1, fall=0.1; repeatable)")
    ev.add_argument("--option", action="append", metavar="[BACKEND.]KEY=VALUE",
                    help="backend option (repeatable; no prefix: all)")
    ev.add_argument("--plot", default=None, help="write a PNG of the per-engine curves (tracking errors, reward, "
                    "envs not fallen)")
    ev.add_argument("--video", default=None, help="write env 0 of every engine side by side (.mp4 or .gif)")
    ev.add_argument("--json", default=None, help="write the report (per-episode metrics, curves, verdicts) as JSON")
    ev.set_defaults(fn=cmd_eval)
    bench = sub.add_parser(
        "bench", help="env-steps/s of installed backends and their ratio to the raw engine",
        description="Throughput of each backend at each N, side by side with the raw engine loop in the same "
                    "run (ratio = raw time / contract time), the fraction of the physical limit (one env's "
                    "single-thread step cost x N / threads), plus cold-start time (construction to first step).")
    bench.add_argument("--backends", default=None, help="comma-separated (default: every installed backend with "
                       "status ok except fake, isaacsim and ray)")
    bench.add_argument("--num-envs", default="1,64,512", help="comma-separated N (default: 1,64,512)")
    bench.add_argument("--scene", default="quadruped", help="MJCF path or shipped scene (default: quadruped)")
    bench.add_argument("--sim-dt", type=float, default=0.002)
    bench.add_argument("--decimation", type=int, default=4, help="physics substeps per step call (default: 4)")
    bench.add_argument("--seconds", type=float, default=2.0, help="measuring time per cell (default: 2)")
    bench.add_argument("--steps", type=int, default=None,
                       help="step calls per loop and round, instead of --seconds")
    bench.add_argument("--rounds", type=int, default=3, help="alternating rounds of the loops (default: 3)")
    bench.add_argument("--option", action="append", metavar="[BACKEND.]KEY=VALUE",
                       help="backend option, e.g. mujoco.threads=2 (repeatable; no prefix: all)")
    bench.add_argument("--json", default=None, help="write the rows as JSON")
    bench.set_defaults(fn=cmd_bench)
    zoo = sub.add_parser(
        "zoo", help="compatibility matrix: real robot models x backends, each cell in its own process",
        description="Run every model (keyframe 0, its ctrl held, clipped to ctrlrange, at the model's timestep) on "
                    "every backend, each in its own process with a timeout, and compare with the MuJoCo backend "
                    "(1 env). Cells: ok (within the tier, figure), refused (the MJCF feature named), deviates "
                    "(figure past the tier), error (anything else). Exit status 1 when a cell is an error.")
    zoo.add_argument("dirs", nargs="*", metavar="DIR", help="an MJCF file, a robot folder (scene.xml, else "
                     "scene*.xml, else the robot's xml), a folder of robot folders, or 'gymnasium'")
    zoo.add_argument("--backends", default="mujoco", help="comma-separated (default: mujoco)")
    zoo.add_argument("--steps", type=int, default=200, help="physics steps per cell (default: 200)")
    zoo.add_argument("--num-envs", type=int, default=2, help="envs per cell (default: 2)")
    zoo.add_argument("--timeout", type=float, default=600.0, help="seconds per process (default: 600)")
    zoo.add_argument("--jobs", type=int, default=1, help="models run at once, each in its own processes (default: 1)")
    zoo.add_argument("--json", default=None, help="write every cell as JSON")
    zoo.add_argument("--markdown", default=None, help="write the matrix and details as markdown")
    zoo.add_argument("--plot", default=None, help="write a PNG of the matrix coloured by class")
    zoo.add_argument("--from-json", nargs="+", default=None, metavar="F", help="merge the cells of earlier --json "
                     "runs (a later file's or this run's cell replaces an earlier one of the same model and backend)")
    zoo.set_defaults(fn=cmd_zoo)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    args.argv = list(sys.argv[2:] if argv is None else argv[1:])
    if args.command == "check":  # unknown arguments of `check` are pytest's
        args.pytest_args = [a for a in extra if a != "--"]
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return args.fn(args)
    except (UniSimError, TypeError, ValueError, FileNotFoundError) as exc:
        print(f"unisim {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    os._exit(main())
