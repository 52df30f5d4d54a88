"""Numpy arrays in POSIX shared memory: the host allocates, the worker attaches by descriptor.

A descriptor is plain data, {"name": str, "shape": [int, ...], "dtype": str}, so it travels in
frames. Only the creating side unlinks a segment. Python <= 3.12 registers every *attached*
segment with the attaching process's resource tracker, which unlinks it when that process
exits; `ShmSlot.attach` unregisters right after attaching (or passes track=False on >= 3.13).
"""

from __future__ import annotations

import math
import mmap
import secrets
import sys
from multiprocessing import resource_tracker
from multiprocessing.shared_memory import SharedMemory
from typing import Any

import numpy as np

_DTYPE_KINDS = "biufc"  # bool, ints, floats, complex: plain fixed-size numbers only


class ShmSlot:
    """One array in one segment; `array` is the live view, `descriptor` its wire description."""

    def __init__(self, shm: SharedMemory, shape: tuple[int, ...], dtype: np.dtype, owner: bool):
        self._shm = shm
        self.name = shm.name
        self.owner = owner
        self.shape, self.dtype = shape, dtype
        self.array: np.ndarray | None = np.ndarray(shape, dtype, buffer=shm.buf)

    @classmethod
    def create(cls, shape: tuple[int, ...] | int, dtype: Any) -> ShmSlot:
        """Allocate a zero-filled segment for an array of `shape` and `dtype` (host side)."""
        shape, dtype, nbytes = _check(list(np.atleast_1d(shape).tolist()), np.dtype(dtype).str)
        shm = SharedMemory(f"unisim-{secrets.token_hex(8)}", create=True, size=max(nbytes, 1))
        return cls(shm, shape, dtype, owner=True)

    @classmethod
    def attach(cls, descriptor: Any) -> ShmSlot:
        """Map the segment a descriptor names, after validating it (ValueError if bad)."""
        if type(descriptor) is not dict or set(descriptor) != {"name", "shape", "dtype"}:
            raise ValueError(f"bad shared-memory descriptor {descriptor!r}")
        name = descriptor["name"]
        if type(name) is not str or not 0 < len(name) < 250 or "/" in name or "\0" in name:
            raise ValueError(f"bad shared-memory segment name {name!r}")
        shape, dtype, nbytes = _check(descriptor["shape"], descriptor["dtype"])
        if sys.version_info >= (3, 13):
            shm = SharedMemory(name, track=False)
        else:
            shm = SharedMemory(name)
            resource_tracker.unregister(shm._name, "shared_memory")  # type: ignore[attr-defined]
        low = max(nbytes, 1)
        if not low <= shm.size < low + mmap.PAGESIZE:
            shm.close()
            raise ValueError(
                f"segment {name!r} holds {shm.size} bytes but {list(shape)} {dtype} needs {nbytes}"
            )
        return cls(shm, shape, dtype, owner=False)

    @property
    def descriptor(self) -> dict[str, Any]:
        return {"name": self.name, "shape": list(self.shape), "dtype": self.dtype.str}

    def close(self) -> None:
        """Drop the mapping and, on the owning side, unlink the segment (idempotent).

        If views of `array` are still alive the mapping outlives this call (it is released when
        they die); the segment is unlinked regardless.
        """
        if self.array is None:
            return
        self.array = None
        if self.owner:
            try:
                self._shm.unlink()
            except FileNotFoundError:
                pass
        try:
            self._shm.close()
        except BufferError:
            pass


def _check(shape: Any, dtype: Any) -> tuple[tuple[int, ...], np.dtype, int]:
    if type(shape) is not list or not all(type(n) is int and n >= 0 for n in shape):
        raise ValueError(f"bad shape {shape!r}: expected a list of non-negative ints")
    if type(dtype) is not str:
        raise ValueError(f"bad dtype {dtype!r}: expected a string")
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise ValueError(f"bad dtype {dtype!r}: {e}") from None
    if dt.kind not in _DTYPE_KINDS or dt.fields is not None or dt.subdtype is not None:
        raise ValueError(f"dtype {dtype!r} is not a plain numeric dtype")
    return tuple(shape), dt, math.prod(shape) * dt.itemsize


class SlotSet:
    """Named slots. The host `add`s arrays and sends `descriptors`; the worker `attach`es them."""

    def __init__(self) -> None:
        self._slots: dict[str, ShmSlot] = {}

    @classmethod
    def attach(cls, descriptors: Any) -> SlotSet:
        """Attach every slot of a `descriptors` mapping (worker side)."""
        if type(descriptors) is not dict:
            raise ValueError(f"bad slot descriptors {descriptors!r}")
        slots = cls()
        try:
            for name, desc in descriptors.items():
                slots._slots[name] = ShmSlot.attach(desc)
        except BaseException:
            slots.close()
            raise
        return slots

    def add(self, name: str, shape: tuple[int, ...] | int, dtype: Any) -> np.ndarray:
        """Allocate a new slot and return its array (host side)."""
        if name in self._slots:
            raise KeyError(f"slot {name!r} already exists")
        slot = self._slots[name] = ShmSlot.create(shape, dtype)
        return slot.array

    def __getitem__(self, name: str) -> np.ndarray:
        return self._slots[name].array

    def __contains__(self, name: object) -> bool:
        return name in self._slots

    def __len__(self) -> int:
        return len(self._slots)

    @property
    def descriptors(self) -> dict[str, dict[str, Any]]:
        return {name: slot.descriptor for name, slot in self._slots.items()}

    def close(self) -> None:
        """Close (and, where owned, unlink) every slot; idempotent."""
        slots, self._slots = self._slots, {}
        for slot in slots.values():
            slot.close()
