"""Name resolution and model tables of the contract, derived from ``ModelInfo``.

Mixed into :class:`~unisim_core.backend.SimBackend`, whose ``model_info`` and name indexes
(``_body_index``, ``_joint_index``, …) these methods read. Cold path: call them once and
keep the ids and tables.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .config import BackendRootStateLayout
from .errors import InvalidInputError, UnknownNameError
from .validation import check_int, check_names

__all__ = ["ModelQueries"]


class ModelQueries:
    """Name → id resolution, joint index helpers and model tables (``np_dtype`` copies)."""

    # name resolution ----------------------------------------------------------------
    def get_body_ids(self, names: Sequence[str]) -> np.ndarray:
        """``int32 (len(names),)`` body ids. Unknown names raise ``UnknownNameError``."""
        return self._lookup_many(self._body_index, names, "body")

    def get_motion_body_ids(self, names: Sequence[str]) -> np.ndarray:
        """Body ids used by motion datasets (same ids as ``get_body_ids``)."""
        return self.get_body_ids(names)

    def get_site_ids(self, names: Sequence[str]) -> np.ndarray:
        return self._lookup_many(self._site_index, names, "site")

    def get_geom_id(self, name: str) -> int:
        return self._lookup(self._geom_index, name, "geom", "name")

    def _single_dof_joint(self, name: str) -> int:
        j = self._lookup(self._joint_index, name, "joint")
        jtype = self.model_info.joint_types[j]
        if jtype not in ("hinge", "slide"):
            raise InvalidInputError(
                f"names: joint {name!r} is a {jtype} joint; only hinge/slide joints have a DoF index"
            )
        return j

    def get_joint_state_qpos_indices(self, names: Sequence[str]) -> np.ndarray:
        """Full-``qpos`` columns (as accepted by ``set_state``) of single-DoF joints."""
        info = self.model_info
        return np.array([info.joint_qposadr[self._single_dof_joint(n)] for n in check_names("names", names)],
                        dtype=np.int32)

    def get_joint_state_qvel_indices(self, names: Sequence[str]) -> np.ndarray:
        """Full-``qvel`` columns of single-DoF joints."""
        info = self.model_info
        return np.array([info.joint_dofadr[self._single_dof_joint(n)] for n in check_names("names", names)],
                        dtype=np.int32)

    def get_joint_dof_pos_indices(self, names: Sequence[str]) -> np.ndarray:
        """Columns of ``get_dof_pos`` (qpos without the root) of single-DoF joints."""
        full = self.get_joint_state_qpos_indices(names)
        return np.searchsorted(self._dof_qpos_cols, full).astype(np.int32)

    def get_joint_dof_vel_indices(self, names: Sequence[str]) -> np.ndarray:
        """Columns of ``get_dof_vel`` (qvel without the root) of single-DoF joints."""
        full = self.get_joint_state_qvel_indices(names)
        return np.searchsorted(self._dof_qvel_cols, full).astype(np.int32)

    def get_joint_dof_indices(self, names: Sequence[str]) -> np.ndarray:
        """Alias of ``get_joint_dof_vel_indices`` (velocity-space DoF indices)."""
        return self.get_joint_dof_vel_indices(names)

    def get_actuator_names(self) -> tuple[str, ...]:
        return self.model_info.actuator_names

    def get_actuator_joint_names(self) -> tuple[str, ...]:
        """Each actuator's target hinge/slide joint, in control order; fails closed otherwise."""
        info = self.model_info
        out = []
        for a, j in enumerate(info.actuator_joint):
            if j < 0 or info.joint_types[j] not in ("hinge", "slide"):
                raise InvalidInputError(
                    f"actuator {info.actuator_names[a]!r} does not target exactly one hinge/slide joint"
                )
            out.append(info.joint_names[j])
        return tuple(out)

    # model tables ---------------------------------------------------------------------
    def _table(self, arr: np.ndarray) -> np.ndarray:
        return np.array(arr, dtype=self.np_dtype, copy=True)

    def get_actuator_ctrl_range(self) -> np.ndarray:
        """``(num_actuators, 2)`` ``[low, high]`` (±inf when unlimited)."""
        return self._table(self.model_info.actuator_ctrl_range)

    def get_joint_range(self) -> np.ndarray:
        """``(num single-DoF joints, 2)`` ``[low, high]`` in DoF order (±inf when unlimited)."""
        return self._table(self.model_info.joint_range[self._single_dof_joints].reshape(-1, 2))

    def get_actuator_gains(self) -> tuple[np.ndarray, np.ndarray]:
        """``(kp, kd)``, each ``(num_actuators,)``."""
        return self._table(self.model_info.actuator_kp), self._table(self.model_info.actuator_kd)

    def get_body_mass(self) -> np.ndarray:
        """``(num_bodies,)`` nominal masses, kg."""
        return self._table(self.model_info.body_mass)

    def get_body_ipos(self) -> np.ndarray:
        """``(num_bodies, 3)`` nominal COM positions in body frames, m."""
        return self._table(self.model_info.body_ipos)

    def get_body_subtree_ids(self, root_body_id: int) -> np.ndarray:
        """``int32`` ids of ``root_body_id`` and all its descendants, ascending."""
        parent = self.model_info.body_parent
        root = check_int("root_body_id", root_body_id, 0, len(parent) - 1)
        inside = np.zeros(len(parent), dtype=bool)
        inside[root] = True
        for b in range(root + 1, len(parent)):  # MuJoCo orders bodies depth-first
            inside[b] = inside[parent[b]] and b != parent[b]
        return np.flatnonzero(inside).astype(np.int32)

    def get_geom_names(self) -> tuple[str, ...]:
        return self.model_info.geom_names

    def get_geom_size(self, name: str) -> np.ndarray:
        return self._table(self.model_info.geom_size[self.get_geom_id(name)])

    def get_geom_body_ids(self) -> np.ndarray:
        return self.model_info.geom_body.astype(np.int32)

    def get_geom_contact_masks(self) -> tuple[np.ndarray, np.ndarray]:
        """``(contype, conaffinity)`` bitmasks, each ``(num_geoms,)`` int32."""
        info = self.model_info
        return info.geom_contype.astype(np.int32), info.geom_conaffinity.astype(np.int32)

    def get_geom_friction(self) -> np.ndarray:
        """``(num_geoms, 3)`` sliding, torsional, rolling friction."""
        return self._table(self.model_info.geom_friction)

    def get_geom_solref(self) -> np.ndarray:
        return self._table(self.model_info.geom_solref)

    def get_geom_solimp(self) -> np.ndarray:
        return self._table(self.model_info.geom_solimp)

    def get_gravity(self) -> np.ndarray:
        """``(3,)`` world gravity, m/s²."""
        return self._table(self.model_info.gravity)

    def get_keyframe_qpos(self, name: str) -> np.ndarray:
        """``(nq,)`` qpos of a named keyframe, including the floating root."""
        keys = self.model_info.keyframes
        if not isinstance(name, str) or name not in keys:
            raise UnknownNameError(f"name: unknown keyframe {name!r}; known keyframes: {sorted(keys)}")
        return self._table(keys[name])

    def get_default_qpos(self) -> np.ndarray:
        """``(nq,)`` the scene's default keyframe, or the model's ``qpos0``."""
        if self.scene.default_keyframe is not None:
            return self.get_keyframe_qpos(self.scene.default_keyframe)
        return self._table(self.model_info.qpos0)

    def get_default_dof_pos(self) -> np.ndarray:
        """``(num_dof,)`` default joint positions in ``get_dof_pos`` column order."""
        return np.ascontiguousarray(self.get_default_qpos()[self._dof_qpos_cols])

    def get_init_qvel(self) -> np.ndarray:
        """``(nv,)`` zeros."""
        return np.zeros(self.nv, dtype=self.np_dtype)

    def get_root_state_layout(self, root_body_name: str) -> BackendRootStateLayout:
        """qpos/qvel columns of the free joint owned by ``root_body_name``; fails closed otherwise."""
        info = self.model_info
        b = self._lookup(self._body_index, root_body_name, "body", "root_body_name")
        joints = [j for j, t in enumerate(info.joint_types) if t == "free" and info.joint_body[j] == b]
        if not joints:
            raise InvalidInputError(f"root_body_name: body {root_body_name!r} has no free joint (fixed base)")
        j = joints[0]
        return BackendRootStateLayout(body_name=root_body_name, body_id=b, joint_name=info.joint_names[j],
                                      qpos_start=int(info.joint_qposadr[j]), qvel_start=int(info.joint_dofadr[j]))
