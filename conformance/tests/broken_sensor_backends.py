"""Deliberately broken MJCF force sensors (a subclass of the MuJoCo backend): the classic sign bug.

Referenced by ``test_kit_sensors.py`` as ``broken_sensor_backends:SensorReaction``; it must fail
each ``dynamics::mjcf_force_sensors`` check. MuJoCo is the base: the fake backend refuses these
sensors by name.
"""

from __future__ import annotations

import mujoco
import numpy as np

from unisim_mujoco import MujocoBackend

_KINDS = {int(mujoco.mjtSensor.mjSENS_TOUCH), int(mujoco.mjtSensor.mjSENS_FORCE), int(mujoco.mjtSensor.mjSENS_TORQUE)}


class SensorReaction(MujocoBackend):
    """Reports the reaction for <touch>, <force> and <torque>: the force the sensed body exerts (on the
    floor, on its parent) instead of the one it receives. Every other sensor is MuJoCo's."""

    name = "broken_sensor_reaction"

    def _read_sensor(self, index: int) -> np.ndarray:
        value = super()._read_sensor(index)
        return -value if int(self._m.sensor_type[index]) in _KINDS else value

    def _read_sensors(self, indices: np.ndarray) -> np.ndarray:
        return np.concatenate([self._read_sensor(int(i)) for i in indices], axis=1)


#: The checks the broken backend must fail.
EXPECTED = ("dynamics::mjcf_force_sensors[touch]", "dynamics::mjcf_force_sensors[force]",
            "dynamics::mjcf_force_sensors[torque]")
