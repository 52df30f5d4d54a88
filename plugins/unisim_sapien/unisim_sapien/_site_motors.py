"""MJCF site motors (``site_transmission``: ``<motor site=... gear="fx fy fz tx ty tz">``, no refsite).

MuJoCo's force ``f = clip(clip(ctrl, ctrlrange), forcerange)`` acts as the wrench ``(gear[:3] f, gear[3:] f)``
in the site's frame, at the site (a drone's thrust and yaw moment). PhysX has no such transmission:
the wrench is rotated to the world and applied at the site's world position on its body's link
before every substep (PhysX clears external forces after each).
"""

from __future__ import annotations

import numpy as np

from unisim_core import LiteModel
from unisim_core.contract import quat as Q

__all__ = ["SiteMotors"]

_ZERO3 = np.zeros(3, dtype=np.float32)


class SiteMotors:
    """The site motors of ``lite``: their ctrl columns, sites (body, pose in it), gears and ranges."""

    def __init__(self, lite: LiteModel) -> None:
        acts = [a for a, act in enumerate(lite.actuators) if act["site"] >= 0]
        rows = [lite.actuators[a] for a in acts]
        sites = [lite.sites[r["site"]] for r in rows]
        self._cols = np.array(acts, dtype=np.int64)
        self._bodies = np.array([s["body"] for s in sites], dtype=np.int64)
        self._pos = np.array([s["pos"] for s in sites], dtype=np.float64).reshape(-1, 3)
        self._quat = np.array([s["quat"] for s in sites], dtype=np.float64).reshape(-1, 4)
        self._gear = np.array([r["gear6"] for r in rows], dtype=np.float64).reshape(-1, 6)
        self._ctrl_range = np.array([r["ctrlrange"] for r in rows], dtype=np.float64).reshape(-1, 2)
        self._force_range = np.array([r["forcerange"] for r in rows], dtype=np.float64).reshape(-1, 2)

    def apply(self, ctrl: np.ndarray, kin: tuple[np.ndarray, ...], links: list[list]) -> None:
        """Stage the wrenches for ``ctrl (n, nu)`` at the body kinematics ``kin`` (``pos, quat, ...`` per body)."""
        u = np.clip(ctrl[:, self._cols], self._ctrl_range[:, 0], self._ctrl_range[:, 1])
        f = np.clip(u, self._force_range[:, 0], self._force_range[:, 1])[..., None]  # (n, k, 1)
        pos, quat = kin[0][:, self._bodies], kin[1][:, self._bodies]
        site_pos = pos + Q.quat_apply(quat, np.broadcast_to(self._pos, pos.shape))
        site_quat = Q.quat_mul(quat, np.broadcast_to(self._quat, quat.shape))
        force = Q.quat_apply(site_quat, self._gear[:, :3] * f).astype(np.float32)
        torque = Q.quat_apply(site_quat, self._gear[:, 3:] * f).astype(np.float32)
        at = site_pos.astype(np.float32)
        for i, env in enumerate(links):
            for k, b in enumerate(self._bodies):
                env[b].add_force_at_point(force[i, k], at[i, k])
                env[b].add_force_torque(_ZERO3, torque[i, k])
