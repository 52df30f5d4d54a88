"""Host side: spawn a worker, handshake, call ops under deadlines, map faults, tear down."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import weakref
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from time import monotonic
from typing import Any, Self

from unisim_core.contract.errors import ConcurrentUseError
from unisim_core.contract.guards import DeferredInterrupt
from unisim_core.plugin.servant.records import ErrorRecord
from unisim_core.plugin.worker import pool, protocol
from unisim_core.plugin.worker.errors import (
    WorkerCallError,
    WorkerCrashedError,
    WorkerError,
    WorkerFaultedError,
    WorkerInterruptedError,
    WorkerProtocolError,
    WorkerStartupError,
    WorkerTimeoutError,
    WorkerVersionError,
)
from unisim_core.plugin.worker.protocol import HELLO, HELLO_MAGIC, MAX_FRAME, Channel, ChannelClosed
from unisim_core.plugin.worker.server import FDS_ENV, INIT_OP, SHUTDOWN_OP
from unisim_core.plugin.worker.shm import SlotSet

SHUTDOWN_GRACE = 2.0  # seconds after SHUTDOWN before SIGTERM
TERM_GRACE = 1.0  # seconds after SIGTERM before SIGKILL
EXIT_GRACE = 1.0  # seconds to wait for the exit status once the channel closed
TAIL_LINES, TAIL_BYTES = 64, 8192
#: Seconds a call may still take once Ctrl-C arrived before the worker is killed (its reply
#: within them keeps it usable: the op completed); the whole interrupt lands in about this long.
INTERRUPT_GRACE = 1.0
_POLL = 0.05  # while a call waits under a held SIGINT: how often it looks whether one arrived


def describe_exit(returncode: int) -> str:
    """'exited with code 3' or 'was killed by SIGSEGV'."""
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with code {returncode}"


class _StderrTail:
    """Drains the worker's stderr on a daemon thread, keeping the last lines."""

    def __init__(self, fd: int) -> None:
        self._lines: deque[bytes] = deque(maxlen=TAIL_LINES)
        self._lock = threading.Lock()
        self._file = open(fd, "rb")  # noqa: SIM115 - closed by the pump thread at EOF
        self._thread = threading.Thread(target=self._pump, name="unisim-worker-stderr", daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        with self._file as f:
            while line := f.readline(TAIL_BYTES):
                with self._lock:
                    self._lines.append(line)

    def text(self) -> str:
        with self._lock:
            data = b"".join(self._lines)
        return data[-TAIL_BYTES:].decode(errors="replace")

    def clear(self) -> None:
        """Forget the lines kept so far (a reused worker's tail starts with its new backend)."""
        with self._lock:
            self._lines.clear()

    def drain(self, timeout: float) -> None:
        """Wait for EOF (all writers gone), at most `timeout` seconds."""
        self._thread.join(timeout)


class _Worker:
    """The process, its channel and its stderr; `stop` is the finalizer and is idempotent."""

    def __init__(
        self, argv: Sequence[str], env: Mapping[str, str] | None, cwd: str | None, max_frame: int
    ) -> None:
        h2w_r, h2w_w = os.pipe()
        w2h_r, w2h_w = os.pipe()
        err_r, err_w = os.pipe()
        env = dict(os.environ if env is None else env)
        env[FDS_ENV] = f"{h2w_r},{w2h_w}"
        try:
            self.popen = subprocess.Popen(
                list(argv),
                env=env,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=err_w,
                stderr=err_w,
                pass_fds=(h2w_r, w2h_w),
            )
        except BaseException as e:
            for fd in (h2w_w, w2h_r, err_r):
                os.close(fd)
            raise WorkerStartupError(f"could not start worker {list(argv)}: {e}") from e
        finally:
            for fd in (h2w_r, w2h_w, err_w):
                os.close(fd)
        os.set_blocking(h2w_w, False)
        os.set_blocking(w2h_r, False)
        self.chan = Channel(w2h_r, h2w_w, max_frame=max_frame)
        self.stderr = _StderrTail(err_r)
        self.stopped = False

    def wait_exit(self, timeout: float) -> int | None:
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, graceful: bool = True, kill: bool = False) -> None:
        """SHUTDOWN (if graceful), then SIGTERM, then SIGKILL (at once with ``kill``); always reap;
        close the channel."""
        if self.stopped:
            return
        self.stopped = True
        p = self.popen
        if kill and p.poll() is None:
            p.kill()
        if p.poll() is None and graceful:
            try:
                self.chan.send({"op": SHUTDOWN_OP, "args": {}}, monotonic() + SHUTDOWN_GRACE)
            except (OSError, EOFError, TimeoutError):
                pass
            self.wait_exit(SHUTDOWN_GRACE)
        if p.poll() is None:
            p.terminate()
            if self.wait_exit(TERM_GRACE) is None:
                p.kill()
                p.wait()
        self.chan.close()
        self.stderr.drain(0.2)


def _release(worker: _Worker, slots: SlotSet) -> None:
    try:
        worker.stop()
    finally:
        slots.close()


class WorkerClient:
    """One worker process serving ops (see `server.serve`), one call at a time: a call from
    another thread while one is in flight raises ConcurrentUseError (nothing is sent). A
    SIGINT during a call is held until its reply arrived (then KeyboardInterrupt is raised), so
    Ctrl-C never leaves a request without its reply; a worker that gives no reply within
    ``INTERRUPT_GRACE`` seconds of the interrupt is killed (``WorkerInterruptedError``, the client
    faulted) and ``KeyboardInterrupt`` is raised from that fault.

    `argv` starts the worker (e.g. [sys.executable, "-m", "unisim_core.plugin.worker", "pkg.mod:factory"]),
    `env` replaces the environment like in subprocess.Popen. Construction runs INIT under
    `init_timeout` seconds, re-armed by every progress message (passed to `on_progress`); calls
    use `call_timeout`. With `reuse`, an idle worker of the same launch kept by
    :mod:`~unisim_core.plugin.worker.pool` is sent the INIT instead of starting a process, and
    `close(park=True)` hands a healthy one back. `ops` lists the worker's handlers, `slots` holds
    the shared-memory arrays this host allocates for the worker (unlinked on close). A timeout, crash or protocol error
    (and a WorkerCallError that reports possibly half-written state) poisons the client: the
    worker is stopped and every later call raises WorkerFaultedError.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        init_args: Any = None,
        init_timeout: float = 300.0,
        call_timeout: float = 30.0,
        on_progress: Callable[[str], None] | None = None,
        max_frame: int = MAX_FRAME,
        reuse: bool = False,
    ) -> None:
        self.call_timeout = call_timeout
        self.on_progress = on_progress
        self.slots = SlotSet()
        self._fault: BaseException | None = None
        self._busy = threading.Lock()
        self._parked = False
        self._pool_key = pool.launch_key(argv, env, cwd, max_frame) if reuse else None
        idle = pool.take(self._pool_key) if reuse else None
        if idle is not None:
            idle.stderr.clear()
            try:
                self._adopt(idle)
                self.ops: list[str] = self._start(init_args, init_timeout, fresh=False)
                return
            except WorkerStartupError as e:
                if not isinstance(e.__cause__, ChannelClosed | OSError):  # the factory refused: as a new one would
                    self.close()
                    raise
            except (ChannelClosed, OSError):
                pass
            self._finalize.detach()  # it died while idle: start a new one
            self._fault = None
            idle.stop(graceful=False)
        self._adopt(_Worker(argv, env, cwd, max_frame))
        try:
            self.ops = self._start(init_args, init_timeout, fresh=True)
        except BaseException:
            self.close()
            raise

    def _adopt(self, worker: _Worker) -> None:
        self._worker = worker
        self.pid = worker.popen.pid
        self._finalize = weakref.finalize(self, _release, worker, self.slots)

    def _start(self, init_args: Any, timeout: float, fresh: bool) -> list[str]:
        """INIT (after the HELLO exchange for a new worker; a pooled one has had it)."""
        chan = self._worker.chan
        try:
            chan.pack({"op": INIT_OP, "args": init_args})
            deadline = monotonic() + timeout
            if fresh:
                chan.write_raw(HELLO.pack(HELLO_MAGIC, protocol.PROTOCOL_VERSION), deadline)
            chan.flush(deadline)
            if fresh:
                magic, version = HELLO.unpack(chan.read_raw(HELLO.size, deadline))
                if magic != HELLO_MAGIC:
                    raise WorkerProtocolError(f"worker sent {magic!r} instead of a HELLO")
                if version != protocol.PROTOCOL_VERSION:
                    raise WorkerVersionError(
                        f"protocol version mismatch: host speaks {protocol.PROTOCOL_VERSION}, "
                        f"worker speaks {version}"
                    )
            return self._await(INIT_OP, timeout, deadline)
        except WorkerCallError as e:
            raise self._fail(WorkerStartupError(f"INIT failed: {e}"), INIT_OP, timeout) from e
        except BaseException as e:
            err = self._fail(e, INIT_OP, timeout)
            if err is e:
                raise
            raise err from e

    def call(self, op: str, /, **args: Any) -> Any:
        """Run handler `op` with keyword `args` in the worker and return its result."""
        return self.request(op, args)

    def request(
        self, op: str, args: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> Any:
        """`call` with an explicit args mapping and an optional per-call timeout (seconds)."""
        if self._fault is not None:
            raise WorkerFaultedError(self._fault)
        if self._parked or self._worker.stopped:
            raise WorkerError("worker client is closed")
        return self._roundtrip(op, {"op": op, "args": {} if args is None else args}, timeout)

    def prepare(self, op: str, args: Mapping[str, Any] | None = None) -> bytes:
        """Encode the request frame for `op(**args)` once; hot loops re-send it with `request_prepared`."""
        return protocol.encode_frame({"op": op, "args": {} if args is None else dict(args)},
                                     self._worker.chan.max_frame)

    def request_prepared(self, op: str, frame: bytes, *, timeout: float | None = None) -> Any:
        """`request` with a frame from `prepare` (`op` names it in errors); nothing is re-encoded."""
        if self._fault is not None:
            raise WorkerFaultedError(self._fault)
        if self._parked or self._worker.stopped:
            raise WorkerError("worker client is closed")
        return self._roundtrip(op, frame, timeout)

    def _roundtrip(self, op: str, frame: bytes | dict, timeout: float | None) -> Any:
        """Send ``frame`` (prepared bytes, or a request to encode) and await the reply."""
        if not self._busy.acquire(False):
            raise ConcurrentUseError(f"worker client: op {op!r} called while another call is in flight on another "
                                     f"thread; a worker serves one call at a time (nothing was sent)")
        try:
            if type(frame) is dict:
                self._worker.chan.pack(frame)  # bad args: nothing sent
                frame = None
            with DeferredInterrupt() as interrupt:
                interrupt.message = f"interrupted during worker op {op!r} (the op completed; the worker is usable)"
                try:
                    return self._exchange(op, frame, timeout, DeferredInterrupt.holder())
                except WorkerInterruptedError as fault:
                    raise KeyboardInterrupt(str(fault)) from fault
        finally:
            self._busy.release()

    def _exchange(self, op: str, frame: bytes | None, timeout: float | None,
                  interrupt: DeferredInterrupt | None = None) -> Any:
        chan = self._worker.chan
        timeout = self.call_timeout if timeout is None else timeout
        try:
            deadline = monotonic() + timeout
            if frame is None:
                chan.flush(deadline)
            else:
                chan.write_raw(frame, deadline)
            return self._await(op, timeout, deadline, interrupt)
        except WorkerCallError as e:
            if e.poisoned:
                self._fail(e, op, timeout)
            raise
        except BaseException as e:
            err = self._fail(e, op, timeout)
            if err is e:
                raise
            raise err from e

    def _recv_interruptible(self, op: str, deadline: float, interrupt: DeferredInterrupt) -> Any:
        """One reply frame, looking every ``_POLL`` s whether ``interrupt`` holds a Ctrl-C; once
        it does, at most ``INTERRUPT_GRACE`` s more (then ``WorkerInterruptedError``)."""
        recv = self._worker.chan.recv
        grace_end = None
        while True:
            now = monotonic()
            if grace_end is None and interrupt.stop:
                grace_end = now + INTERRUPT_GRACE
            try:
                return recv(min(deadline, now + _POLL if grace_end is None else grace_end))  # restartable
            except TimeoutError:
                now = monotonic()
                if now >= deadline:
                    raise
                if grace_end is not None and now >= grace_end:
                    raise WorkerInterruptedError(
                        f"interrupted: the worker gave no answer to op {op!r} within {INTERRUPT_GRACE:g} s of "
                        f"the interrupt (hung, stopped or in one long engine call); it was killed and the "
                        f"backend is unusable", stderr_tail=self._worker.stderr.text()) from None

    def _await(self, op: str, timeout: float, deadline: float, interrupt: DeferredInterrupt | None = None) -> Any:
        recv = self._worker.chan.recv
        while True:
            msg = recv(deadline) if interrupt is None else self._recv_interruptible(op, deadline, interrupt)
            ok = msg.get("ok") if type(msg) is dict else None
            if ok is True:
                return msg.get("result")
            if ok is False:
                err = msg.get("error")
                if type(err) is dict:
                    poisoned = msg.get("poisoned") is not False
                    record = ErrorRecord.from_plain(err, safe=not poisoned)
                    raise WorkerCallError(
                        op,
                        record.type,
                        record.message,
                        str(err.get("traceback")),
                        poisoned=poisoned,
                        stderr_tail=self._worker.stderr.text(),
                        remote_attrs=record.attrs,
                        record=record,
                    )
            elif type(msg) is dict and type(msg.get("progress")) is str:
                deadline = monotonic() + timeout
                if self.on_progress is not None:
                    self.on_progress(msg["progress"])
                continue
            raise WorkerProtocolError(f"unexpected message {msg!r}")

    def _fail(self, exc: BaseException, op: str, timeout: float) -> BaseException:
        """Poison the client with the WorkerError `exc` maps to, stop the worker, return it."""
        w = self._worker
        what = "INIT" if op == INIT_OP else f"op {op!r}"
        if isinstance(exc, ChannelClosed):
            rc = w.wait_exit(EXIT_GRACE)
            w.stderr.drain(0.5)
            tail = w.stderr.text()
            if rc is None:
                err: BaseException = WorkerProtocolError(
                    f"worker closed the channel during {what} but kept running ({exc})",
                    stderr_tail=tail,
                )
            elif op == INIT_OP:
                err = WorkerStartupError(
                    f"worker {describe_exit(rc)} during INIT", returncode=rc, stderr_tail=tail
                )
            else:
                err = WorkerCrashedError(
                    f"worker {describe_exit(rc)} during {what}", returncode=rc, stderr_tail=tail
                )
        elif isinstance(exc, TimeoutError):
            hint = " (progress messages re-arm it)" if op == INIT_OP else ""
            err = WorkerTimeoutError(
                f"worker gave no answer to {what} within {timeout:g} s{hint}",
                stderr_tail=w.stderr.text(),
            )
        elif isinstance(exc, WorkerProtocolError) and not exc.stderr_tail:
            err = type(exc)(str(exc), stderr_tail=w.stderr.text())
        else:
            err = exc  # already complete, or not ours (KeyboardInterrupt, a progress callback)
        self._fault = err
        w.stop(graceful=False, kill=isinstance(err, WorkerInterruptedError))
        return err

    def forget(self) -> None:
        """In a forked child: let go of the parent's worker without stopping it or unlinking its
        shared memory (at exit either); later calls raise WorkerError."""
        self._finalize.detach()
        self._worker.stopped = True

    @property
    def faulted(self) -> BaseException | None:
        """The fault that poisoned this client, if any."""
        return self._fault

    @property
    def returncode(self) -> int | None:
        """The worker's exit status once it has been reaped, else None."""
        return self._worker.popen.poll()

    def stderr_tail(self) -> str:
        """The last lines the worker wrote to stderr (and, redirected, to stdout)."""
        return self._worker.stderr.text()

    def close(self, park: bool = False) -> None:
        """Stop the worker (SHUTDOWN, SIGTERM, SIGKILL; reaped) and unlink all slots; idempotent.

        ``park``: a client made with ``reuse=True`` whose worker is healthy (no fault, alive, its
        hosted backend already closed by the caller) hands it to :mod:`~unisim_core.plugin.worker.pool`
        instead; it is stopped when the pool is off or full."""
        w = self._worker
        if park and self._pool_key is not None and self._fault is None and self._finalize.alive \
                and not w.stopped and w.popen.poll() is None:
            self._finalize.detach()
            self._parked = True  # the worker is the pool's now: this client sends nothing more
            try:
                self.slots.close()
            finally:
                if not pool.park(self._pool_key, w):
                    w.stop()
            return
        self._finalize()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
