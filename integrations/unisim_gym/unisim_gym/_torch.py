"""``TorchVecEnv``: a :class:`UniSimVectorEnv` with torch tensors in and out, on the backend's device."""

from __future__ import annotations

from typing import Any

import numpy as np

from unisim_core import Capability, InvalidTypeError, OptionalDependencyError

try:
    import torch
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise OptionalDependencyError(
        f"unisim_gym.TorchVecEnv needs torch ({exc.name} is missing): pip install 'unisim-gym[rslrl]'"
    ) from exc

from ._vector_env import UniSimVectorEnv

__all__ = ["TorchVecEnv", "backend_device"]

#: ``DeviceArrays`` fields ``TorchVecEnv.state`` exposes.
STATE_FIELDS = ("qpos", "qvel", "body_pos_w", "body_quat_w")


def backend_device(env: UniSimVectorEnv) -> str:
    """Where the backend's state lives: ``get_device_arrays().device`` where it declares
    ``DEVICE_ARRAYS`` (``"cuda:0"`` for a GPU engine, ``"cpu"`` for MuJoCo Warp on the CPU), else ``"cpu"``."""
    if Capability.DEVICE_ARRAYS in env.backend.capabilities:
        return str(env.backend.get_device_arrays().device)
    return "cpu"


class TorchVecEnv:
    """The same episodes as ``env``, as torch tensors on ``device`` (default: the backend's, see
    :func:`backend_device`).

    - ``reset``/``step`` take and return what ``UniSimVectorEnv`` does, with tensors: actions of
      any device (moved to the host once), observations ``(num_envs, obs_dim)`` float32, rewards
      float32, ``terminated``/``truncated`` bool, on ``device``. The task layer computes in numpy on
      the host, so observations cross to the device once per step (on the CPU ``torch.from_numpy``
      shares the array: no copy at all).
    - ``state``: the backend's live state as tensors. Where the backend declares ``DEVICE_ARRAYS``
      these are zero-copy DLPack views of the engine's own buffers (``torch.from_dlpack`` of
      ``get_device_arrays()``: after ``step`` they hold the new state without a call), on the
      engine's device and in its dtype; otherwise fresh copies of the numpy getters
      (``get_qpos``, ...), in ``np_dtype``, moved to ``device``. Read-only by contract.
    - ``zero_copy``: whether ``state`` is made of DLPack views.
    """

    def __init__(self, env: UniSimVectorEnv, *, device: str | torch.device | None = None) -> None:
        if not isinstance(env, UniSimVectorEnv):
            raise InvalidTypeError(f"env: expected a UniSimVectorEnv, got {type(env).__name__}")
        self.env = env
        self.num_envs = env.num_envs
        self.device = torch.device(backend_device(env) if device is None else device)
        self.zero_copy = Capability.DEVICE_ARRAYS in env.backend.capabilities
        self._views: dict[str, torch.Tensor] | None = None

    def _tensor(self, array: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.ascontiguousarray(array)).to(self.device)

    def reset(self, *, seed: Any = None, options: dict | None = None) -> tuple[torch.Tensor, dict]:
        obs, info = self.env.reset(seed=seed, options=options)
        return self._tensor(obs), info

    def step(self, actions: torch.Tensor | np.ndarray) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor,
                                                               torch.Tensor, dict]:
        if isinstance(actions, torch.Tensor):
            actions = actions.detach().to("cpu", torch.float32).numpy()
        obs, reward, terminated, truncated, info = self.env.step(actions)
        return self._tensor(obs), self._tensor(reward), self._tensor(terminated), self._tensor(truncated), info

    @property
    def state(self) -> dict[str, torch.Tensor]:
        """``{"qpos" (num_envs, nq), "qvel" (num_envs, nv), "body_pos_w" (num_envs, nbody, 3) m,
        "body_quat_w" (num_envs, nbody, 4) wxyz}`` (see the class doc)."""
        if self.zero_copy:
            if self._views is None:  # resolved once: the views stay live
                arrays = self.env.backend.get_device_arrays()
                self._views = {k: torch.from_dlpack(getattr(arrays, k)) for k in STATE_FIELDS}
            return self._views
        b = self.env.backend
        ids = np.arange(b.num_bodies)
        return {k: self._tensor(v) for k, v in (("qpos", b.get_qpos()), ("qvel", b.get_qvel()),
                                                  ("body_pos_w", b.get_body_pos_w(ids)),
                                                  ("body_quat_w", b.get_body_quat_w(ids)))}

    def close(self) -> None:
        self.env.close()
