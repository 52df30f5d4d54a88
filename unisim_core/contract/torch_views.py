"""The torch path of the contract: state as torch tensors, tensor control, masked resets.

torch is imported on first use only (``import unisim_core`` never imports it); without torch these
functions raise ``OptionalDependencyError`` naming it.

- :func:`state_tensors` — ``qpos`` and ``qvel`` as ``(num_envs, width)`` tensors. Where the
  backend declares ``DEVICE_ARRAYS`` and the tensors are wanted on the engine's device, they are
  **zero-copy** DLPack views of the engine's own buffers (live: a later ``step`` shows through);
  otherwise they are copies of the numpy getters (``torch.from_numpy``, then ``.to(device)``).
- :func:`step_tensor` — ``step`` with a ``(num_envs, num_actuators)`` tensor (any device).
- :func:`set_state_masked` — a **packed masked reset**: full-width ``qpos (num_envs, nq)``,
  ``qvel (num_envs, nv)`` and a ``(num_envs,)`` bool mask; only the true rows are written, in one
  ``set_state`` call (with its reset randomization), every other env stays bit-identical.

Tensors or numpy arrays are accepted wherever an array is; values reach the backend as float64
numpy, so validation and errors are the contract's own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from unisim_core.contract.capabilities import Capability
from unisim_core.contract.errors import InvalidInputError, OptionalDependencyError

__all__ = ["torch_module", "STATE_FIELDS", "state_tensors", "step_tensor", "set_state_masked", "to_numpy"]

#: Fields of :func:`state_tensors`.
STATE_FIELDS = ("qpos", "qvel")


def torch_module():
    """``torch``, imported now; ``OptionalDependencyError`` naming it when absent."""
    try:
        import torch
    except ImportError:
        raise OptionalDependencyError("the torch path of the contract needs torch: pip install torch") from None
    return torch


def to_numpy(name: str, value: Any) -> np.ndarray:
    """A tensor (any device, detached) or array-like as a numpy array; ``name`` names it in errors."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        return value.detach().cpu().numpy()
    if hasattr(value, "__array__") or isinstance(value, list | tuple):
        return np.asarray(value)
    raise InvalidInputError(f"{name}: expected a torch tensor or an array, got {type(value).__name__}")


def state_tensors(backend, fields=("qpos", "qvel"), device: Any = None) -> dict[str, Any]:
    """``{field: (num_envs, width) tensor}`` for ``fields`` among :data:`STATE_FIELDS`.

    ``device`` ``None`` means the engine's device (``get_device_arrays().device`` where the backend
    declares ``DEVICE_ARRAYS``, else the CPU). Zero-copy views where the engine holds the buffer on
    that device (see the module docstring); dtype is then the engine's, else ``np_dtype``.
    """
    torch = torch_module()
    fields = (fields,) if isinstance(fields, str) else tuple(fields)
    unknown = [f for f in fields if f not in STATE_FIELDS]
    if unknown:
        raise InvalidInputError(f"fields: unknown state field(s) {unknown}; known: {list(STATE_FIELDS)}")
    views = backend.get_device_arrays() if Capability.DEVICE_ARRAYS in backend.capabilities else None
    target = torch.device(device if device is not None else (views.device if views is not None else "cpu"))
    out = {}
    for field in fields:
        if views is not None and torch.device(views.device) == target:
            out[field] = torch.from_dlpack(getattr(views, field))
            continue
        out[field] = torch.from_numpy(np.ascontiguousarray(getattr(backend, f"get_{field}")())).to(target)
    return out


def step_tensor(backend, ctrl: Any, nsteps: int = 1) -> None:
    """``backend.step(ctrl, nsteps)`` with ``ctrl`` a ``(num_envs, num_actuators)`` tensor or array."""
    backend.step(to_numpy("ctrl", ctrl), nsteps)


def set_state_masked(backend, mask: Any, qpos: Any, qvel: Any, randomization=None) -> np.ndarray:
    """Write rows ``mask`` of the full-width ``qpos``/``qvel`` into those envs (one ``set_state``);
    returns the env ids written. ``randomization``: a ``ResetRandomizationPayload`` for these envs."""
    mask = to_numpy("mask", mask)
    if mask.shape != (backend.num_envs,) or mask.dtype != np.bool_:
        raise InvalidInputError(f"mask: expected a ({backend.num_envs},) bool array, got {mask.dtype} {mask.shape}")
    qpos, qvel = to_numpy("qpos", qpos), to_numpy("qvel", qvel)
    for name, value, width in (("qpos", qpos, backend.nq), ("qvel", qvel, backend.nv)):
        if value.shape != (backend.num_envs, width):
            raise InvalidInputError(f"{name}: expected full-width ({backend.num_envs}, {width}), got {value.shape}")
    env_ids = np.flatnonzero(mask)
    if env_ids.size:
        backend.set_state(env_ids, qpos[env_ids], qvel[env_ids], randomization)
    return env_ids
