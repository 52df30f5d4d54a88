"""``bind_mocap_pose`` on Newton: a mocap body is a root fixed to the world by a joint whose parent
frame ``joint_X_p`` (one row per world) is its world pose; SolverMuJoCo makes it a MuJoCo mocap body
and writes that pose into MuJoCo Warp's ``mocap_pos``/``mocap_quat`` before every substep."""

from __future__ import annotations

import numpy as np

from unisim_core import SimBackend  # the engine's backend (its _backend module imports this one)
from unisim_core.contract import quat as Q
from unisim_core.contract.bindings import BackendMocapPoseBinding

__all__ = ["NewtonMocapPoseBinding"]


class NewtonMocapPoseBinding(BackendMocapPoseBinding):
    """World pose of one mocap body (Newton joint ``joint`` of every world; its child frame is the body's)."""

    def __init__(self, backend: SimBackend, joint: int) -> None:
        self._backend = backend
        n, lay = backend.num_envs, backend._layout
        self._rows = np.arange(n) * lay.joints + joint
        child = int(backend._model.joint_child.numpy()[joint])
        self.body_name = backend.model_info.body_names[int(np.flatnonzero(lay.body_src == child)[0])]
        self.num_envs = n

    def write_frames(self, env_ids: np.ndarray, pos: np.ndarray, quat: np.ndarray) -> None:
        """The joint frames of ``env_ids`` (``pos (k, 3)`` m, unit ``quat (k, 4)`` wxyz), not the bodies yet."""
        table = self._backend._model.joint_X_p
        rows = table.numpy()
        rows[self._rows[env_ids]] = np.concatenate((pos, Q.quat_wxyz_to_xyzw(quat)), axis=1)
        table.assign(rows)

    def _write(self, env_ids: np.ndarray, pos: np.ndarray, quat: np.ndarray) -> None:
        self._backend._check_open()
        self.write_frames(env_ids, pos, quat)
        self._backend._forward_kinematics(env_ids)  # the body's pose is visible to the getters at once

    def get(self) -> tuple[np.ndarray, np.ndarray]:
        frames = self._backend._model.joint_X_p.numpy()[self._rows].astype(np.float64)
        dt = self._backend.np_dtype
        return frames[:, :3].astype(dt), Q.quat_xyzw_to_wxyz(frames[:, 3:]).astype(dt)
