"""Mocap bodies (capability ``mocap``): poses the backend holds per env, for bodies that move nothing.

Genesis' importer attaches a ``mocap="true"`` body to its world link as a fixed link, and Genesis
poses per env only root links (``set_base_links_pos``), so the link cannot follow a per-env pose. A
mocap body that collides with nothing, carries no child body and no equality constraint acts on
nothing in MuJoCo either: its pose is then the backend's own ``(num_envs, k)`` table, which the body
getters, snapshots and the renderer read. Any other mocap body is refused as ``mocap``, naming why.
"""

from __future__ import annotations

import numpy as np

from unisim_core.contract.bindings import BackendMocapPoseBinding
from unisim_core.contract.errors import UnsupportedCapabilityError

__all__ = ["GenesisMocapPoseBinding", "check_mocap_bodies"]


def check_mocap_bodies(m, lite, path: str, name: str) -> np.ndarray:
    """The mocap bodies' ids in mocap order (``ModelInfo.mocap_body_names``); refuses one that acts on
    anything (``m``: MuJoCo's compile of the file)."""
    import mujoco

    bodies = np.flatnonzero(lite.body_mocap)
    colliding = {lite.geoms[g]["body"] for pair in lite.collision_pairs() for g in pair}
    eq_bodies = set()
    for e in range(m.neq):
        for obj in (m.eq_obj1id[e], m.eq_obj2id[e]):
            if m.eq_objtype[e] == mujoco.mjtObj.mjOBJ_SITE:
                eq_bodies.add(int(m.site_bodyid[obj]))
            elif m.eq_objtype[e] == mujoco.mjtObj.mjOBJ_BODY:
                eq_bodies.add(int(obj))
    for b in bodies:
        why = ("collides" if b in colliding else "holds child bodies" if b in lite.body_parent[1:]
               else "is held by an equality constraint" if b in eq_bodies else None)
        if why:
            raise UnsupportedCapabilityError(name, "mocap", f"{path}: mocap body {lite.body_names[b]!r} {why}; "
                                             "Genesis' importer fixes it to the world link, which Genesis cannot "
                                             "pose per env (only root links)")
    return bodies


class GenesisMocapPoseBinding(BackendMocapPoseBinding):
    """One mocap body's pose in the backend's table (``_mocap_pos``/``_mocap_quat``, column ``index``)."""

    def __init__(self, backend, body_name: str, index: int) -> None:
        self._backend = backend
        self._index = index
        self.body_name = body_name
        self.num_envs = backend.num_envs

    def _write(self, env_ids: np.ndarray, pos: np.ndarray, quat: np.ndarray) -> None:
        be = self._backend
        be._check_open()
        be._mocap_pos[env_ids, self._index] = pos
        be._mocap_quat[env_ids, self._index] = quat

    def get(self) -> tuple[np.ndarray, np.ndarray]:
        be = self._backend
        be._check_open()
        return (be._mocap_pos[:, self._index].astype(be.np_dtype),
                be._mocap_quat[:, self._index].astype(be.np_dtype))
