"""Model metadata of the contract, derived from ``ModelInfo``: ``model_info``, the sizes (``nq``,
``nv``, ``num_dof``, …), name resolution, joint index helpers and model tables.

Mixed into :class:`~unisim_core.contract.backend.SimBackend`, which provides ``_load_model_info``. The name
indexes (``_body_index``, ``_joint_index``, …) and the floating-root layout are built from
``model_info`` on first use. Cold path: call these once and keep the ids and tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from unisim_core.contract.capabilities import Capability
from unisim_core.contract.config import BackendRootStateLayout
from unisim_core.contract.errors import InvalidInputError, InvalidTypeError, UnknownNameError
from unisim_core.contract.model import ModelInfo
from unisim_core.contract.validation import check_int, check_names

__all__ = ["ModelQueries"]

#: Attributes ``_index_model`` builds from ``model_info`` (on first use, through ``__getattr__``).
_INDEX_ATTRS = frozenset({
    "_body_index", "_joint_index", "_actuator_index", "_sensor_index", "_site_index", "_geom_index",
    "_sensor_dims", "_base_id", "_root_joint", "_root_q", "_root_v", "_dof_qpos_cols", "_dof_qvel_cols",
    "_dof_qpos_sel", "_dof_qvel_sel", "_single_dof_joints", "_quat_cols", "_clears_forces", "_ctrl_shape",
})


class ModelQueries:
    """``model_info`` and sizes, name → id resolution, joint index helpers, model tables (``np_dtype`` copies)."""

    # model info and sizes ---------------------------------------------------------
    @property
    def model_info(self) -> ModelInfo:
        """Engine-neutral model tables (built once)."""
        if self._info is None:
            self._info = self._load_model_info()
            self._index_model(self._info)
        return self._info

    def _index_model(self, info: ModelInfo) -> None:
        def index(names: Sequence[str]) -> dict[str, int]:
            return {n: i for i, n in enumerate(names) if n}

        self._body_index = index(info.body_names)
        self._joint_index = index(info.joint_names)
        self._actuator_index = index(info.actuator_names)
        self._sensor_index = index(info.sensor_names)
        self._site_index = index(info.site_names)
        self._geom_index = index(info.geom_names)
        self._sensor_dims = info.sensor_dims
        # base link and floating root
        if self.options.base_name is not None:
            self._base_id = self._lookup(self._body_index, self.options.base_name, "body", "base_name")
        else:
            roots = [int(info.joint_body[j]) for j, t in enumerate(info.joint_types)
                     if t == "free" and info.body_parent[info.joint_body[j]] == 0]
            self._base_id = roots[0] if roots else (1 if len(info.body_names) > 1 else 0)
        self._root_joint = next(
            (j for j, t in enumerate(info.joint_types) if t == "free" and info.joint_body[j] == self._base_id), None
        )
        if self._root_joint is not None:
            qa, va = int(info.joint_qposadr[self._root_joint]), int(info.joint_dofadr[self._root_joint])
            self._root_q, self._root_v = qa, va
            self._dof_qpos_cols = np.array([c for c in range(info.nq) if not qa <= c < qa + 7], np.int64)
            self._dof_qvel_cols = np.array([c for c in range(info.nv) if not va <= c < va + 6], np.int64)
        else:
            self._root_q = self._root_v = None
            self._dof_qpos_cols = np.arange(info.nq, dtype=np.int64)
            self._dof_qvel_cols = np.arange(info.nv, dtype=np.int64)
        self._dof_qpos_sel = _as_slice(self._dof_qpos_cols)
        self._dof_qvel_sel = _as_slice(self._dof_qvel_cols)
        self._single_dof_joints = [j for j, t in enumerate(info.joint_types) if t in ("hinge", "slide")]
        self._clears_forces = Capability.BODY_FORCE in self.capabilities
        self._ctrl_shape = (self._num_envs, len(info.actuator_names))
        self._quat_cols = [(int(info.joint_qposadr[j]) + (3 if t == "free" else 0))
                           for j, t in enumerate(info.joint_types) if t in ("free", "ball")]

    def __getattr__(self, name: str) -> Any:
        # The name tables and root layout are built from ``model_info`` on first use.
        if name in _INDEX_ATTRS and self.__dict__.get("_info") is None and "_num_envs" in self.__dict__:
            self.model_info  # noqa: B018
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _lookup(self, table: Mapping[str, int], name: str, what: str, arg: str = "names") -> int:
        if not isinstance(name, str):
            raise InvalidTypeError(f"{arg}: expected a {what} name (str), got {type(name).__name__} {name!r}")
        try:
            return table[name]
        except KeyError:
            known = sorted(table)
            shown = ", ".join(known[:12]) + (", …" if len(known) > 12 else "")
            raise UnknownNameError(f"{arg}: unknown {what} {name!r}; known {what}s: {shown}") from None

    def _lookup_many(self, table: Mapping[str, int], names: Sequence[str], what: str) -> np.ndarray:
        names = check_names("names", names)
        return np.array([self._lookup(table, n, what) for n in names], dtype=np.int32)

    @property
    def model(self) -> Any:
        """Underlying physics model (engine-native where the backend exposes one)."""
        return self.model_info

    @property
    def num_envs(self) -> int:
        return self._num_envs

    @property
    def nq(self) -> int:
        return self.model_info.nq

    @property
    def nv(self) -> int:
        return self.model_info.nv

    @property
    def num_actuators(self) -> int:
        return len(self.model_info.actuator_names)

    @property
    def num_dof(self) -> int:
        """Joint position columns excluding the floating root."""
        return len(self._dof_qpos_cols)

    @property
    def num_dof_vel(self) -> int:
        """Joint velocity DoFs excluding the floating root."""
        return len(self._dof_qvel_cols)

    @property
    def num_bodies(self) -> int:
        return len(self.model_info.body_names)

    @property
    def base_body_id(self) -> int:
        return self._base_id


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

    def get_joint_range(self, names: Sequence[str] | None = None) -> np.ndarray:
        """``(num single-DoF joints, 2)`` ``[low, high]`` in DoF order (±inf when unlimited); with
        ``names``, those joints' rows in that order."""
        table = self.model_info.joint_range[self._single_dof_joints].reshape(-1, 2)
        if names is not None:
            table = table[self.get_joint_dof_pos_indices(names)]
        return self._table(table)

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


def _as_slice(cols: np.ndarray) -> slice | np.ndarray:
    """A contiguous ascending column set as a slice (views instead of fancy-index copies)."""
    if len(cols) == 0:
        return slice(0, 0)
    if np.all(np.diff(cols) == 1):
        return slice(int(cols[0]), int(cols[-1]) + 1)
    return cols
