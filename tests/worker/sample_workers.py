"""Worker programs for the transport tests.

Run as `python -m unisim_core.plugin.worker sample_workers:<factory>`, or as a script
`python sample_workers.py <factory> [protocol version]`, which serves with
safe_errors=(ValueError,) and can pretend to speak another protocol version.
"""

from __future__ import annotations

import os
import signal
import struct
import sys
import time

import numpy as np

from unisim_core.plugin.worker import SlotSet, protocol, serve
from unisim_core.plugin.worker.server import FDS_ENV, connect


def _channel_wfd() -> int:
    return int(os.environ[FDS_ENV].split(",")[1])


def basic(args, progress):
    """Every op the tests need from a healthy worker."""
    state = {}

    def attach(slots):
        state["slots"] = SlotSet.attach(slots)
        return sorted(slots)

    def step(scale=2.0):
        s = state["slots"]
        np.multiply(s["act"], scale, out=s["obs"])

    def noisy():
        print("banner from print()")
        sys.stdout.flush()
        os.write(1, b"raw write to fd 1\n")
        return "fine"

    def garbage():
        os.write(_channel_wfd(), b"this is not a frame\n")
        return "after garbage"

    def huge_header():
        os.write(_channel_wfd(), struct.pack("<2sI", protocol.FRAME_MAGIC, 0xFFFFFFFF))
        time.sleep(30)

    def partial(then):
        os.write(_channel_wfd(), struct.pack("<2sI", protocol.FRAME_MAGIC, 100) + b"x" * 10)
        if then == "die":
            os._exit(3)
        os.close(_channel_wfd())
        time.sleep(30)

    def stubborn_hang():
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(30)

    def fail():
        raise RuntimeError("engine exploded")

    def reject(x):
        raise ValueError(f"bad input {x}")

    return {
        "echo": lambda value: value,
        "noop": lambda: None,
        "init_args": lambda: args,
        "attach": attach,
        "step": step,
        "noisy": noisy,
        "garbage": garbage,
        "huge_header": huge_header,
        "partial": partial,
        "hang": lambda: time.sleep(30),
        "stubborn_hang": stubborn_hang,
        "segfault": lambda: os.kill(os.getpid(), signal.SIGSEGV),
        "fail": fail,
        "reject": reject,
    }


def slow_init(args, progress):
    """Takes args["seconds"] to start, reporting progress every args["every"] s (if set)."""
    end = time.monotonic() + args["seconds"]
    while time.monotonic() < end:
        time.sleep(args["every"] or args["seconds"])
        if args["every"]:
            progress(f"loading, {end - time.monotonic():.1f} s left")
    return {"noop": lambda: None}


def exit_in_init(args, progress):
    sys.stderr.write("engine missing: libfake.so not found\n")
    sys.stderr.flush()
    sys.exit(3)


def fail_in_init(args, progress):
    raise RuntimeError("no license server")


if __name__ == "__main__":
    if len(sys.argv) > 2:
        protocol.PROTOCOL_VERSION = int(sys.argv[2])
    chan = connect()
    serve(globals()[sys.argv[1]], safe_errors=(ValueError,), channel=chan)
