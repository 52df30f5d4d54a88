"""``evaluate_sim2sim``: one policy, its task, several engines, the same episodes; metrics and verdicts.

The episodes: ``num_envs`` envs reset once from ``seed`` (one batch: the same initial states and
commands on every engine), each run for its first episode only, at most ``episode_s`` seconds; an
env whose episode ended early is reset by the env and ignored from then on. The velocity presets
(:data:`TASKS`) evaluate without randomization and draw a command once per episode, so the whole
episode's command is the same on every engine. Summaries and verdicts: :mod:`unisim_core.tools.policy_eval`.
"""

from __future__ import annotations

import importlib
import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from unisim_core import InvalidInputError
from unisim_core.tools.policy_eval import EngineEpisodes, Sim2SimReport, check_tolerances, judge

from ._locomotion import VelocityTrackingCfg, VelocityTrackingTask
from ._presets import go1_rough_cfg
from ._task import Task
from ._vector_env import UniSimVectorEnv

__all__ = ["evaluate_sim2sim", "run_episodes", "load_policy_file", "task_factory", "TASKS"]

Policy = Callable[[np.ndarray], np.ndarray]

#: ``--task`` presets: name -> function of the episode length (s) making the evaluation task.
TASKS: dict[str, Callable[[float], Task]] = {
    "quadruped": lambda s: VelocityTrackingTask(VelocityTrackingCfg(randomize=False, episode_length_s=s,
                                                                    command_resample_s=s)),
    "go1": lambda s: VelocityTrackingTask(go1_rough_cfg(randomize=False, terrain_curriculum=False,
                                                        episode_length_s=s, command_resample_s=s)),
}


def task_factory(spec: str, episode_s: float) -> Callable[[], Task]:
    """A function making the task ``spec`` names: a :data:`TASKS` preset, or ``"module:function"``
    returning a :class:`Task`, called with ``episode_s=`` when it has that parameter, else with none."""
    if spec in TASKS:
        return lambda: TASKS[spec](episode_s)
    module, sep, name = spec.partition(":")
    if not sep:
        raise InvalidInputError(f"--task: expected one of {sorted(TASKS)} or MODULE:FUNCTION, got {spec!r}")
    try:
        fn = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise InvalidInputError(f"--task: cannot load {spec!r} ({exc})") from None

    def make() -> Task:
        import inspect

        task = fn(episode_s=episode_s) if "episode_s" in inspect.signature(fn).parameters else fn()
        if not isinstance(task, Task):
            raise InvalidInputError(f"--task: {spec!r} returned {type(task).__name__}, expected a unisim_gym.Task")
        return task

    return make


def load_policy_file(path: str | Path) -> Policy:
    """``obs (n, obs_dim) float32 -> actions`` of a policy file: ``.onnx`` through onnxruntime
    (one thread), anything else a TorchScript archive (``.pt``, as the shipped policy and rsl_rl's
    ``export_policy_to_jit`` write it) through torch on the CPU (one thread)."""
    path = Path(path)
    if not path.is_file():
        raise InvalidInputError(f"--policy: no such file {str(path)!r}")
    if path.suffix == ".onnx":
        from unisim_core.contract.errors import OptionalDependencyError

        try:
            import onnxruntime as ort
        except ImportError:
            raise OptionalDependencyError("an ONNX policy needs onnxruntime: pip install onnxruntime") from None
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = opts.inter_op_num_threads = 1
        session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        (inp,), (out,) = session.get_inputs(), session.get_outputs()
        width = inp.shape[-1] if isinstance(inp.shape[-1], int) else None

        def onnx_policy(obs: np.ndarray) -> np.ndarray:
            if width is not None and obs.shape[-1] != width:
                raise InvalidInputError(f"--policy: {path.name} takes observations of {width} values, the task "
                                        f"gives {obs.shape[-1]}: is it the task it was trained on?")
            return session.run([out.name], {inp.name: np.asarray(obs, np.float32)})[0]

        return onnx_policy
    try:
        import torch
    except ImportError:
        from unisim_core.contract.errors import OptionalDependencyError

        raise OptionalDependencyError("a TorchScript policy needs torch: pip install 'unisim-gym[rslrl]'") from None
    torch.set_num_threads(1)  # a small MLP: more threads only contend with the engine
    try:
        model = torch.jit.load(str(path), map_location="cpu").eval()
    except RuntimeError as exc:  # not a TorchScript archive
        raise InvalidInputError(f"--policy: {str(path)!r} is not a TorchScript archive or an .onnx file ({exc}); "
                                "export a trained rsl_rl policy with OnPolicyRunner.export_policy_to_jit") from None

    def policy(obs: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            try:
                return model(torch.from_numpy(np.asarray(obs, np.float32))).numpy()
            except RuntimeError:  # e.g. the first layer's width is not the observation's
                raise InvalidInputError(f"--policy: {path.name} cannot take the task's observations of shape "
                                        f"{tuple(obs.shape)}: is it the task it was trained on?") from None

    return policy


def run_episodes(policy: Policy, backend: str, make_task: Callable[[], Task], *, num_envs: int = 16,
                 episode_s: float = 4.0, seed: int = 0, backend_options: Mapping[str, Any] | None = None,
                 record_qpos: bool = False) -> EngineEpisodes:
    """Each env's first episode (at most ``episode_s``) on ``backend``: per episode the return, the
    mean tracking errors (``lin_vel_error``/``ang_vel_error`` of a task that reports them per step),
    whether it ended in a fall (terminated: base contact, tilt, divergence) and its length."""
    task = make_task()
    control_dt = task.sim_dt * task.decimation
    steps = max(1, round(episode_s / control_dt))
    env = UniSimVectorEnv(task, backend, num_envs, seed=seed, backend_options=backend_options,
                          max_episode_steps=steps)
    start = time.perf_counter()
    try:
        task = env.task
        obs, _ = env.reset(seed=seed)
        n = env.num_envs
        alive = np.ones(n, dtype=bool)
        ret, lin, ang, length = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n, dtype=np.int64)
        fell = np.zeros(n)
        curves = {k: np.full(steps, np.nan) for k in ("lin_vel_error", "ang_vel_error", "reward", "alive")}
        qpos = np.zeros((steps, env.backend.nq)) if record_qpos else None
        for k in range(steps):
            obs, reward, terminated, truncated, _ = env.step(policy(obs))
            lin_k = np.asarray(getattr(task, "lin_vel_error", np.full(n, np.nan)), float)
            ang_k = np.asarray(getattr(task, "ang_vel_error", np.full(n, np.nan)), float)
            if alive.any():
                curves["lin_vel_error"][k] = lin_k[alive].mean()
                curves["ang_vel_error"][k] = ang_k[alive].mean()
                curves["reward"][k] = reward[alive].mean()
            ret += np.where(alive, reward, 0.0)
            lin += np.where(alive, lin_k, 0.0)
            ang += np.where(alive, ang_k, 0.0)
            length += alive
            fell += alive & terminated
            alive &= ~(terminated | truncated)
            curves["alive"][k] = 1.0 - fell.mean()
            if qpos is not None:
                qpos[k] = env.backend.get_qpos()[0]
    finally:
        env.close()
    metrics = {"return": ret, "lin_vel_error": lin / length, "ang_vel_error": ang / length, "fall": fell,
               "length_s": length * control_dt}
    return EngineEpisodes(backend=backend, metrics=metrics, curves=curves, control_dt=control_dt, qpos=qpos,
                          wall_s=time.perf_counter() - start, model_file=task.scene.model_file,
                          base_body=env.backend.model_info.body_names[env.backend.base_body_id])


def evaluate_sim2sim(policy: Policy | str | Path, backends: Sequence[str], task: str | Callable[[], Task] = "quadruped",
                     *, reference: str | None = None, num_envs: int = 16, episode_s: float = 4.0, seed: int = 0,
                     tolerances: Mapping[str, float] | None = None,
                     backend_options: Mapping[str, Mapping[str, Any]] | None = None, record_qpos: bool = False,
                     on_engine: Callable[[str, EngineEpisodes], None] | None = None) -> Sim2SimReport:
    """Run ``policy`` (a function, or a policy file for :func:`load_policy_file`) with ``task`` (a
    :data:`TASKS` preset, ``"module:function"``, or a function making a :class:`Task`) on every
    backend of ``backends`` and judge each against ``reference`` (default: the first) with
    :func:`unisim_core.tools.policy_eval.judge`. An engine that fails (refuses the model, raises) gets
    an ``ERROR`` row with its message; the others go on. ``on_engine(name, run)`` after each."""
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 2:
        raise InvalidInputError(f"num_envs: expected an int >= 2 (episodes for a confidence interval), "
                                f"got {num_envs!r}")
    if not episode_s > 0:
        raise InvalidInputError(f"episode_s: expected a positive number of seconds, got {episode_s!r}")
    if not backends or len(set(backends)) != len(backends):
        raise InvalidInputError(f"backends: expected distinct backend names, got {list(backends)}")
    check_tolerances(tolerances)
    reference = backends[0] if reference is None else reference
    if reference not in backends:
        raise InvalidInputError(f"reference: {reference!r} is not one of the backends {list(backends)}")
    fn = load_policy_file(policy) if isinstance(policy, str | Path) else policy
    make = task_factory(task, episode_s) if isinstance(task, str) else task
    runs = []
    for name in [reference] + [b for b in backends if b != reference]:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # engines' modelling notes; the table is the output
                run = run_episodes(fn, name, make, num_envs=num_envs, episode_s=episode_s, seed=seed,
                                   backend_options=(backend_options or {}).get(name), record_qpos=record_qpos)
        except Exception as exc:  # one engine's failure is a row, not the end of the table
            print(f"unisim eval: {name}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
            run = EngineEpisodes(backend=name, error=f"{type(exc).__name__}: {exc}")
        runs.append(run)
        if on_engine is not None:
            on_engine(name, run)
    return judge(runs, reference, tolerances, seed=seed)
