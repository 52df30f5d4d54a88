"""``export_policy``: a trained velocity-tracking policy as ONNX plus its manifest (the policy's I/O contract)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from unisim_core import InvalidInputError, InvalidTypeError, OptionalDependencyError
from unisim_core.tools.policy_manifest import DEPLOY_TERMS, ObsTerm, PolicyManifest, file_sha256, joint_geometry

from ._locomotion import VelocityTrackingCfg, VelocityTrackingTask
from ._vector_env import UniSimVectorEnv

__all__ = ["export_policy", "manifest_for_task"]


def manifest_for_task(task: VelocityTrackingTask | VelocityTrackingCfg | None = None, *, backend: str = "mujoco",
                      policy_file: str = "policy.onnx") -> PolicyManifest:
    """The manifest of a policy trained on ``task`` (default: the shipped quadruped's
    ``VelocityTrackingCfg()``), read from the task bound to a one-env ``backend``."""
    if task is None or isinstance(task, VelocityTrackingCfg):
        task = VelocityTrackingTask(task)
    if not isinstance(task, VelocityTrackingTask):
        raise InvalidTypeError(f"task: the manifest describes VelocityTrackingTask's observations and actions, "
                               f"got {type(task).__name__}")
    unknown = [t.name for t in task.cfg.observations if t.name not in DEPLOY_TERMS]
    if unknown:
        raise InvalidInputError(f"task.cfg.observations: terms {unknown} are not computed by the deploy loop "
                                f"(unisim_core.tools.deploy); it computes {list(DEPLOY_TERMS)}")
    env = UniSimVectorEnv(task, backend, 1, seed=0)
    try:
        t, b, cfg = env.task, env.backend, task.cfg
        names = tuple(b.get_actuator_joint_names())
        base = b.model_info.body_names[b.base_body_id]
        anchor, axis = joint_geometry(task.scene.model_file, names, base)
        low, high = t.action_bounds()
        terms = tuple(ObsTerm(name=c.name, size=t.obs.widths[c.name], scale=c.scale, clip=c.clip, history=c.history,
                              delay=c.delay, noise=None if c.noise is None else attrs.asdict(c.noise))
                      for c in cfg.observations)
        if t.actuators is not None:
            actuation, kp, kd = "actuator_model", t.actuators.kp, t.actuators.kd
            configs = tuple({"class": type(c).__name__, **attrs.asdict(c)} for c in t.actuators.cfgs)
        else:
            actuation, kp, kd, configs = "position_servo", t.kp, t.kd, ()
        return PolicyManifest(
            policy_file=policy_file, obs_dim=t.obs.size, action_dim=len(names),
            model_file=str(Path(task.scene.model_file).resolve()), model_sha256=file_sha256(task.scene.model_file),
            robot=task.robot.name, base_body=base, sim_dt=task.sim_dt, decimation=task.decimation,
            joint_names=names, default_joint_pos=t.default_joint_pos, joint_range=t.joint_range,
            joint_anchor_b=anchor, joint_axis_b=axis, observations=terms,
            command_ranges=(cfg.lin_vel_x, cfg.lin_vel_y, cfg.ang_vel_z), action_scale=task.robot.action_scale,
            action_low=low, action_high=high, target_low=t.ctrl_range[:, 0], target_high=t.ctrl_range[:, 1],
            actuation=actuation, kp=kp, kd=kd, actuator_configs=configs)
    finally:
        env.close()


def export_policy(policy: str | Path | Any, path: str | Path,
                  task: VelocityTrackingTask | VelocityTrackingCfg | None = None, *, backend: str = "mujoco",
                  check_samples: int = 256, seed: int = 0) -> PolicyManifest:
    """Export ``policy`` (a TorchScript file, as the shipped ``policy.pt``, or a ``torch.nn.Module``:
    ``obs (n, obs_dim) -> actions (n, action_dim)``) to ONNX at ``path`` (opset 17, dynamic batch,
    input ``obs``, output ``actions``) and write its manifest beside it (``path`` with ``.json``).

    ``check_samples`` observations (normal, seeded) are run through both: the largest difference
    is the manifest's ``export_max_abs_diff``. Returns the manifest."""
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise OptionalDependencyError(f"unisim_gym.export_policy needs torch ({exc.name} is missing): "
                                      "pip install 'unisim-gym[rslrl]'") from exc
    path = Path(path)
    if path.suffix != ".onnx":
        raise InvalidInputError(f"path: expected a file name ending in .onnx, got {str(path)!r}")
    manifest = manifest_for_task(task, backend=backend, policy_file=path.name)
    module = torch.jit.load(str(policy), map_location="cpu") if isinstance(policy, str | Path) else policy
    if not isinstance(module, torch.nn.Module):
        raise InvalidTypeError(f"policy: expected a TorchScript file or a torch.nn.Module, got {type(policy).__name__}")
    module = module.eval()
    obs = np.random.default_rng(seed).normal(size=(check_samples, manifest.obs_dim)).astype(np.float32)
    obs = torch.from_numpy(obs)
    with torch.no_grad():
        expected = module(obs)
    if tuple(expected.shape) != (check_samples, manifest.action_dim):
        raise InvalidInputError(f"policy: maps ({check_samples}, {manifest.obs_dim}) observations to actions of shape "
                                f"{tuple(expected.shape)}, expected ({check_samples}, {manifest.action_dim})")
    with warnings.catch_warnings():
        # the TorchScript-based exporter: torch.export (dynamo=True) does not take TorchScript modules
        warnings.simplefilter("ignore")
        torch.onnx.export(module, (obs[:1],), str(path), input_names=["obs"], output_names=["actions"],
                          dynamic_axes={"obs": {0: "batch"}, "actions": {0: "batch"}}, opset_version=17, dynamo=False)
    from unisim_core.tools.deploy import OnnxPolicy

    got = OnnxPolicy(path, manifest)(obs.numpy())
    manifest = attrs.evolve(manifest, export_max_abs_diff=float(np.abs(got - expected.numpy()).max()))
    manifest.save(path.with_suffix(".json"))
    return manifest
