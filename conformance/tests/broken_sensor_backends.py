"""Deliberately broken MJCF force sensors (subclasses of the MuJoCo backend), one sign bug each.

Referenced by ``test_kit_sensors.py`` as ``broken_sensor_backends:Name``; each must fail its
``dynamics::mjcf_force_sensors`` check (``EXPECTED``). MuJoCo is the base: the fake backend refuses
these sensors by name.
"""

from __future__ import annotations

import mujoco
import numpy as np

from unisim_mujoco import MujocoBackend


class _Reaction(MujocoBackend):
    """Reports the reaction for sensors of type ``KIND``: the force the sensed body exerts (on its
    parent, on the floor) instead of the one it receives."""

    KIND: int

    def _read_sensor(self, index: int) -> np.ndarray:
        value = super()._read_sensor(index)
        return -value if int(self._m.sensor_type[index]) == self.KIND else value

    def _read_sensors(self, indices: np.ndarray) -> np.ndarray:
        return np.concatenate([self._read_sensor(int(i)) for i in indices], axis=1)


class TouchReaction(_Reaction):
    name = "broken_touch_reaction"
    KIND = int(mujoco.mjtSensor.mjSENS_TOUCH)


class ForceReaction(_Reaction):
    name = "broken_force_reaction"
    KIND = int(mujoco.mjtSensor.mjSENS_FORCE)


class TorqueReaction(_Reaction):
    name = "broken_torque_reaction"
    KIND = int(mujoco.mjtSensor.mjSENS_TORQUE)


EXPECTED = {
    "TouchReaction": ("dynamics", "dynamics::mjcf_force_sensors[touch]"),
    "ForceReaction": ("dynamics", "dynamics::mjcf_force_sensors[force]"),
    "TorqueReaction": ("dynamics", "dynamics::mjcf_force_sensors[torque]"),
}
