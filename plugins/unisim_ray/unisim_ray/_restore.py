"""Shard side of recovery: the restore rows a shard streams, and how a rebuilt shard takes them.

Restore rows are float64, one per env, and hold everything the next call depends on, best first:

- ``"exact"``: the inner exposes MuJoCo's ``mujoco.batch.Batch`` as ``batch`` (unisim-mujoco
  does). The rows are the batch's integration state less the applied forces, which are zero
  between calls (the contract stages wrenches; the host records and re-applies them): time, qpos,
  qvel, act, history, solver warm start, ctrl (acceleration-stage sensors read it), eq_active,
  mocap, userdata, plugin state. A rebuilt shard continues bit for bit. The contract's physics snapshot row alone is
  not enough: it drops the warm start, and a fresh instance then differs by ~1e-14 after a contact.
- ``"snapshot"``: the contract's physics snapshot (``[time, qpos, qvel, mocap]``): reads equal,
  the continuation within the engine's solver tolerance.
- ``"qpos_qvel"``: no snapshot capability: qpos and qvel through ``set_state`` (time restarts).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from unisim_core.capabilities import Capability

__all__ = ["RestoreRows"]

#: MuJoCo state components not captured: applied forces, zero between calls.
_RESENT = ("mjSTATE_QFRC_APPLIED", "mjSTATE_XFRC_APPLIED")
#: The contract's snapshot row, in MuJoCo state components.
_SNAPSHOT = ("mjSTATE_TIME", "mjSTATE_QPOS", "mjSTATE_QVEL", "mjSTATE_MOCAP_POS", "mjSTATE_MOCAP_QUAT")


def _mujoco_columns(backend: Any) -> tuple[Any, np.ndarray, np.ndarray] | None:
    """``(batch, captured columns, snapshot columns within them)`` for a MuJoCo batch inner, else None."""
    batch = getattr(backend, "batch", None)
    if batch is None or not hasattr(batch, "state") or not hasattr(batch, "_component"):
        return None
    import mujoco

    def cols(name: str) -> np.ndarray:
        start, size = batch._component(getattr(mujoco.mjtState, name))
        return np.arange(start, start + size, dtype=np.int64)

    resent = np.concatenate([cols(c) for c in _RESENT])
    captured = np.setdiff1d(np.arange(batch.nstate), resent)
    snapshot = np.concatenate([cols(c) for c in _SNAPSHOT])
    return batch, captured, np.searchsorted(captured, snapshot)


class RestoreRows:
    """Reads and writes a shard's restore rows (see the module docstring for the tiers)."""

    def __init__(self, backend: Any) -> None:
        self._b = backend
        found = _mujoco_columns(backend)
        if found is not None:
            self.tier = "exact"
            self._batch, self._cols, self._snap = found
        elif Capability.PHYSICS_SNAPSHOT in backend.capabilities:
            self.tier = "snapshot"
        else:
            self.tier = "qpos_qvel"

    def read(self, env_ids: np.ndarray | None = None) -> np.ndarray:
        """``(len(env_ids) or num_envs, width)`` float64 rows (a new array)."""
        if self.tier == "exact":
            state = self._batch.state
            return state[:, self._cols] if env_ids is None else state[np.ix_(env_ids, self._cols)]
        if self.tier == "snapshot":
            rows = np.asarray(self._b._get_physics_state(), dtype=np.float64)
        else:
            rows = np.concatenate([np.asarray(self._b.get_qpos(), np.float64),
                                   np.asarray(self._b.get_qvel(), np.float64)], axis=1)
        return np.array(rows if env_ids is None else rows[env_ids], dtype=np.float64, order="C")

    def write(self, rows: np.ndarray) -> None:
        """Put every env of the shard back to ``rows`` (from :meth:`read` of the shard that died)."""
        b = self._b
        if self.tier == "exact":
            b._set_physics_state(rows[:, self._snap])  # the backend's own forward and caches
            self._batch.state[:, self._cols] = rows  # then the hidden state the snapshot row lacks
        elif self.tier == "snapshot":
            b._set_physics_state(rows)
        else:
            nq = b.nq
            b._set_state(np.arange(len(rows)), rows[:, :nq].copy(), rows[:, nq:].copy())
