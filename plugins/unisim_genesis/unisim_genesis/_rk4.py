"""MuJoCo's ``RK4`` integrator over Genesis' forward dynamics.

Genesis integrates with Euler or implicitfast only. MuJoCo's ``mj_RungeKutta`` (4 stages, Butcher
``A = diag(1/2, 1/2, 1)``, ``B = (1/6, 1/3, 1/3, 1/6)``, explicit in everything) needs the acceleration
``qacc(q, v)`` at each stage's state, constraints included. One Genesis Euler step from ``(q, v)``
gives it: Genesis' Euler makes joint damping implicit, ``(M + h D) a' = M a`` with ``a`` the
constraint solver's acceleration, and ``v' = v + h a'``; so ``a = a' + h M^-1 D a'`` with ``M`` the mass
matrix (armature included) at ``q`` (``get_mass_mat``) and ``D`` the dof damping (equal to MuJoCo's
``mj_forward`` ``qacc`` to ~1e-13 on a damped, actuated double pendulum). Positions advance as
``mj_integratePos``: hinge and slide ``q + v h``, a free joint's position by its world velocity and its
quaternion by its body-frame angular velocity (``mju_quatIntegrate``).
"""

from __future__ import annotations

import numpy as np

from unisim_core.contract import quat as Q

__all__ = ["integrate_pos", "STAGES", "WEIGHTS"]

#: Stage offsets (MuJoCo's ``A`` diagonal) and final weights (``B``).
STAGES = (0.5, 0.5, 1.0)
WEIGHTS = (1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0)


def integrate_pos(qpos: np.ndarray, qvel: np.ndarray, h: float, joints: list[dict]) -> np.ndarray:
    """MuJoCo's ``mj_integratePos``: ``qpos (n, nq)`` advanced by ``qvel (n, nv)`` over ``h`` s (MuJoCo layout;
    ``joints``: ``mjcf_lite`` rows with ``type qposadr dofadr``)."""
    out = qpos.copy()
    for j in joints:
        qa, va = j["qposadr"], j["dofadr"]
        if j["type"] in ("hinge", "slide"):
            out[:, qa] += h * qvel[:, va]
            continue
        if j["type"] == "free":
            out[:, qa:qa + 3] += h * qvel[:, va:va + 3]
            qa, va = qa + 3, va + 3
        out[:, qa:qa + 4] = _quat_integrate(out[:, qa:qa + 4], qvel[:, va:va + 3], h)
    return out


def _quat_integrate(quat: np.ndarray, omega: np.ndarray, h: float) -> np.ndarray:
    """``mju_quatIntegrate``: ``quat (n, 4)``, normalised, then rotated by the body-frame angular velocity
    ``omega (n, 3)`` over ``h``."""
    norm = np.linalg.norm(omega, axis=1)
    axis = np.where(norm[:, None] > 0, omega / np.where(norm > 0, norm, 1.0)[:, None], [1.0, 0.0, 0.0])
    return Q.quat_mul(Q.quat_normalize(quat), Q.quat_from_axis_angle(axis, norm * h))
