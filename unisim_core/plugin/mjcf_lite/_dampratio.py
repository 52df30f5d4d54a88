"""``<position dampratio>``: the velocity gain MuJoCo's compiler derives from the model at ``qpos0``.

MuJoCo (``mj_setConst``) turns a damping ratio ``zeta`` into ``kv = zeta * 2 * sqrt(kp * m)``, where
``m = 1 / (J M^-1 J^T)`` is the inertia the actuator sees: ``M`` the joint-space mass matrix at
``qpos0`` (armature on its diagonal) and ``J`` the actuator's moment (``gear`` on its joint's dof, or ``gear``
times the coefficients of its fixed tendon's joints).
At ``qpos0`` every body sits where the file puts it (a hinge or slide moves by ``qpos - qpos0``), so
``M`` follows from the reader's tables alone: ``M = sum_b m_b Jv_b^T Jv_b + Jw_b^T I_b Jw_b`` over the
bodies, with ``Jv_b``/``Jw_b`` the linear (at the COM) and angular Jacobians of body ``b``.
"""

from __future__ import annotations

import numpy as np

from unisim_core.contract import quat as Q

__all__ = ["mass_matrix0", "resolve_dampratio"]

_MJ_MINVAL = 1e-15  # MuJoCo's mjMINVAL: a smaller inverse weight gives kv = 0


def mass_matrix0(m) -> np.ndarray:
    """MuJoCo's joint-space mass matrix ``(nv, nv)`` of ``m`` (a ``LiteModel``) at ``qpos0``, armature included."""
    pos, quat = m.body_frames0()
    rot = Q.matrix_from_quat(quat)
    nbody = len(m.body_names)
    com = np.array([pos[b] + rot[b] @ m.body_ipos[b] for b in range(nbody)])
    # the dofs moving each body: its own joints and those of its ancestors
    jv, jw = np.zeros((nbody, 3, m.nv)), np.zeros((nbody, 3, m.nv))
    for j in m.joints:
        b, d, R = j["body"], j["dofadr"], rot[j["body"]]
        anchor, axis = pos[b] + R @ j["pos"], R @ j["axis"]
        moved = [c for c in range(nbody) if _descends(m, c, b)]
        for c in moved:
            if j["type"] == "hinge":
                jv[c, :, d], jw[c, :, d] = np.cross(axis, com[c] - anchor), axis
            elif j["type"] == "slide":
                jv[c, :, d] = axis
            else:  # free (translation in the world, then rotation in the body frame) and ball
                rd = d + (3 if j["type"] == "free" else 0)
                if j["type"] == "free":
                    jv[c, :, d:d + 3] = np.eye(3)
                jw[c, :, rd:rd + 3] = R
                jv[c, :, rd:rd + 3] = np.cross(R.T, com[c] - anchor).T
    M = np.zeros((m.nv, m.nv))
    for c in range(1, nbody):
        Ri = rot[c] @ Q.matrix_from_quat(m.body_iquat[c])
        inertia = Ri @ np.diag(m.body_inertia[c]) @ Ri.T
        M += m.body_mass[c] * jv[c].T @ jv[c] + jw[c].T @ inertia @ jw[c]
    armature = np.array([j["armature"] for j in m.joints for _ in range({"free": 6, "ball": 3}.get(j["type"], 1))])
    return M + np.diag(armature)


def _descends(m, c: int, b: int) -> bool:
    """Whether body ``c`` is ``b`` or below it."""
    while c and c != b:
        c = m.body_parent[c]
    return c == b


def resolve_dampratio(m) -> None:
    """Set ``kv`` of every actuator of ``m`` that holds a ``dampratio`` (MuJoCo's rule, module docstring)."""
    acts = [a for a in m.actuators if a.get("dampratio")]
    if not acts:
        return
    minv = np.linalg.inv(mass_matrix0(m))
    for a in acts:
        moment = np.zeros(len(minv))  # the transmission's d(length)/d(qvel) without gear
        if a.get("tendon", -1) >= 0:
            t = m.tendons[a["tendon"]]
            for j, c in zip(t["joints"], t["coef"]):
                moment[m.joints[j]["dofadr"]] += c
        else:
            moment[m.joints[a["joint"]]["dofadr"]] = 1.0
        inv_weight = a["gear"] ** 2 * float(moment @ minv @ moment)
        mass = 1.0 / inv_weight if inv_weight > _MJ_MINVAL else 0.0
        a["kv"] = a["dampratio"] * 2.0 * np.sqrt(a["kp"] * mass)
