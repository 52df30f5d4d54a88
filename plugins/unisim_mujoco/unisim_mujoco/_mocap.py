"""``bind_mocap_pose`` for MuJoCo: mocap_pos / mocap_quat rows of the batch state."""

from __future__ import annotations

import numpy as np

from unisim_core import SimBackend  # the engine's backend (its _backend module imports this one)
from unisim_core.contract.bindings import BackendMocapPoseBinding

__all__ = ["MujocoMocapPoseBinding"]


class MujocoMocapPoseBinding(BackendMocapPoseBinding):
    def __init__(self, backend: SimBackend, body_name: str, mocap_id: int) -> None:
        self._backend = backend
        self._id = mocap_id
        self.body_name = body_name
        self.num_envs = backend.num_envs

    def _write(self, env_ids: np.ndarray, pos: np.ndarray, quat: np.ndarray) -> None:
        be = self._backend
        be._check_open()
        be._mocap_pos[env_ids, self._id] = pos
        be._mocap_quat[env_ids, self._id] = quat
        be._forward(np.sort(env_ids))  # the mocap body's pose is visible to the getters at once

    def get(self) -> tuple[np.ndarray, np.ndarray]:
        dt = self._backend.np_dtype
        return self._backend._mocap_pos[:, self._id].astype(dt), self._backend._mocap_quat[:, self._id].astype(dt)
