"""Frames of the contract: base and joint state, body poses and velocities in the world frame
(all envs, env rows, caller-owned buffers) and relative to the base link.

Mixed into :class:`~unisim_core.contract.backend.SimBackend`, which provides the ``_body_*_w`` primitives.
Positions m, velocities m/s and rad/s, quaternions wxyz; ``*_w`` world frame, ``get_body_pos_b`` /
``get_body_quat_b`` in the base link's frame, ``get_body_lin_vel_b`` / ``get_body_ang_vel_b`` each
body's world velocity in its own frame.
"""

from __future__ import annotations

import numpy as np

from unisim_core.contract import quat as Q
from unisim_core.contract.errors import InvalidInputError
from unisim_core.contract.validation import check_index_array

__all__ = ["Frames"]


class Frames:
    """``get_base_*``, ``get_dof_*``, ``get_body_*_w``, ``get_body_*_w_rows``, ``get_body_*_b``."""

    def get_base_pos(self) -> np.ndarray:
        """``(num_envs, 3)`` base position, world frame, m."""
        if self._root_q is not None:
            q = self._root_q
            return np.ascontiguousarray(self.get_qpos()[:, q:q + 3])
        return self._body_pos_w(np.array([self._base_id]))[:, 0]

    def get_base_quat(self) -> np.ndarray:
        """``(num_envs, 4)`` base orientation, world frame, wxyz."""
        if self._root_q is not None:
            q = self._root_q
            return np.ascontiguousarray(self.get_qpos()[:, q + 3:q + 7])
        return self._body_quat_w(np.array([self._base_id]))[:, 0]

    def get_base_lin_vel(self) -> np.ndarray:
        """``(num_envs, 3)`` world linear velocity of the base origin, m/s."""
        if self._root_v is not None:
            v = self._root_v
            return np.ascontiguousarray(self.get_qvel()[:, v:v + 3])
        return self._body_lin_vel_w(np.array([self._base_id]))[:, 0]

    def get_base_ang_vel(self) -> np.ndarray:
        """``(num_envs, 3)`` base angular velocity in the world frame, rad/s."""
        if self._root_v is not None:
            v = self._root_v
            w_body = self.get_qvel()[:, v + 3:v + 6]
            return Q.quat_apply(self.get_base_quat(), w_body).astype(self.np_dtype, copy=False)
        return self._body_ang_vel_w(np.array([self._base_id]))[:, 0]

    def get_dof_pos(self) -> np.ndarray:
        """``(num_envs, num_dof)`` joint positions without the floating root."""
        return np.ascontiguousarray(self.get_qpos()[:, self._dof_qpos_sel])

    def get_dof_vel(self) -> np.ndarray:
        """``(num_envs, num_dof_vel)`` joint velocities without the floating root."""
        return np.ascontiguousarray(self.get_qvel()[:, self._dof_qvel_sel])

    def _ids(self, body_ids: object) -> np.ndarray:
        if (type(body_ids) is np.ndarray and body_ids.ndim == 1 and body_ids.dtype.kind in "iu"
                and body_ids.size and body_ids.min() >= 0 and body_ids.max() < self.num_bodies):
            return body_ids
        return check_index_array("body_ids", body_ids, self.num_bodies, what="body")

    def get_body_pos_w(self, body_ids: np.ndarray) -> np.ndarray:
        """``(num_envs, len(body_ids), 3)`` world positions, m."""
        return self._body_pos_w(self._ids(body_ids))

    def get_body_quat_w(self, body_ids: np.ndarray) -> np.ndarray:
        """``(num_envs, len(body_ids), 4)`` world orientations, wxyz."""
        return self._body_quat_w(self._ids(body_ids))

    def get_body_lin_vel_w(self, body_ids: np.ndarray) -> np.ndarray:
        """``(num_envs, len(body_ids), 3)`` world linear velocities of body origins, m/s."""
        return self._body_lin_vel_w(self._ids(body_ids))

    def get_body_ang_vel_w(self, body_ids: np.ndarray) -> np.ndarray:
        """``(num_envs, len(body_ids), 3)`` world angular velocities, rad/s."""
        return self._body_ang_vel_w(self._ids(body_ids))

    def get_body_pose_w(self, body_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ids = self._ids(body_ids)
        return self._body_pos_w(ids), self._body_quat_w(ids)

    def get_body_vel_w(self, body_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ids = self._ids(body_ids)
        return self._body_lin_vel_w(ids), self._body_ang_vel_w(ids)

    def get_body_state_w(self, body_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(pos, quat, lin_vel, ang_vel)`` in the world frame."""
        ids = self._ids(body_ids)
        return self._body_pos_w(ids), self._body_quat_w(ids), self._body_lin_vel_w(ids), self._body_ang_vel_w(ids)

    def copy_body_state_w(self, body_ids: np.ndarray, out_pos: np.ndarray, out_quat: np.ndarray,
                          out_lin_vel: np.ndarray, out_ang_vel: np.ndarray):
        """Copy world-frame body state into caller-owned ``np_dtype`` buffers and return them."""
        ids = self._ids(body_ids)
        outs = (("out_pos", out_pos, 3), ("out_quat", out_quat, 4),
                ("out_lin_vel", out_lin_vel, 3), ("out_ang_vel", out_ang_vel, 3))
        for name, buf, width in outs:
            shape = (self._num_envs, len(ids), width)
            if not isinstance(buf, np.ndarray) or buf.shape != shape or buf.dtype != self.np_dtype:
                got = f"{buf.dtype} {buf.shape}" if isinstance(buf, np.ndarray) else type(buf).__name__
                expected = f"a {np.dtype(self.np_dtype)} array of shape {shape}"
                raise InvalidInputError(f"{name}: expected {expected}, got {got}")
            if not buf.flags.writeable:
                raise InvalidInputError(f"{name}: buffer is read-only")
        np.copyto(out_pos, self._body_pos_w(ids))
        np.copyto(out_quat, self._body_quat_w(ids))
        np.copyto(out_lin_vel, self._body_lin_vel_w(ids))
        np.copyto(out_ang_vel, self._body_ang_vel_w(ids))
        return out_pos, out_quat, out_lin_vel, out_ang_vel

    def _rows(self, env_ids: object) -> np.ndarray:
        return check_index_array("env_ids", env_ids, self._num_envs, what="env")

    def get_body_pose_w_rows(self, env_ids: np.ndarray, body_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(pos (k, B, 3), quat (k, B, 4))`` for the env rows ``env_ids``."""
        rows, ids = self._rows(env_ids), self._ids(body_ids)
        return self._body_pos_w(ids)[rows], self._body_quat_w(ids)[rows]

    def get_body_lin_vel_w_rows(self, env_ids: np.ndarray, body_ids: np.ndarray) -> np.ndarray:
        rows, ids = self._rows(env_ids), self._ids(body_ids)
        return self._body_lin_vel_w(ids)[rows]

    def get_body_ang_vel_w_rows(self, env_ids: np.ndarray, body_ids: np.ndarray) -> np.ndarray:
        rows, ids = self._rows(env_ids), self._ids(body_ids)
        return self._body_ang_vel_w(ids)[rows]

    def _base_pose(self) -> tuple[np.ndarray, np.ndarray]:
        base = np.array([self._base_id])
        return self._body_pos_w(base), self._body_quat_w(base)

    def get_body_pos_b(self, body_ids: np.ndarray) -> np.ndarray:
        """``(num_envs, len(body_ids), 3)`` positions relative to the base link, in its frame."""
        ids = self._ids(body_ids)
        bpos, bquat = self._base_pose()
        out = Q.quat_apply_inverse(bquat, self._body_pos_w(ids) - bpos)
        return out.astype(self.np_dtype, copy=False)

    def get_body_quat_b(self, body_ids: np.ndarray) -> np.ndarray:
        """``(num_envs, len(body_ids), 4)`` orientations relative to the base link, wxyz."""
        ids = self._ids(body_ids)
        _, bquat = self._base_pose()
        out = Q.quat_mul(Q.quat_conjugate(bquat), self._body_quat_w(ids))
        return out.astype(self.np_dtype, copy=False)

    def get_body_lin_vel_b(self, body_ids: np.ndarray) -> np.ndarray:
        """``(num_envs, len(body_ids), 3)`` each body's world linear velocity in its own frame."""
        ids = self._ids(body_ids)
        return Q.quat_apply_inverse(self._body_quat_w(ids), self._body_lin_vel_w(ids)).astype(self.np_dtype, copy=False)

    def get_body_ang_vel_b(self, body_ids: np.ndarray) -> np.ndarray:
        """``(num_envs, len(body_ids), 3)`` each body's world angular velocity in its own frame."""
        ids = self._ids(body_ids)
        return Q.quat_apply_inverse(self._body_quat_w(ids), self._body_ang_vel_w(ids)).astype(self.np_dtype, copy=False)
