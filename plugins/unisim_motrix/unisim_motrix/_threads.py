"""MotrixSim's process-wide worker pool: initialised at most once per process."""

from __future__ import annotations

import threading

from unisim_core.contract.errors import InvalidInputError

from ._errors import engine_call

__all__ = ["ensure_thread_pool", "ThreadPoolConflictError"]

_lock = threading.Lock()
_requested: int | None = None  # thread count this process initialised the pool with


class ThreadPoolConflictError(InvalidInputError):
    """A second, different ``threads`` request after the pool was initialised."""


def ensure_thread_pool(threads: int | None) -> None:
    """Initialise the pool with ``threads`` workers, or check a previous request matches.

    ``None`` asks for nothing. The same request twice is fine; a different one raises
    :class:`ThreadPoolConflictError`. If the engine refuses (the pool was already created,
    e.g. lazily by an earlier model load or step) the error says so.
    """
    global _requested
    if threads is None:
        return
    with _lock:
        if _requested is not None:
            if _requested != threads:
                raise ThreadPoolConflictError(
                    f"threads: MotrixSim's thread pool is process-wide and was already initialised with "
                    f"{_requested} thread(s) in this process; cannot re-initialise it with {threads}. "
                    f"Use threads={_requested} or threads=None."
                )
            return
        import motrixsim

        try:
            with engine_call("init_thread_pool"):
                motrixsim.init_thread_pool(num_threads=threads)
        except Exception as exc:
            raise ThreadPoolConflictError(
                f"threads: cannot initialise MotrixSim's thread pool with {threads} thread(s): it was already "
                f"created in this process (it must be set before any MotrixSim model is loaded or stepped). "
                f"Pass threads=None, or set it in a fresh process. Engine said: {exc.__cause__ or exc}"
            ) from exc
        _requested = threads
