"""MJCF sensors MotrixSim's loader drops, computed from the state as MuJoCo defines them.

- ``actuatorpos`` / ``actuatorvel``: the actuator's length ``gear * qpos`` and its rate ``gear * qvel``
  for a joint transmission on a hinge or slide joint (MuJoCo's ``actuator_length`` /
  ``actuator_velocity``); an actuator with another transmission is refused by the sensor's feature
  name (``actuatorpos_sensor``);
- ``magnetometer``: the model's magnetic field (``<option magnetic>``, world frame) in the site's
  frame, ``R_site^T B``.

The sensor's MuJoCo compilation gives its object and width; ``noise`` is not applied by MuJoCo
either. Cassie's ten ``actuatorpos`` sensors and its magnetometer were why it was refused.
"""

from __future__ import annotations

import numpy as np

from unisim_core.contract import quat as Q
from unisim_core.contract.errors import UnsupportedCapabilityError

__all__ = ["DERIVED", "DerivedSensors"]

#: The sensor kinds computed here.
DERIVED = frozenset({"actuatorpos", "actuatorvel", "magnetometer"})


class DerivedSensors:
    """Fill the columns of the derived sensors of a full sensor row (see the module docstring)."""

    def __init__(self, backend: str, m, decls) -> None:
        import mujoco

        self.rows: list[tuple[str, str, int, float, np.ndarray]] = []  # (name, kind, index, gear, site quat)
        self._site_body: dict[str, int] = {}
        self._field = np.asarray(m.opt.magnetic, np.float64)
        for d in decls:
            s = m.sensor(d.name)
            if d.kind == "magnetometer":
                site = int(s.objid[0])
                self._site_body[d.name] = int(m.site_bodyid[site])
                self.rows.append((d.name, d.kind, site, 1.0, np.asarray(m.site_quat[site], np.float64)))
                continue
            a = int(s.objid[0])
            joint = int(m.actuator_trnid[a, 0])
            if int(m.actuator_trntype[a]) != int(mujoco.mjtTrn.mjTRN_JOINT) or int(m.jnt_type[joint]) not in (
                    int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)):
                raise UnsupportedCapabilityError(backend, f"{d.kind}_sensor", (
                    f"sensor {d.name!r} of type <{d.kind}> reads actuator {m.actuator(a).name!r}, whose transmission "
                    "is not a hinge or slide joint; the backend computes it for joint transmissions only"))
            adr = int(m.jnt_qposadr[joint]) if d.kind == "actuatorpos" else int(m.jnt_dofadr[joint])
            self.rows.append((d.name, d.kind, adr, float(m.actuator_gear[a, 0]), np.zeros(4)))
        self.dims = {name: 3 if kind == "magnetometer" else 1 for name, kind, *_ in self.rows}

    def values(self, qpos: np.ndarray, qvel: np.ndarray, body_quat: np.ndarray) -> dict[str, np.ndarray]:
        """``{name: (N, dim)}`` from ``qpos``/``qvel`` (MuJoCo layout) and body orientations ``(N, nbody, 4)`` wxyz."""
        out = {}
        for name, kind, index, gear, site_quat in self.rows:
            if kind == "actuatorpos":
                out[name] = gear * qpos[:, index:index + 1]
            elif kind == "actuatorvel":
                out[name] = gear * qvel[:, index:index + 1]
            else:
                q = Q.quat_mul(np.asarray(body_quat[:, self._site_body[name]], np.float64),
                               np.broadcast_to(site_quat, (len(qpos), 4)))
                out[name] = Q.quat_apply_inverse(q, np.broadcast_to(self._field, (len(qpos), 3)))
        return out
