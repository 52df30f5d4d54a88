"""Host side of recovery: what the host keeps so that a rebuilt shard continues where the dead one stood.

Kept only when ``max_shard_restarts > 0``. Memory is bounded by the model, not by the run length:

- restore rows per shard (``(n_k, width)`` float64), replaced by every state-changing reply;
- model-field writes folded into the latest value per (term, target, env) cell, replayed one
  write per (term, target) in first-write order (absolute values: the host resolves every
  randomization op against nominal values before sending it);
- the wrenches staged since the shards last cleared them;
- handle-creating calls (scanners, mocap bindings, terrain), replayed with the same keys.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["RecoveryRecord"]


class RecoveryRecord:
    """Per-shard record of everything a rebuilt shard needs besides its scene."""

    def __init__(self, ranges: list[tuple[int, int]]) -> None:
        self.ranges = ranges
        self.rows: list[np.ndarray | None] = [None] * len(ranges)
        self.restarts = np.zeros(len(ranges), dtype=np.int64)
        # per shard: term -> target (None: global term) -> [values (n_k, *value_shape), written (n_k,)]
        self._fields: list[dict[str, dict[int | None, list[np.ndarray]]]] = [{} for _ in ranges]
        self._forces: list[tuple[np.ndarray, np.ndarray, np.ndarray | None]] = []
        self.handles: list[tuple[str, tuple]] = []

    # ------------------------------------------------------------------ recording
    def record_rows(self, k: int, local_ids: np.ndarray | None, rows: np.ndarray) -> None:
        """Restore rows of shard ``k`` for ``local_ids`` (``None``: all its envs)."""
        if local_ids is None or self.rows[k] is None:
            self.rows[k] = np.array(rows, dtype=np.float64)
        else:
            self.rows[k][local_ids] = rows

    def record_field(self, k: int, term: str, local_ids: np.ndarray, target_ids: np.ndarray | None,
                     values: np.ndarray) -> None:
        """A model-field write that landed on shard ``k`` (values ``(len(ids), len(targets), ...)``,
        or ``(len(ids), ...)`` for a global term)."""
        a, b = self.ranges[k]
        table = self._fields[k].setdefault(term, {})
        targets = [None] if target_ids is None else [int(t) for t in target_ids]
        for col, t in enumerate(targets):
            vals = values if t is None else values[:, col]
            cell = table.get(t)
            if cell is None:
                cell = table[t] = [np.zeros((b - a,) + vals.shape[1:], dtype=vals.dtype),
                                   np.zeros(b - a, dtype=bool)]
            cell[0][local_ids] = vals
            cell[1][local_ids] = True

    def field_writes(self, k: int) -> list[tuple[str, np.ndarray, np.ndarray | None, np.ndarray]]:
        """``[(term, local_ids, target_ids, values)]`` that rebuild shard ``k``'s model fields."""
        out = []
        for term, table in self._fields[k].items():
            for t, (vals, written) in table.items():
                ids = np.flatnonzero(written)
                if t is None:
                    out.append((term, ids, None, vals[ids]))
                else:
                    out.append((term, ids, np.array([t], dtype=np.int64), vals[ids][:, None]))
        return out

    def stage_forces(self, clear: bool, body_ids: np.ndarray, force: np.ndarray, torque: np.ndarray | None) -> None:
        """An ``apply_body_force`` that landed on every shard (``clear``: it cleared the earlier ones)."""
        if clear:
            self._forces.clear()
        self._forces.append((body_ids.copy(), force.copy(), None if torque is None else torque.copy()))

    def clear_forces(self) -> None:
        self._forces.clear()

    def forces(self, k: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
        """The wrenches staged on shard ``k`` since the last clear, in order."""
        a, b = self.ranges[k]
        return [(ids, f[a:b], None if t is None else t[a:b]) for ids, f, t in self._forces]

    def recover_args(self, k: int) -> tuple[Any, ...]:
        """Arguments of ``ShardHost.recover`` for a rebuilt shard ``k``."""
        return self.field_writes(k), list(self.handles), self.forces(k), self.rows[k]
