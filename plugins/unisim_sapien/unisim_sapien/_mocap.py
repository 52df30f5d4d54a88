"""Mocap bodies on PhysX: each is a kinematic actor (``_build._kinematic_actor``, holding its geoms and
its welded descendants'), posed per env through ``bind_mocap_pose``.

A write is visible to the getters at once, as in MuJoCo. The actor itself is moved by kinematic
targets over the next step's substeps, from its pose to the written one at constant velocity
(rotations by slerp; :class:`unisim_physx.KinematicMoves`, shared with ``unisim-isaacsim``), so
a dynamic body it meets is pushed by a body moving at that speed (PhysX's
contact sees the kinematic velocity; a teleported actor would only push it out of the overlap).
MuJoCo places the mocap body at the new pose for the whole next step and reports no velocity for it;
PhysX reports the kinematic velocity of the last substep.
"""

from __future__ import annotations

import numpy as np
import sapien

from unisim_core import SimBackend  # the engine's backend (its _backend module imports this one)
from unisim_core.contract import quat as Q
from unisim_core.contract.bindings import BackendMocapPoseBinding
from unisim_physx import KinematicMoves

__all__ = ["MocapBodies", "PosedLink", "SapienMocapPoseBinding"]


class MocapBodies:
    """The kinematic actors of the mocap bodies, per env, and their moves over the next step
    (:class:`unisim_physx.KinematicMoves`, shared with ``unisim-isaacsim``)."""

    def __init__(self, kinematic: list[dict[int, object]]) -> None:
        self._comps = {m: [env[m] for env in kinematic] for m in (kinematic[0] if kinematic else {})}
        self._row = {m: r for r, m in enumerate(self._comps)}
        self.moves = KinematicMoves(len(self._comps), len(kinematic))

    @property
    def pending(self) -> bool:
        """Whether a pose was written since the last step."""
        return bool(self.moves.pending.any())

    def clear(self) -> None:
        """After a step (or a snapshot restore): the engine's poses are the ones to read."""
        self.moves.clear()

    def write(self, m: int, env_ids: np.ndarray, pos: np.ndarray, quat: np.ndarray) -> None:
        now = [self._comps[m][i].entity_pose for i in env_ids.tolist()]
        self.moves.write(self._row[m], env_ids, pos, quat, np.array([p.p for p in now], dtype=np.float64),
                         np.array([p.q for p in now], dtype=np.float64))

    def pose(self, m: int, env: int) -> sapien.Pose:
        """The pose of mocap body ``m`` in env ``env``: the one written since the last step, or the engine's."""
        r = self._row[m]
        if not self.moves.pending[r, env]:
            return self._comps[m][env].entity_pose
        moves = self.moves
        return sapien.Pose(moves.end_pos[r, env].astype(np.float32), moves.end_quat[r, env].astype(np.float32))

    def substep(self, k: int, nsteps: int) -> None:
        """Kinematic targets for substep ``k`` of ``nsteps``: ``(k + 1) / nsteps`` of the way to the written poses."""
        ids = list(self._comps)
        for r, env_ids, pos, quat in self.moves.targets(k, nsteps):
            comps = self._comps[ids[r]]
            for i, p, q in zip(env_ids.tolist(), pos.astype(np.float32), quat.astype(np.float32)):
                comps[i].set_kinematic_target(sapien.Pose(p, q))

    def component(self, m: int, env: int):
        return self._comps[m][env]


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
    def __init__(self, backend: SimBackend, body_id: int) -> None:
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
