"""Errors of the Ray-sharded backend. Each names the shard(s) and the envs they own."""

from __future__ import annotations

from unisim_core.contract.errors import EngineError

__all__ = ["ShardError", "ShardDiedError", "ShardTimeoutError", "ShardCallError", "ShardStartupError",
           "ShardFaultedError", "ShardRecoveredWarning"]


class ShardError(EngineError):
    """A shard failed; ``shards`` lists ``(index, env_start, env_stop)`` of the failing shards.

    After a ``ShardError`` the backend is poisoned: every later call raises
    :class:`ShardFaultedError` (results are never partial).
    """

    def __init__(self, message: str, shards: tuple[tuple[int, int, int], ...] = ()) -> None:
        super().__init__(message)
        self.shards = tuple(shards)


class ShardDiedError(ShardError):
    """A shard's actor died or its node went away (and ``max_shard_restarts`` allowed no rebuild)."""


class ShardTimeoutError(ShardError):
    """A shard gave no answer within ``call_timeout_s`` (or ``init_timeout_s``)."""


class ShardCallError(ShardError):
    """The inner backend raised inside a shard and the envs may be half-updated."""


class ShardStartupError(ShardError):
    """A shard could not start its actor or build the inner backend."""


class ShardFaultedError(ShardError):
    """A call on a backend that an earlier shard fault poisoned; ``__cause__`` is that fault."""


class ShardRecoveredWarning(RuntimeWarning):
    """A shard's actor or node died and the shard was rebuilt from the host's record; the call
    that failed was retried and the trajectory goes on (``max_shard_restarts``)."""
