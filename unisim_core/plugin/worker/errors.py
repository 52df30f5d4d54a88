"""Faults of a worker process and its channel; every one is a `WorkerError`."""

from __future__ import annotations

from unisim_core.contract.errors import EngineError
from unisim_core.plugin.servant.records import ErrorRecord


class WorkerError(EngineError):
    """Base class (an `EngineError`, so a `UniSimError` and a `RuntimeError`); the message ends
    with the tail of the worker's stderr when there is one."""

    def __init__(self, message: str, *, stderr_tail: str = "") -> None:
        self.stderr_tail = stderr_tail
        if stderr_tail:
            message = f"{message}\n--- worker stderr (tail) ---\n{stderr_tail.rstrip()}"
        super().__init__(message)


class WorkerStartupError(WorkerError):
    """The worker failed or exited before finishing INIT; `returncode` is None if it still ran."""

    def __init__(self, message: str, *, returncode: int | None = None, stderr_tail: str = ""):
        self.returncode = returncode
        super().__init__(message, stderr_tail=stderr_tail)


class WorkerTimeoutError(WorkerError):
    """The worker did not answer within the deadline."""


class WorkerInterruptedError(WorkerTimeoutError):
    """Ctrl-C arrived during a call and the worker gave no answer within the grace that follows
    it (hung, stopped, or in one long engine call): it was killed; the client raises
    ``KeyboardInterrupt`` from this fault and refuses later calls."""


class WorkerCrashedError(WorkerError):
    """The worker process died after INIT (`returncode` < 0 means killed by that signal)."""

    def __init__(self, message: str, *, returncode: int, stderr_tail: str = "") -> None:
        self.returncode = returncode
        super().__init__(message, stderr_tail=stderr_tail)


class WorkerProtocolError(WorkerError):
    """The channel carried something that is not a well-formed frame, or closed mid-frame."""


class WorkerVersionError(WorkerProtocolError):
    """Host and worker speak different protocol versions."""


class WorkerCallError(WorkerError):
    """A handler raised in the worker; `poisoned` tells whether worker state may be half-written;
    `record` is the worker's `ErrorRecord` of it (`record.rebuild()`: the exception on this side)."""

    def __init__(
        self,
        op: str,
        remote_type: str,
        remote_message: str,
        remote_traceback: str,
        *,
        poisoned: bool,
        stderr_tail: str = "",
        remote_attrs: dict | None = None,
        record: ErrorRecord | None = None,
    ) -> None:
        self.op = op
        self.record = record if record is not None else ErrorRecord(
            remote_type, remote_message, remote_traceback, dict(remote_attrs or {}), safe=not poisoned)
        self.remote_attrs = dict(remote_attrs or {})
        self.remote_type = remote_type
        self.remote_message = remote_message
        self.remote_traceback = remote_traceback
        self.poisoned = poisoned
        super().__init__(
            f"worker op {op!r} raised {remote_type}: {remote_message}\n{remote_traceback.rstrip()}",
            stderr_tail=stderr_tail,
        )


class WorkerFaultedError(WorkerError):
    """The client refuses calls after an earlier fault (`fault`) left the worker unusable."""

    def __init__(self, fault: BaseException) -> None:
        self.fault = fault
        first = str(fault).partition("\n")[0]
        super().__init__(f"worker is unusable after an earlier {type(fault).__name__}: {first}")
