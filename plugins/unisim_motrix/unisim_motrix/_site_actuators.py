"""Actuators with a site transmission (thrusters), which MotrixSim's loader drops: applied here.

MuJoCo's site transmission (without ``refsite``) moves the model through the site's Jacobian: the
actuator force ``f`` acts as the wrench ``R_s gear[:3] f`` (a force at the site's point) and
``R_s gear[3:] f`` (a torque), ``R_s`` the site's world orientation. For the actuators this covers
(no activation dynamics, a fixed gain, no bias: ``<motor>`` and plain ``<general>``), ``f`` is
``gain * ctrl``, ``ctrl`` clamped to ``ctrlrange`` and ``f`` to ``forcerange`` where limited; the
backend applies that wrench to the site's link before every substep, from the site's pose at that
substep. Other site actuators are refused by the feature ``site_transmission``, naming why.
The bitcraze_crazyflie_2 (thrust and three moments on one site) and skydio_x2 (four rotors) loaded
with 0 actuators before.
"""

from __future__ import annotations

import numpy as np

from unisim_core.contract import quat as Q
from unisim_core.contract.errors import UnsupportedCapabilityError

__all__ = ["SiteActuators"]


class SiteActuators:
    """The model's site-transmission actuators (``columns``: their ids, in MuJoCo's actuator order)."""

    def __init__(self, backend: str, m) -> None:
        import mujoco

        site_trn = int(mujoco.mjtTrn.mjTRN_SITE)
        self.columns = np.flatnonzero(m.actuator_trntype == site_trn).astype(np.int64)
        self.engine_columns = np.flatnonzero(m.actuator_trntype != site_trn).astype(np.int64)
        for a in self.columns:
            name = m.actuator(int(a)).name
            why = None
            if int(m.actuator_trnid[a, 1]) != -1:
                why = "has a refsite (a Cartesian actuator)"
            elif int(m.actuator_dyntype[a]) != int(mujoco.mjtDyn.mjDYN_NONE):
                why = "has activation dynamics"
            elif int(m.actuator_gaintype[a]) != int(mujoco.mjtGain.mjGAIN_FIXED):
                why = "has a gain that is not fixed"
            elif int(m.actuator_biastype[a]) != int(mujoco.mjtBias.mjBIAS_NONE):
                why = "has a bias (a servo)"
            if why is not None:
                raise UnsupportedCapabilityError(backend, "site_transmission", (
                    f"actuator {name!r} with a site transmission {why}; MotrixSim drops site transmissions and the "
                    "backend applies only fixed-gain, bias-free ones as the site's wrench"))
        sites = m.actuator_trnid[self.columns, 0].astype(np.int64)
        self.names = [m.actuator(int(a)).name for a in self.columns]
        self.body = m.site_bodyid[sites].astype(np.int64)
        self._pos, self._quat = m.site_pos[sites].copy(), m.site_quat[sites].copy()
        self._gear = m.actuator_gear[self.columns].copy()
        self._gain = m.actuator_gainprm[self.columns, 0].copy()
        limited = m.actuator_ctrllimited[self.columns].astype(bool)
        self.ctrl_range = np.where(limited[:, None], m.actuator_ctrlrange[self.columns], [-np.inf, np.inf])
        flimited = m.actuator_forcelimited[self.columns].astype(bool)
        self._force_range = np.where(flimited[:, None], m.actuator_forcerange[self.columns], [-np.inf, np.inf])

    def __len__(self) -> int:
        return len(self.columns)

    def wrenches(self, ctrl: np.ndarray, body_quat: np.ndarray) -> list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
        """``[(body, force (N, 3), point (N, 3), torque (N, 3))]`` for the contract's ``ctrl (N, nu)`` and
        the bodies' world orientations ``(N, nbody, 4)`` (wxyz): force and torque in the world frame,
        the point (the site) in the body's frame, as MotrixSim's ``add_external_force(local=False)``
        takes them (measured: its point is in link coordinates)."""
        u = np.clip(np.asarray(ctrl, np.float64)[:, self.columns], self.ctrl_range[:, 0], self.ctrl_range[:, 1])
        f = np.clip(self._gain * u, self._force_range[:, 0], self._force_range[:, 1])  # (N, k)
        out = []
        for k, b in enumerate(self.body):
            qb = np.asarray(body_quat[:, b], np.float64)
            point = np.ascontiguousarray(np.broadcast_to(self._pos[k], qb.shape[:-1] + (3,)))  # not a stride-0 view:
            # MotrixSim reads the buffer row by row (measured: env 1 of 2 got garbage)
            qs = Q.quat_mul(qb, np.broadcast_to(self._quat[k], qb.shape))
            force = np.ascontiguousarray(Q.quat_apply(qs, f[:, k:k + 1] * self._gear[k, :3]))
            torque = np.ascontiguousarray(Q.quat_apply(qs, f[:, k:k + 1] * self._gear[k, 3:]))
            out.append((int(b), force, point, torque))
        return out
