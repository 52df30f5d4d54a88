"""A minimal deploy loop: an exported policy (ONNX + :class:`~unisim_core.tools.policy_manifest.PolicyManifest`)
driving any backend with onnxruntime and numpy only, in the shape of a real robot's controller.

Per control step (:meth:`PolicyController.step`): read the state (``get_qpos``/``get_qvel``) ->
build the observation the manifest describes -> run the policy -> clip the action -> joint
targets -> ``backend.step(targets, decimation)``. On a real robot the first and the last arrow are
the robot's SDK; everything between is this module. Neither torch nor gymnasium is imported.

The observation terms are computed as the training task computes them (float64 from the
contract's state, then clip, scale and history as the manifest says, float32 at the end);
training-time observation noise and delay are not applied (a real loop has its own latency). A
robot driven by an actuator model (``actuation == "actuator_model"``) gets it installed as the
backend's pre-step hook, as in training.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from unisim_core.contract.errors import InvalidInputError, OptionalDependencyError
from unisim_core.contract.quat import quat_apply_inverse
from unisim_core.tools.policy_manifest import ManifestBinding, ManifestMismatchError, PolicyManifest, check_manifest

if TYPE_CHECKING:
    from unisim_core.contract.backend import SimBackend

__all__ = ["OnnxPolicy", "PolicyController", "actuator_configs_from_json"]


class OnnxPolicy:
    """``obs (n, obs_dim) float32 -> actions (n, action_dim) float32`` through onnxruntime (CPU, one
    thread). The model's input and output are checked against ``manifest`` (names and sizes)."""

    def __init__(self, path: str | Path, manifest: PolicyManifest) -> None:
        try:
            import onnxruntime as ort
        except ImportError:
            raise OptionalDependencyError("running an ONNX policy needs onnxruntime: pip install onnxruntime "
                                          "(or 'unisim-contract[deploy]')") from None
        if not Path(path).is_file():
            raise InvalidInputError(f"policy: no such file {str(path)!r}")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = opts.inter_op_num_threads = 1  # a small MLP: threads only contend
        self.session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        (inp,), (out,) = self.session.get_inputs(), self.session.get_outputs()
        problems = []
        if inp.name != manifest.input_name or inp.shape[-1] != manifest.obs_dim:
            problems.append(f"input {inp.name!r} of shape {inp.shape}, the manifest's is {manifest.input_name!r} "
                            f"of {manifest.obs_dim} values")
        if out.name != manifest.output_name or out.shape[-1] != manifest.action_dim:
            problems.append(f"output {out.name!r} of shape {out.shape}, the manifest's is {manifest.output_name!r} "
                            f"of {manifest.action_dim} values")
        if problems:
            raise ManifestMismatchError(f"policy {str(path)!r} does not fit its manifest: " + "; ".join(problems))
        self.input_name, self.output_name = inp.name, out.name

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return self.session.run([self.output_name], {self.input_name: np.asarray(obs, np.float32)})[0]


def actuator_configs_from_json(configs) -> tuple:
    """The :mod:`unisim_core.tools.actuators` configs of a manifest (``{"class": "DCMotorCfg", ...fields}``)."""
    from unisim_core.tools import actuators

    out = []
    for c in configs:
        c = dict(c)
        cls = {"IdealPDCfg": actuators.IdealPDCfg, "DCMotorCfg": actuators.DCMotorCfg}.get(c.pop("class", None))
        if cls is None:
            raise InvalidInputError(f"manifest: actuation.configs: expected class IdealPDCfg or DCMotorCfg, got {c!r}")
        out.append(cls(**c))
    return tuple(out)


class PolicyController:
    """A manifest's policy controlling ``backend`` (all its envs), one control step per :meth:`step`.

    - ``policy``: a function ``obs -> actions`` (default: :class:`OnnxPolicy` of the manifest's
      policy file, ``manifest_path`` locating it); the manifest is checked against the backend
      first (:func:`~unisim_core.tools.policy_manifest.check_manifest`, refusals name what differs).
    - ``install_actuators``: install the manifest's actuator model (torque robots) as the backend's
      pre-step hook; ``seed`` draws its per-env target delay.
    - :meth:`observe` (command ``(num_envs, 3)``, ``command_names`` order) -> float32 observation;
      :meth:`act` -> clipped float32 action (it becomes the next observation's ``last_action``);
      :meth:`targets` -> ``(num_envs, num_actuators)`` ``ctrl`` in the backend's order.
    """

    def __init__(self, manifest: PolicyManifest, backend: SimBackend, *, manifest_path: str | Path | None = None,
                 policy: Callable[[np.ndarray], np.ndarray] | None = None, install_actuators: bool = True,
                 seed: int = 0) -> None:
        self.manifest, self.backend = manifest, backend
        self.binding: ManifestBinding = check_manifest(manifest, backend)
        if policy is None:
            if manifest_path is None:
                raise InvalidInputError("manifest_path: needed to find the policy file when no policy is given")
            policy = OnnxPolicy(manifest.policy_path(manifest_path), manifest)
        self.policy = policy
        m, n = manifest, backend.num_envs
        self.n, self.nu = n, backend.num_actuators
        self.default = np.asarray(m.default_joint_pos, np.float64)
        self.action_low = np.asarray(m.action_low, np.float64).astype(np.float32)
        self.action_high = np.asarray(m.action_high, np.float64).astype(np.float32)
        self.target_low, self.target_high = np.asarray(m.target_low), np.asarray(m.target_high)
        self.last_action = np.zeros((n, len(m.joint_names)))
        self._rng = np.random.default_rng(seed)
        self.actuators = None
        if m.actuation == "actuator_model" and install_actuators:
            from unisim_core.tools.actuators import ActuatorModel

            self.actuators = ActuatorModel(backend, actuator_configs_from_json(m.actuator_configs))
        self._history = {t.name: None for t in m.observations if t.history > 1}
        self.reset()

    # ------------------------------------------------------------------ the loop
    def _terms(self, command: np.ndarray) -> dict[str, np.ndarray]:
        """The manifest's terms from the current state (float64, ``(num_envs, size)``)."""
        bd = self.binding
        qpos = self.backend.get_qpos().astype(np.float64)
        qvel = self.backend.get_qvel().astype(np.float64)
        q0, v0 = bd.root_qpos, bd.root_qvel
        quat = qpos[:, q0 + 3:q0 + 7]
        w, x, y, z = quat.T
        # unit gravity in the base frame: R^T (0, 0, -1) = -(third row of R)
        gravity_b = -np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=1)
        return {"base_lin_vel_b": quat_apply_inverse(quat, qvel[:, v0:v0 + 3]),
                "base_ang_vel_b": qvel[:, v0 + 3:v0 + 6],  # body frame, as a free joint stores it
                "projected_gravity": gravity_b, "command": command,
                "dof_pos_rel": qpos[:, bd.qpos_cols] - self.default, "dof_vel": qvel[:, bd.qvel_cols],
                "last_action": self.last_action}

    def _command(self, command) -> np.ndarray:
        c = np.asarray(command, dtype=np.float64)
        c = np.broadcast_to(c, (self.n, len(self.manifest.command_names))) if c.ndim == 1 else c
        if c.shape != (self.n, len(self.manifest.command_names)) or not np.isfinite(c).all():
            raise InvalidInputError(f"command: expected finite values of shape ({len(self.manifest.command_names)},) "
                                    f"or ({self.n}, {len(self.manifest.command_names)}) "
                                    f"({', '.join(self.manifest.command_names)}), got shape {c.shape}")
        return c

    @staticmethod
    def _process(term, x: np.ndarray) -> np.ndarray:
        if term.clip is not None:
            x = np.clip(x, -term.clip, term.clip)
        return x * term.scale if term.scale != 1.0 else x

    def reset(self, env_ids: np.ndarray | None = None, command=None) -> None:
        """Start ``env_ids`` (default: all) afresh: no previous action, the observation history
        filled with the current state, the actuator model's delay line with the default pose."""
        ids = np.arange(self.n) if env_ids is None else np.asarray(env_ids, dtype=np.int64)
        self.last_action[ids] = 0.0
        if self._history:
            values = self._terms(self._command(np.zeros(3) if command is None else command))
            for t in self.manifest.observations:
                if t.history > 1:
                    if self._history[t.name] is None:
                        self._history[t.name] = np.zeros((t.history, self.n, t.size))
                    self._history[t.name][:, ids] = self._process(t, values[t.name][ids])[None]
        if self.actuators is not None:
            self.actuators.reset(ids, np.tile(self.default, (len(ids), 1)), self._rng)

    def observe(self, command) -> np.ndarray:
        """``(num_envs, obs_dim)`` float32: the manifest's terms in order, from the current state."""
        values = self._terms(self._command(command))
        out = []
        for t in self.manifest.observations:
            x = self._process(t, values[t.name])
            if t.history > 1:  # oldest first, the newest is this step's
                h = self._history[t.name]
                h[:-1] = h[1:].copy()
                h[-1] = x
                out.extend(h)
            else:
                out.append(x)
        return np.concatenate(out, axis=1, dtype=np.float32)

    def act(self, obs: np.ndarray) -> np.ndarray:
        """The policy's action for ``obs``, clipped to the manifest's bounds (float32); remembered as
        the next observation's ``last_action``."""
        a = np.asarray(self.policy(obs), dtype=np.float32)
        if a.shape != (self.n, len(self.manifest.joint_names)):
            raise ManifestMismatchError(f"policy: returned actions of shape {a.shape}, expected "
                                        f"({self.n}, {len(self.manifest.joint_names)})")
        a = np.clip(a, self.action_low, self.action_high)
        self.last_action = a.astype(np.float64)
        return a

    def targets(self, action: np.ndarray) -> np.ndarray:
        """``ctrl (num_envs, num_actuators)`` in the backend's actuator order: joint targets
        ``default + action_scale * action``, clipped to the target range, in ``np_dtype``."""
        target = np.clip(self.default + self.manifest.action_scale * action, self.target_low, self.target_high)
        ctrl = np.empty((self.n, self.nu), dtype=self.backend.np_dtype)
        ctrl[:, self.binding.ctrl_cols] = target
        return ctrl

    def step(self, command) -> np.ndarray:
        """One control step: observe, act, targets, ``backend.step(ctrl, decimation)``; returns the action."""
        action = self.act(self.observe(command))
        self.backend.step(self.targets(action), self.manifest.decimation)
        return action

    def close(self) -> None:
        """Remove the actuator model's hook (the backend stays open)."""
        if self.actuators is not None:
            self.actuators.close()
