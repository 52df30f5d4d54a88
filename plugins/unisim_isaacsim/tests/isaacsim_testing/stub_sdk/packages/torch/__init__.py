"""STUB ``torch`` (numpy behind the handful of calls the worker and the SDK stubs make); not PyTorch."""

from __future__ import annotations

import numpy as np

float32 = np.dtype(np.float32)
long = np.dtype(np.int64)
int32 = np.dtype(np.int32)


class Tensor:
    """A numpy array with ``detach``/``cpu``/``numpy``/``clone`` and a ``device`` string."""

    def __init__(self, array, device: str = "cpu") -> None:
        self.array, self.device = np.asarray(array), str(device)

    def detach(self) -> Tensor:
        return self

    def cpu(self) -> Tensor:
        return Tensor(self.array, "cpu")

    def numpy(self) -> np.ndarray:
        if self.device != "cpu":
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() first")
        return self.array

    def clone(self) -> Tensor:
        return Tensor(self.array.copy(), self.device)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.array.shape

    def __len__(self) -> int:
        return len(self.array)


def as_tensor(data, dtype=None, device: str = "cpu") -> Tensor:
    if isinstance(data, Tensor):
        data = data.array
    return Tensor(np.array(data, dtype=dtype), device)
