"""MJCF sensors computed from link states (capability ``sensors``; numpy only, used by the worker).

PhysX has no MJCF sensors; the worker computes the ones the scene's reader accepts
(:data:`unisim_core.plugin.mjcf_lite._model.SENSOR_DIMS`: the others are refused by name, ``<tag>_sensor``,
before Isaac Sim starts) from what Isaac Lab's ``ArticulationData`` reports per link, exactly as
MuJoCo defines them:

- ``jointpos`` / ``jointvel``: the joint's ``qpos`` / ``qvel`` (contract layout);
- ``framepos`` / ``framequat``: the frame object's world position (relative to the env origin, as
  every contract position) and orientation (wxyz) — a ``site`` at its offset in its body's frame,
  ``xbody`` the body frame, ``body`` its inertial frame (:meth:`LiteModel.frame_offset`);
- ``framelinvel`` / ``frameangvel``: world-frame velocity of the site's point and its body's angular
  velocity;
- ``gyro``: the body's angular velocity in the site's frame;
- ``velocimeter``: the site point's linear velocity in the site's frame;
- ``accelerometer``: the site point's linear acceleration minus gravity, in the site's frame:
  ``R_s^T (a_c + alpha x r + w x (w x r) - g)``, ``r`` from the body's centre of mass to the site,
  ``a_c`` the COM's linear and ``alpha`` the body's angular acceleration (Isaac Lab's
  ``body_com_acc_w``, PhysX's ``get_link_accelerations``).

Inputs are per MuJoCo body (body 0 the world): link origin position and wxyz orientation, the
origin's linear velocity and the angular velocity (world frame), the COM's world position and the
COM's linear and angular accelerations (world frame).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from unisim_core.contract import quat as Q

__all__ = ["SiteSensors"]


def _rot_t(quat: np.ndarray, v: np.ndarray) -> np.ndarray:
    return Q.quat_apply_inverse(quat, v)


class SiteSensors:
    """The model's sensors, in model order, from per-body state (see the module docstring)."""

    def __init__(self, lite: Any) -> None:
        self._specs = []
        for s in lite.sensors:
            body, pos, quat = (lite.frame_offset(s["objtype"], s["obj"]) if s["objtype"] != "joint"
                               else (0, np.zeros(3), np.array([1.0, 0, 0, 0])))
            adr = (lite.joints[s["obj"]]["qposadr"] if s["type"] == "jointpos" else
                   lite.joints[s["obj"]]["dofadr"] if s["type"] == "jointvel" else -1)
            self._specs.append((s["type"], int(body), np.asarray(pos, np.float64), np.asarray(quat, np.float64),
                                int(adr)))
        self.dims = [{"framequat": 4, "jointpos": 1, "jointvel": 1}.get(t, 3) for t, *_ in self._specs]

    def read(self, *, qpos: np.ndarray, qvel: np.ndarray, pos: np.ndarray, quat: np.ndarray, lin_vel: np.ndarray,
             ang_vel: np.ndarray, com: np.ndarray, com_acc: np.ndarray, ang_acc: np.ndarray,
             gravity: np.ndarray) -> np.ndarray:
        """``(n, sum of dims)`` float64. Body tables ``(n, nbody, 3|4)``, world frame (``pos`` and
        ``com`` relative to the env origin); ``gravity (3,)`` or ``(n, 3)`` m/s²."""
        n = qpos.shape[0]
        out = np.zeros((n, sum(self.dims)))
        col = 0
        for (kind, b, off, qoff, adr), dim in zip(self._specs, self.dims):
            if kind == "jointpos":
                value = qpos[:, adr:adr + 1]
            elif kind == "jointvel":
                value = qvel[:, adr:adr + 1]
            else:
                qb = quat[:, b]
                site = pos[:, b] + Q.quat_apply(qb, np.broadcast_to(off, (n, 3)))
                qs = Q.quat_mul(qb, np.broadcast_to(qoff, (n, 4)))
                w = ang_vel[:, b]
                v = lin_vel[:, b] + np.cross(w, site - pos[:, b])
                if kind == "framepos":
                    value = site
                elif kind == "framequat":
                    value = qs
                elif kind == "framelinvel":
                    value = v
                elif kind == "frameangvel":
                    value = w
                elif kind == "gyro":
                    value = _rot_t(qs, w)
                elif kind == "velocimeter":
                    value = _rot_t(qs, v)
                else:  # accelerometer
                    r = site - com[:, b]
                    acc = com_acc[:, b] + np.cross(ang_acc[:, b], r) + np.cross(w, np.cross(w, r))
                    value = _rot_t(qs, acc - np.broadcast_to(gravity, (n, 3)))
            out[:, col:col + dim] = value
            col += dim
        return out
