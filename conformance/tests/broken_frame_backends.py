"""Broken backends (fake subclasses) for the frame and array checks of kit rules 3 (and one float32
engine that is not broken).

Referenced by ``test_kit_frames.py`` as ``broken_frame_backends:Name``; ``EXPECTED`` maps each
class to the layer it is run on, the check ids it must fail and ids of the same scenario it must
still pass (one property per id: a bug in one property does not mask the others).
"""

from __future__ import annotations

import numpy as np

from unisim_core.contract import quat as Q
from unisim_core.plugin.fake import FakeBackend


class LinkComVelocity(FakeBackend):
    """Reports the centre-of-mass velocity of every body that is not a free root (its root is right);
    written against kit rules 2, before the link velocity check."""

    name = "broken_link_com_velocity"
    KIT_RULES = 2

    def _body_lin_vel_w(self, body_ids):
        v = super()._body_lin_vel_w(body_ids)
        links = np.array([self.model_info.body_parent[b] != 0 for b in np.atleast_1d(body_ids)])
        com = Q.quat_apply(super()._body_quat_w(body_ids), np.broadcast_to(self._ipos[body_ids], v.shape))
        return (v + links[:, None] * np.cross(super()._body_ang_vel_w(body_ids), com)).astype(v.dtype)


class QposView(FakeBackend):
    """get_qpos casts its float64 state with ``copy=False``: a fresh float32 array by default, a view of
    the live state under ``np_dtype=float64``."""

    name = "broken_qpos_view"

    def get_qpos(self):
        return self._qpos.astype(self.np_dtype, copy=False)


class DofPosFloat64(FakeBackend):
    """get_dof_pos returns float64 whatever np_dtype is (the engine's own precision)."""

    name = "broken_dof_pos_float64"

    def get_dof_pos(self):
        return np.ascontiguousarray(super().get_dof_pos(), dtype=np.float64)


class Float32Engine(FakeBackend):
    """Not broken: keeps its state in float32 precision whatever np_dtype is (a float32 engine that
    accepts np_dtype=float64); the kit must measure that and use float32 tolerances."""

    name = "float32_engine"

    def _set_state(self, env_ids, qpos, qvel):
        super()._set_state(env_ids, qpos.astype(np.float32).astype(np.float64),
                           qvel.astype(np.float32).astype(np.float64))


EXPECTED = {
    "LinkComVelocity": ("dynamics", ["dynamics::link_velocity_at_frame_origin[lin_w]",
                                     "dynamics::link_velocity_at_frame_origin[lin_b]"],
                        ["dynamics::link_velocity_at_frame_origin[ang_w]",
                         "dynamics::link_velocity_at_frame_origin[ang_b]",
                         "dynamics::body_velocity_at_frame_origin[root_lin_w]"]),
    "QposView": ("surface", ["surface::getters_return_fresh_arrays[float64-get_qpos]"],
                 ["surface::getters_return_fresh_arrays[quadruped-get_qpos]",
                  "surface::getters_return_fresh_arrays[float64-get_base_pos]"]),
    "DofPosFloat64": ("surface", ["surface::getter_shapes_dtypes[quadruped-dtype]"],
                      ["surface::getter_shapes_dtypes[quadruped-shape]"]),
}
