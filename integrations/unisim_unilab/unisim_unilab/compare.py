"""A UniLab task on a UniSim engine against UniLab's own backend: same state, same actions.

``record`` runs the task on any ``sim_backend`` (UniLab's own ``mujoco``/``motrix`` or a
``unisim-*`` one) and saves the start state, the actions and what followed; ``replay`` puts another
backend in that start state, applies the same actions and compares, step by step:

    python -m unisim_unilab.compare record --sim motrix --out ref.npz
    python -m unisim_unilab.compare replay ref.npz --sim unisim-motrix --tol-joint-pos 0.05

The two may run in different environments (UniLab's MuJoCo backend needs MuJoCo 3.11, UniSim's
MuJoCo 4). Actions are a fixed smooth sequence (a 1 Hz sinusoid of amplitude ``--amplitude`` around
the default pose, a different phase per joint and env): the robot stays up, no env terminates.
The task config is composed by Hydra from UniLab's ``conf/ppo``, with ``env.events.pd_gains`` off
(random gains would differ between the two runs). Assets are UniLab's (``unisim-unilab-standins`` for
offline meshes); the working directory must hold UniLab's ``src/unilab`` layout or the scene path is
resolved from the installed package (``--root``).
"""

from __future__ import annotations

import argparse
import importlib.metadata as metadata
import os
import sys
import time
from pathlib import Path

import numpy as np

__all__ = ["make_task_env", "actions", "record", "replay", "compare", "main"]


def make_task_env(task: str, sim: str, num_envs: int, config: str = "ppo"):
    """UniLab's env for Hydra task ``task`` (e.g. ``go2_joystick_flat/motrix``) on ``sim``."""
    import unilab
    from hydra import compose, initialize_config_dir
    from unilab.base import registry
    from unilab.base.config_adapter import EnvConfigAdapter, create_env

    root = Path(unilab.__file__).parent
    # no random gains, no time-outs (UniLab staggers episode starts at random): resets would differ between runs
    overrides = [f"task={task}", f"training.sim_backend={sim}", "env.events.pd_gains=null",
                 "env.max_episode_seconds=100000.0"]
    with initialize_config_dir(config_dir=str(root / "conf" / config), version_base=None):
        cfg = compose("config", overrides=overrides)
    registry.ensure_registries()
    override = EnvConfigAdapter(cfg, root_dir=root).build_task_env_cfg_override()
    scene = override.get("scene")
    model_file = scene.get("model_file") if isinstance(scene, dict) else None
    if model_file and not os.path.isabs(model_file) and not os.path.exists(model_file):
        prefix = "src/unilab/"  # UniLab's source-checkout layout; resolve it in the installed package
        if model_file.startswith(prefix):
            override["scene"] = {**scene, "model_file": str(root / model_file[len(prefix):])}
    return create_env(cfg, num_envs=num_envs, env_cfg_override=override)


def actions(num_steps: int, num_envs: int, num_actions: int, ctrl_dt: float, amplitude: float) -> np.ndarray:
    """``(num_steps, num_envs, num_actions)`` float32: ``amplitude * sin(2 pi t + phase)``."""
    t = np.arange(num_steps)[:, None, None] * ctrl_dt
    phase = np.arange(num_envs * num_actions).reshape(1, num_envs, num_actions) * 0.7
    return (amplitude * np.sin(2 * np.pi * t + phase)).astype(np.float32)


def _state(env) -> tuple[np.ndarray, np.ndarray]:
    views = env.backend.get_state_views(("qpos", "qvel"))
    return views["qpos"].cpu().numpy().astype(np.float64), views["qvel"].cpu().numpy().astype(np.float64)


#: Sensors compared (Go2's): name -> width. Contacts are 0/1 ("found").
SENSORS = {"gyro": 3, "upvector": 3, "local_linvel": 3, "FL_foot_contact": 1, "FR_foot_contact": 1,
           "RL_foot_contact": 1, "RR_foot_contact": 1}


def _joint_columns(env) -> dict[str, np.ndarray]:
    """``joint_names``; ``qpos_decl``/``qvel_decl``, the columns ``set_state_tensor`` takes each
    actuated joint in; ``qpos_cols``/``qvel_cols``, where the backend's published state
    (``get_state_views``) holds each actuated joint, found by writing distinct values into the
    declared columns (``get_joint_state_q*_indices``) and reading them back. UniLab 1.5.2's own
    MotrixSim backend publishes the joints in actuator order while declaring MuJoCo's columns (Go2:
    FL/FR and RL/RR swapped); the state it is given and its physics are MuJoCo's order."""
    import torch

    backend = env.backend
    names = tuple(backend.get_actuator_joint_names())
    found, decl = [], []
    for field, declared in (("qpos", backend.get_joint_state_qpos_indices(names)),
                            ("qvel", backend.get_joint_state_qvel_indices(names))):
        qpos, qvel = (backend.get_state_views((f,))[f].clone() for f in ("qpos", "qvel"))
        probe = qpos if field == "qpos" else qvel
        marks = 10.0 + np.arange(len(names), dtype=np.float32)
        probe[:, np.asarray(declared)] = torch.from_numpy(marks)
        rows = torch.arange(backend.num_envs, dtype=torch.int64)
        backend.set_state_tensor(rows, qpos.contiguous(), qvel.contiguous())
        published = backend.get_state_views((field,))[field][0].cpu().numpy()
        found.append(np.array([int(np.flatnonzero(published == m)[0]) for m in marks]))
        decl.append(np.asarray(declared))
    return {"joint_names": np.array(names), "qpos_decl": decl[0], "qvel_decl": decl[1], "qpos_cols": found[0],
            "qvel_cols": found[1]}


def _declared(state: np.ndarray, published: np.ndarray, declared: np.ndarray) -> np.ndarray:
    """A published state row set rearranged into the declared (``set_state``) layout."""
    out = state.copy()
    out[:, declared] = state[:, published]
    return out


def _run(env, qpos0: np.ndarray, qvel0: np.ndarray, acts: np.ndarray) -> dict[str, np.ndarray]:
    import torch

    env.init_state()
    rows = torch.arange(env.num_envs, dtype=torch.int64)
    env.backend.set_state_tensor(rows, torch.tensor(qpos0, dtype=torch.float32),
                                 torch.tensor(qvel0, dtype=torch.float32))
    view = env.backend.bind_sensor_data(tuple(SENSORS))
    qpos, qvel, sensors = [], [], []
    started = time.perf_counter()
    for a in acts:
        env.step(torch.from_numpy(a))
        q, v = _state(env)
        qpos.append(q)
        qvel.append(v)
        sensors.append(np.asarray(view.read(), dtype=np.float64))
    return {"qpos": np.array(qpos), "qvel": np.array(qvel), "sensors": np.array(sensors),
            "seconds": np.array(time.perf_counter() - started)}


def record(task: str, sim: str, num_envs: int, num_steps: int, amplitude: float) -> dict[str, np.ndarray]:
    """Run ``task`` on ``sim`` from its own reset state; what ``replay`` compares against."""
    env = make_task_env(task, sim, num_envs)
    try:
        env.init_state()
        cols = _joint_columns(env)
        env.init_state()
        qpos0, qvel0 = _state(env)
        qpos0 = _declared(qpos0, cols["qpos_cols"], cols["qpos_decl"])
        qvel0 = _declared(qvel0, cols["qvel_cols"], cols["qvel_decl"])
        acts = actions(num_steps, num_envs, env.backend.num_actuators, float(env.cfg.ctrl_dt), amplitude)
        out = _run(env, qpos0, qvel0, acts)
    finally:
        env.close()
    versions = {}
    for name in ("mujoco", "motrixsim-core", "unilab"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return {**out, "qpos0": qpos0, "qvel0": qvel0, "actions": acts, "task": np.array(task), "sim": np.array(sim),
            **cols,
            "versions": np.array(repr(versions))}


def compare(ref: dict, run: dict) -> dict[str, float]:
    """Largest differences over the horizon: joint positions (rad), velocities (rad/s), base height
    (m), gyro (rad/s), up vector, local linear velocity (m/s); ``contact``: the fraction of foot
    contact readings (found, 0/1) that disagree."""
    out = {
        "joint_pos": float(np.abs(run["qpos"][..., run["qpos_cols"]] - ref["qpos"][..., ref["qpos_cols"]]).max()),
        "joint_vel": float(np.abs(run["qvel"][..., run["qvel_cols"]] - ref["qvel"][..., ref["qvel_cols"]]).max()),
        "base_height": float(np.abs(run["qpos"][..., 2] - ref["qpos"][..., 2]).max()),
    }
    start = 0
    for name, width in SENSORS.items():
        a, b = ref["sensors"][..., start:start + width], run["sensors"][..., start:start + width]
        start += width
        if name.endswith("_contact"):
            out["contact"] = out.get("contact", 0.0) + float(np.mean((a > 0) != (b > 0))) / 4
        else:
            out[name] = float(np.abs(a - b).max())
    return out


def replay(ref: dict, sim: str) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Run ``sim`` from ``ref``'s start state with its actions; ``(differences, run)``."""
    acts = ref["actions"]
    env = make_task_env(str(ref["task"]), sim, acts.shape[1])
    try:
        env.init_state()
        cols = _joint_columns(env)
        if cols["joint_names"].tolist() != ref["joint_names"].tolist():
            raise ValueError(f"{sim} actuates joints {cols['joint_names'].tolist()}, "
                             f"the record {ref['joint_names'].tolist()}")
        qpos0, qvel0 = ref["qpos0"].copy(), ref["qvel0"].copy()  # the record's joints in this engine's columns
        qpos0[:, cols["qpos_decl"]] = ref["qpos0"][:, ref["qpos_decl"]]
        qvel0[:, cols["qvel_decl"]] = ref["qvel0"][:, ref["qvel_decl"]]
        run = {**_run(env, qpos0, qvel0, acts), **cols}
    finally:
        env.close()
    return compare(ref, run), run


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m unisim_unilab.compare", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    rec = sub.add_parser("record", help="run a task and save start state, actions and trajectory")
    rec.add_argument("--task", default="go2_joystick_flat/motrix")
    rec.add_argument("--sim", required=True)
    rec.add_argument("--num-envs", type=int, default=4)
    rec.add_argument("--steps", type=int, default=300)
    rec.add_argument("--amplitude", type=float, default=0.3)
    rec.add_argument("--out", required=True)
    rep = sub.add_parser("replay", help="run another backend from a record and compare")
    rep.add_argument("record")
    rep.add_argument("--sim", required=True)
    for key in ("joint-pos", "joint-vel", "base-height", "gyro", "upvector", "local-linvel", "contact"):
        rep.add_argument(f"--tol-{key}", type=float, help="fail when the difference exceeds it")
    args = parser.parse_args(argv)
    if args.cmd == "record":
        data = record(args.task, args.sim, args.num_envs, args.steps, args.amplitude)
        np.savez(args.out, **data)
        print(f"recorded {args.task} on {args.sim}: {args.num_envs} envs x {args.steps} steps in "
              f"{float(data['seconds']):.1f} s -> {args.out}")
        return 0
    ref = dict(np.load(args.record, allow_pickle=False))
    diffs, run = replay(ref, args.sim)
    steps, envs = ref["actions"].shape[:2]
    print(f"{ref['task']}: {args.sim} against {ref['sim']} ({envs} envs x {steps} steps, {float(run['seconds']):.1f} s;"
          f" reference {ref['versions']})")
    print("| max difference | " + " | ".join(diffs) + " |")
    print("| --- | " + " | ".join("---" for _ in diffs) + " |")
    print(f"| {args.sim} vs {ref['sim']} | " + " | ".join(f"{v:.3g}" for v in diffs.values()) + " |")
    failed = [f"{k} {v:.3g} > {getattr(args, 'tol_' + k)}" for k, v in diffs.items()
              if getattr(args, "tol_" + k) is not None and v > getattr(args, "tol_" + k)]
    if failed:
        print("beyond tolerance: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
