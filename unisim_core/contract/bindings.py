"""Objects bound once on the cold path and used on the hot path.

- :class:`SensorDataView`: named sensors read as one ``(num_envs, width)`` array.
- :class:`BackendHeightScanner`: terrain heights under a grid of points around a body.
- :class:`BackendMocapPoseBinding`: read and write one mocap body's pose.
"""

from __future__ import annotations

import abc

import numpy as np

from unisim_core.contract._typing import Backend
from unisim_core.contract.validation import check_env_ids, check_float_array

__all__ = ["SensorDataView", "BackendHeightScanner", "BackendMocapPoseBinding"]


class SensorDataView:
    """A validated view over named sensors (``SimBackend.bind_sensor_data``).

    ``read()`` returns ``(num_envs, width)``: the sensors' values concatenated in
    ``names`` order; ``slices[name]`` locates one sensor's columns.
    """

    def __init__(self, backend: Backend, names: tuple[str, ...], indices: np.ndarray, widths: np.ndarray):
        self._backend = backend
        self._indices = indices
        self.names = names
        self.widths = tuple(int(w) for w in widths)
        self.width = int(sum(self.widths))
        starts = np.concatenate(([0], np.cumsum(widths)))
        self.slices = {n: slice(int(starts[i]), int(starts[i + 1])) for i, n in enumerate(names)}

    def read(self) -> np.ndarray:
        self._backend._check_open()  # BackendClosedError after close(), never stale data
        if not self.width:
            return np.zeros((self._backend.num_envs, 0), dtype=self._backend.np_dtype)
        return self._backend._read_sensors(self._indices)


class BackendHeightScanner(abc.ABC):
    """Terrain heights (m, world z) under ``num_points`` points around a body.

    Points are ``offsets`` (m, xy) in the body frame, rotated by the body's yaw
    (``alignment="yaw"``), full orientation (``"full"``) or not at all
    (``"world"``), then projected vertically onto the height field.
    ``output="height"`` returns the terrain height; ``"distance"`` returns the
    body's z minus the terrain height.
    """

    num_points: int

    @abc.abstractmethod
    def scan(self) -> np.ndarray:
        """``(num_envs, num_points)`` heights or distances in m."""


class BackendMocapPoseBinding(abc.ABC):
    """One mocap body's world pose (position m, wxyz quaternion) across envs."""

    body_name: str
    num_envs: int

    @abc.abstractmethod
    def _write(self, env_ids: np.ndarray, pos: np.ndarray, quat: np.ndarray) -> None:
        """Write validated ``pos (k, 3)`` and unit ``quat (k, 4)`` for ``env_ids``."""

    @abc.abstractmethod
    def get(self) -> tuple[np.ndarray, np.ndarray]:
        """``(pos (num_envs, 3), quat (num_envs, 4))``."""

    def set(self, pos: np.ndarray, quat: np.ndarray, env_ids: np.ndarray | None = None) -> None:
        """Set the pose of ``env_ids`` (all when ``None``); quaternions are normalized."""
        from unisim_core.contract.quat import quat_normalize

        ids = np.arange(self.num_envs) if env_ids is None else check_env_ids("env_ids", env_ids, self.num_envs)
        pos = check_float_array("pos", pos, (len(ids), 3))
        quat = check_float_array("quat", quat, (len(ids), 4))
        try:
            quat = quat_normalize(quat)
        except ValueError:
            from unisim_core.contract.errors import InvalidInputError

            raise InvalidInputError("quat: expected non-zero quaternions, got a zero-norm row") from None
        self._write(ids, pos, quat)
