"""The site Jacobian, computed once for every engine from the model tables and the contract's state.

:func:`site_jacobian` gives MuJoCo's ``mj_jacSite``: world-frame ``(jacp, jacr)``, each
``(num_envs, 3, len(dof_indices))``, such that the site's world linear velocity is ``jacp @ qvel`` and
its body's world angular velocity ``jacr @ qvel``, in MuJoCo's ``qvel`` conventions: a free joint's
first three columns are the world linear velocity of the body origin, its last three the angular
velocity in the body frame, as a ball joint's three. Per joint of the site's body and its ancestors
(world anchor ``x``, world axis ``a``, body rotation ``R``, site position ``p``):

======  =======================================  ==================================
joint   ``jacp`` columns                         ``jacr`` columns
======  =======================================  ==================================
hinge   ``a x (p - x)``                          ``a``
slide   ``a``                                    0
ball    ``R e_i x (p - x)``, i = 0..2            ``R e_i``
free    ``e_i`` then ``R e_i x (p - x)``         0 then ``R e_i``
======  =======================================  ==================================

The anchors and axes come from the bodies' world poses (``_body_pos_w``/``_body_quat_w``) and
``ModelInfo.joint_pos``/``joint_axis``/``site_pos`` (body frame). A body with several joints is
unwound from its final pose joint by joint (last first) with ``qpos``, as MuJoCo composes them.

A backend opts in with one line: ``_site_jacobian = site_jacobian`` (and ``SITE_JACOBIAN`` in its
``CAPABILITIES``); ``ModelInfo`` must carry the three tables (``mjcf_lite`` and MuJoCo's tables do).
"""

from __future__ import annotations

import numpy as np

from unisim_core.contract import quat as Q
from unisim_core.contract._typing import Backend
from unisim_core.contract.errors import UnsupportedCapabilityError

__all__ = ["site_jacobian"]


def _chain(backend: Backend, site_id: int) -> tuple[np.ndarray, list[tuple[int, list[int]]]]:
    """``(bodies, [(body row, joints of that body, in model order)])`` from the site's body up to the
    world (cold path, cached on the backend)."""
    cache = backend.__dict__.setdefault("_site_jacobian_chains", {})
    if site_id not in cache:
        info = backend.model_info
        missing = [f for f in ("joint_pos", "joint_axis", "site_pos") if getattr(info, f) is None]
        if missing:
            raise UnsupportedCapabilityError(backend._label, "site_jacobian",
                                             f"its ModelInfo lacks {missing} (the shared site Jacobian needs them)")
        joints_of: dict[int, list[int]] = {}
        for j, b in enumerate(info.joint_body):
            joints_of.setdefault(int(b), []).append(j)
        bodies, b = [], int(info.site_body[site_id])
        while b != 0:
            bodies.append(b)
            b = int(info.body_parent[b])
        links = [(row, joints_of[b]) for row, b in enumerate(bodies) if b in joints_of]
        cache[site_id] = (np.array(bodies, dtype=np.int64), links)
    return cache[site_id]


def site_jacobian(backend: Backend, site_id: int, dof_indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(jacp, jacr)`` ``(num_envs, 3, len(dof_indices))`` world-frame Jacobians of site ``site_id``
    w.r.t. the ``qvel`` columns ``dof_indices``, in ``backend.np_dtype`` (see the module docstring)."""
    info = backend.model_info
    bodies, links = _chain(backend, site_id)
    n = backend.num_envs
    jacp, jacr = np.zeros((n, 3, info.nv)), np.zeros((n, 3, info.nv))
    if len(bodies):
        pos = np.asarray(backend._body_pos_w(bodies), dtype=np.float64)  # (n, k, 3)
        quat = np.asarray(backend._body_quat_w(bodies), dtype=np.float64)
        rot0 = Q.matrix_from_quat(quat[:, 0])
        site = pos[:, 0] + np.einsum("nij,j->ni", rot0, info.site_pos[site_id])
        qpos = backend.get_qpos().astype(np.float64) if any(len(js) > 1 for _, js in links) else None
        for row, joints in links:
            x, q = pos[:, row], quat[:, row]  # the body's pose after its joints; unwound last joint first
            for j in reversed(joints):
                R = Q.matrix_from_quat(q)
                kind, d = info.joint_types[j], int(info.joint_dofadr[j])
                anchor = x + np.einsum("nij,j->ni", R, info.joint_pos[j])
                axis = np.einsum("nij,j->ni", R, info.joint_axis[j])
                if kind == "hinge":
                    jacp[:, :, d] = np.cross(axis, site - anchor)
                    jacr[:, :, d] = axis
                elif kind == "slide":
                    jacp[:, :, d] = axis
                else:  # ball, free: angular velocity in the body frame
                    rot = d + (3 if kind == "free" else 0)
                    columns = R.transpose(0, 2, 1)  # R e_i, row i
                    jacr[:, :, rot:rot + 3] = R
                    jacp[:, :, rot:rot + 3] = np.cross(columns, (site - anchor)[:, None, :]).transpose(0, 2, 1)
                    if kind == "free":
                        jacp[:, :, d:d + 3] = np.eye(3)
                if qpos is not None and len(joints) > 1:  # the pose before joint j (a multi-joint body)
                    a = int(info.joint_qposadr[j])
                    if kind == "hinge":
                        q = Q.quat_mul(q, Q.quat_from_axis_angle(info.joint_axis[j], -qpos[:, a]))
                        x = anchor - np.einsum("nij,j->ni", Q.matrix_from_quat(q), info.joint_pos[j])
                    elif kind == "slide":
                        x = x - axis * qpos[:, a:a + 1]
                    else:
                        q = Q.quat_mul(q, Q.quat_conjugate(qpos[:, a:a + 4]))
                        x = anchor - np.einsum("nij,j->ni", Q.matrix_from_quat(q), info.joint_pos[j])
    dofs = np.asarray(dof_indices)
    return (np.ascontiguousarray(jacp[:, :, dofs], dtype=backend.np_dtype),
            np.ascontiguousarray(jacr[:, :, dofs], dtype=backend.np_dtype))
