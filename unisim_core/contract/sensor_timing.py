"""When sensors are sampled within a ``step``: selectable, the same on every engine.

The contract's getters read sensors **after the step** (``"after_step"``): the values of the state
``step`` returns, as every other getter. MuJoCo's own ``mj_step`` leaves ``sensordata`` computed
at the start of its last substep (``mj_forward`` runs before integrating), and apps written
against that convention (UniLab, anything reading ``d.sensordata`` after ``mj_step``) see their
sensors one substep older than the state. :class:`SensorClock` gives that convention,
``"last_substep"``, on any backend:

- a ``step(ctrl, nsteps)`` with ``nsteps > 1`` runs ``nsteps - 1`` substeps, samples the sensors
  (the state the last substep starts from, under the same ``ctrl``: MuJoCo's values exactly), then
  the last substep;
- with ``nsteps == 1`` the sample is read just before the step, at the state it starts from:
  exact for state sensors (gyro, frame sensors, velocimeter, joint sensors); a sensor that depends
  on the control (accelerometer, actuator force) reflects the previous control there;
- ``set_state(env_ids)`` resamples those envs (a reset state has no earlier substep).

Costs one full sensor read per ``step`` (and one more engine call when ``nsteps > 1``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from unisim_core.contract.errors import InvalidInputError

__all__ = ["SENSOR_TIMINGS", "SensorClock"]

#: ``"after_step"``: the contract's getters; ``"last_substep"``: MuJoCo's ``mj_step`` convention.
SENSOR_TIMINGS = ("after_step", "last_substep")


class SensorClock:
    """Sensors of ``backend`` under ``timing`` (one of :data:`SENSOR_TIMINGS`); step and reset
    through the clock so that it can sample. ``read(names)`` -> ``(num_envs, total width)``."""

    def __init__(self, backend, timing: str) -> None:
        if timing not in SENSOR_TIMINGS:
            raise InvalidInputError(f"sensor_timing: expected one of {list(SENSOR_TIMINGS)}, got {timing!r}")
        self.backend = backend
        self.timing = timing
        info = backend.model_info
        self._names = tuple(info.sensor_names)
        starts = np.concatenate(([0], np.cumsum(info.sensor_dims))).astype(np.int64)
        self._cols = {n: np.arange(starts[i], starts[i + 1]) for i, n in enumerate(self._names)}
        self._sample = self._read_all() if timing == "last_substep" else None

    def _read_all(self) -> np.ndarray:
        if not self._names:
            return np.zeros((self.backend.num_envs, 0), dtype=self.backend.np_dtype)
        return self.backend.get_sensor_data_batch(self._names)

    def step(self, ctrl: np.ndarray, nsteps: int = 1) -> None:
        """``backend.step(ctrl, nsteps)``, sampling as ``timing`` says."""
        if self.timing == "after_step":
            self.backend.step(ctrl, nsteps)
            return
        if nsteps > 1:
            self.backend.step(ctrl, nsteps - 1)
        self._sample = self._read_all()  # the state the last substep starts from
        self.backend.step(ctrl, 1)

    def set_state(self, env_ids: np.ndarray, qpos: np.ndarray, qvel: np.ndarray, randomization=None) -> None:
        """``backend.set_state``; those envs' sample becomes their new state's."""
        self.backend.set_state(env_ids, qpos, qvel, randomization)
        if self.timing == "last_substep" and len(env_ids):
            self._sample[np.asarray(env_ids)] = self._read_all()[np.asarray(env_ids)]

    def read(self, names: Sequence[str]) -> np.ndarray:
        """``(num_envs, sum of widths)``: the named sensors as ``timing`` samples them."""
        if self.timing == "after_step":
            return self.backend.get_sensor_data_batch(tuple(names))
        missing = [n for n in names if n not in self._cols]
        if missing:
            self.backend.get_sensor_data_batch(tuple(missing))  # the contract's error naming them
        cols = np.concatenate([self._cols[n] for n in names]) if names else np.zeros(0, np.int64)
        return self._sample[:, cols]
