"""Worker side: take over the channel, handshake, INIT through a factory, dispatch requests.

The channel is a pair of dedicated pipes whose fd numbers the host passes (via `pass_fds`) in
the environment variable UNISIM_WORKER_FDS="<read fd>,<write fd>". Fds 0/1/2 never carry the
protocol: at start the worker points fd 1 and `sys.stdout` at fd 2, so banners or C-level
writes to stdout land in the stderr tail the host keeps instead of in the framing.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
from collections.abc import Callable, Mapping
from typing import Any

from unisim_core.plugin.servant.records import ErrorRecord
from unisim_core.plugin.worker import protocol
from unisim_core.plugin.worker.protocol import HELLO, HELLO_MAGIC, Channel, ChannelClosed

FDS_ENV = "UNISIM_WORKER_FDS"
INIT_OP = "__init__"
SHUTDOWN_OP = "__shutdown__"

_OK_NONE = protocol.encode_frame({"ok": True, "result": None})

Progress = Callable[[str], None]
Factory = Callable[[Any, Progress], Mapping[str, Callable[..., Any]]]


def connect() -> Channel:
    """Protect stdout, open the channel from UNISIM_WORKER_FDS and send this side's HELLO."""
    spec = os.environ.get(FDS_ENV)
    if spec is None:
        raise RuntimeError(f"{FDS_ENV} is not set: a worker must be started by WorkerClient")
    rfd, wfd = (int(x) for x in spec.split(","))
    for fd in (rfd, wfd):
        os.set_inheritable(fd, False)  # grandchildren must not hold the channel open
    sys.stdout.flush()
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    faulthandler.enable()  # a fatal signal dumps Python tracebacks into the stderr tail
    # Ctrl-C in a terminal reaches the whole process group: the host handles it (it lets the
    # running call finish, then raises KeyboardInterrupt), so the worker must not die of it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    chan = Channel(rfd, wfd)
    chan.write_raw(HELLO.pack(HELLO_MAGIC, protocol.PROTOCOL_VERSION))
    return chan


def _error(e: BaseException, *, poisoned: bool) -> dict[str, Any]:
    return {"ok": False, "poisoned": poisoned, "error": ErrorRecord.capture(e, safe=not poisoned).to_plain()}


def serve(
    factory: Factory,
    *,
    safe_errors: tuple[type[BaseException], ...] = (),
    channel: Channel | None = None,
) -> None:
    """Run the worker until SHUTDOWN or until the host closes the channel.

    INIT calls `factory(init_args, progress)`, which returns the handlers {op: callable};
    `progress(msg)` sends a progress frame that re-arms the host's INIT deadline (handlers may
    call it too). Requests {"op", "args"} call `handlers[op](**args)`; the reply is
    {"ok": True, "result": ...} or an error reporting `poisoned`: False for unknown ops, bad
    request shapes, unencodable results and exceptions in `safe_errors` (input rejected before
    touching state), True for any other exception.

    A factory may declare its own safe errors as an attribute ``factory.safe_errors`` (a tuple of
    exception classes); they are added to `safe_errors`. A factory that sets ``factory.reusable =
    True`` serves several INITs in turn: an INIT frame among the requests (the host reuses this
    idle worker after the previous backend's ``close`` op) drops the old handlers and runs the
    factory again, replied to as the first INIT; a failed re-INIT ends the worker. Without it, a
    second INIT is an unknown op.
    """
    safe_errors = tuple(safe_errors) + tuple(getattr(factory, "safe_errors", ()))
    chan = channel if channel is not None else connect()
    magic, version = HELLO.unpack(chan.read_raw(HELLO.size))
    if magic != HELLO_MAGIC or version != protocol.PROTOCOL_VERSION:
        sys.stderr.write(
            f"unisim worker: protocol version mismatch: host speaks {version}, "
            f"worker speaks {protocol.PROTOCOL_VERSION}\n"
        )
        raise SystemExit(2)
    init = chan.recv()

    def progress(message: str) -> None:
        chan.send({"progress": str(message)})

    reusable = getattr(factory, "reusable", False) is True
    while True:
        try:
            handlers = dict(factory(init["args"], progress))
        except Exception as e:  # noqa: BLE001 - reported to the host
            chan.send(_error(e, poisoned=True))
            raise SystemExit(1) from None
        chan.send({"ok": True, "result": sorted(handlers)})
        init = _serve_requests(chan, handlers, safe_errors, reusable)
        if init is None:
            return
        handlers = {}  # the previous backend's handlers go before the next one is built


def _serve_requests(chan: Channel, handlers: Mapping[str, Callable[..., Any]],
                    safe_errors: tuple[type[BaseException], ...], reusable: bool) -> dict[str, Any] | None:
    """Serve requests until SHUTDOWN or a closed channel (``None``), or a re-INIT (its frame)."""
    while True:
        try:
            req = chan.recv()
        except ChannelClosed:
            return None  # the host went away
        op = req.get("op") if type(req) is dict else None
        if op == SHUTDOWN_OP:
            chan.send({"ok": True, "result": None})
            return None
        if op == INIT_OP and reusable:
            return req
        fn = handlers.get(op) if type(op) is str else None
        args = req.get("args") if fn is not None else None
        if type(args) is not dict:
            bad = KeyError(f"unknown op {op!r}") if fn is None else TypeError("args must be a dict")
            chan.send(_error(bad, poisoned=False))
            continue
        try:
            result = fn(**args)
        except safe_errors as e:
            chan.send(_error(e, poisoned=False))
            continue
        except Exception as e:  # noqa: BLE001 - reported to the host
            chan.send(_error(e, poisoned=True))
            continue
        if result is None:
            chan.write_raw(_OK_NONE)  # the common reply, encoded once
            continue
        try:
            chan.send({"ok": True, "result": result})
        except (TypeError, ValueError) as e:  # not plain data, or over the frame cap
            chan.send(_error(e, poisoned=False))
