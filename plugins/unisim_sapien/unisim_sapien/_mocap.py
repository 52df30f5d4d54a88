"""Mocap bodies on PhysX: each is a kinematic actor (``_build._kinematic_actor``, holding its geoms and
its welded descendants'), posed per env through ``bind_mocap_pose``.

A write is visible to the getters at once, as in MuJoCo. The actor itself is moved by kinematic
targets over the next step's substeps, from its pose to the written one at constant velocity
(rotations by slerp), so a dynamic body it meets is pushed by a body moving at that speed (PhysX's
contact sees the kinematic velocity; a teleported actor would only push it out of the overlap).
MuJoCo places the mocap body at the new pose for the whole next step and reports no velocity for it;
PhysX reports the kinematic velocity of the last substep.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import sapien

from unisim_core import quat as Q
from unisim_core.bindings import BackendMocapPoseBinding

if TYPE_CHECKING:
    from ._backend import SapienBackend

__all__ = ["MocapBodies", "PosedLink", "SapienMocapPoseBinding"]


class MocapBodies:
    """The kinematic actors of the mocap bodies, per env, and the poses written since the last step."""

    def __init__(self, kinematic: list[dict[int, object]]) -> None:
        self._comps = {m: [env[m] for env in kinematic] for m in (kinematic[0] if kinematic else {})}
        #: per mocap body, per env written since the last step: (pose at the write, pose written)
        self.pending: dict[int, dict[int, tuple[sapien.Pose, sapien.Pose]]] = {}

    def write(self, m: int, env_ids: np.ndarray, pos: np.ndarray, quat: np.ndarray) -> None:
        rows = self.pending.setdefault(m, {})
        for i, p, q in zip(env_ids.tolist(), pos.astype(np.float32), quat.astype(np.float32)):
            start = rows[i][0] if i in rows else self._comps[m][i].entity_pose
            rows[i] = (start, sapien.Pose(p, q))

    def pose(self, m: int, env: int) -> sapien.Pose:
        """The pose of mocap body ``m`` in env ``env``: the one written since the last step, or the engine's."""
        row = self.pending.get(m, {}).get(env)
        return self._comps[m][env].entity_pose if row is None else row[1]

    def substep(self, k: int, nsteps: int) -> None:
        """Kinematic targets for substep ``k`` of ``nsteps``: ``(k + 1) / nsteps`` of the way to the written poses."""
        t = (k + 1) / nsteps
        for m, rows in self.pending.items():
            for i, (start, end) in rows.items():
                self._comps[m][i].set_kinematic_target(end if k == nsteps - 1 else _between(start, end, t))

    def component(self, m: int, env: int):
        return self._comps[m][env]


def _between(a: sapien.Pose, b: sapien.Pose, t: float) -> sapien.Pose:
    """The pose ``t`` of the way from ``a`` to ``b``: position linearly, orientation by slerp."""
    qa, qb = np.asarray(a.q, dtype=np.float64), np.asarray(b.q, dtype=np.float64)
    rel = Q.quat_mul(Q.quat_conjugate(qa), qb)
    if rel[0] < 0.0:
        rel = -rel
    s = float(np.linalg.norm(rel[1:]))
    q = qa if s < 1e-12 else Q.quat_mul(qa, Q.quat_from_axis_angle(rel[1:] / s, t * 2.0 * np.arctan2(s, rel[0])))
    p = np.asarray(a.p, dtype=np.float64) + t * (np.asarray(b.p, dtype=np.float64) - np.asarray(a.p, dtype=np.float64))
    return sapien.Pose(p.astype(np.float32), np.asarray(q, dtype=np.float32))


class PosedLink:
    """A body of a mocap body's kinematic actor, read as the backend reads a link: its pose (the written
    one until the next step), its origin velocity (``cmass_local_pose`` is the origin). A wrench on it is
    dropped: a mocap body has no degrees of freedom (MuJoCo ignores ``xfrc_applied`` there too)."""

    cmass_local_pose = sapien.Pose()

    def __init__(self, mocap: MocapBodies, m: int, env: int, rel: sapien.Pose | None) -> None:
        self._mocap, self._m, self._env, self._rel = mocap, m, env, rel
        self._comp = mocap.component(m, env)

    @property
    def entity_pose(self) -> sapien.Pose:
        pose = self._mocap.pose(self._m, self._env)
        return pose if self._rel is None else pose * self._rel

    @property
    def linear_velocity(self) -> np.ndarray:
        v = np.asarray(self._comp.linear_velocity, dtype=np.float64)
        if self._rel is None:
            return v
        arm = Q.quat_apply(np.asarray(self._comp.entity_pose.q, dtype=np.float64), np.asarray(self._rel.p))
        return v + np.cross(np.asarray(self._comp.angular_velocity, dtype=np.float64), arm)

    @property
    def angular_velocity(self) -> np.ndarray:
        return self._comp.angular_velocity

    def add_force_at_point(self, *_args) -> None:
        return None

    def add_force_torque(self, *_args) -> None:
        return None


class SapienMocapPoseBinding(BackendMocapPoseBinding):
    def __init__(self, backend: SapienBackend, body_id: int) -> None:
        self._backend, self._m = backend, body_id
        self.body_name = backend.model_info.body_names[body_id]
        self.num_envs = backend.num_envs

    def _write(self, env_ids: np.ndarray, pos: np.ndarray, quat: np.ndarray) -> None:
        be = self._backend
        be._check_open()
        be._mocap.write(self._m, env_ids, pos, quat)
        be._stale()

    def get(self) -> tuple[np.ndarray, np.ndarray]:
        mocap, dt = self._backend._mocap, self._backend.np_dtype
        poses = [mocap.pose(self._m, i) for i in range(self.num_envs)]
        return np.array([p.p for p in poses], dtype=dt), np.array([p.q for p in poses], dtype=dt)
