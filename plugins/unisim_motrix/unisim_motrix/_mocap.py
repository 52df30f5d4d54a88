"""``bind_mocap_pose`` (capability ``mocap``) through MotrixSim's mocap bodies.

MotrixSim builds a kinematic ``motrixsim.Mocap`` for every ``<body mocap="true">`` (it collides and
pushes, the physics never moves it). ``Mocap.set_pose(data, pose)`` writes ``(k, 7)`` rows
``[x, y, z, qx, qy, qz, qw]`` (xyzw) into the worlds of ``data``; a masked sub-``SceneData`` writes
only the chosen envs. The pose is read back from the link tables (the body is MotrixSim link
``b - 1``), which the write updates at once.
"""

from __future__ import annotations

import numpy as np

from unisim_core import SimBackend  # the engine's backend (its _backend module imports this one)
from unisim_core.contract.bindings import BackendMocapPoseBinding

from ._errors import engine_call

__all__ = ["MotrixMocapPoseBinding", "write_mocap_poses"]

_XYZW = np.array([1, 2, 3, 0])


def write_mocap_poses(backend: SimBackend, body_id: int, env_ids: np.ndarray, pos: np.ndarray,
                      quat_wxyz: np.ndarray) -> None:
    """Write ``pos (k, 3)`` m and unit ``quat_wxyz (k, 4)`` of mocap body ``body_id`` into ``env_ids``."""
    sub, order = backend._sub(env_ids)
    pose = np.concatenate([pos, quat_wxyz[:, _XYZW]], axis=1)[order].astype(np.float32)
    mocap = backend._M.links[body_id - 1].body.mocap  # looked up per call: the model may be rebuilt
    with engine_call("Mocap.set_pose"):
        mocap.set_pose(sub, np.ascontiguousarray(pose))
    backend._moved_kinematically()


class MotrixMocapPoseBinding(BackendMocapPoseBinding):
    def __init__(self, backend: SimBackend, body_name: str, body_id: int) -> None:
        self._backend = backend
        self._id = body_id
        self.body_name = body_name
        self.num_envs = backend.num_envs

    def _write(self, env_ids: np.ndarray, pos: np.ndarray, quat: np.ndarray) -> None:
        self._backend._check_open()
        write_mocap_poses(self._backend, self._id, env_ids, pos, quat)

    def get(self) -> tuple[np.ndarray, np.ndarray]:
        be, ids = self._backend, np.array([self._id])
        be._check_open()
        return be._body_pos_w(ids)[:, 0], be._body_quat_w(ids)[:, 0]
