"""Generic subprocess transport: a host `WorkerClient` drives a worker running `serve`.

Plain-data frames over dedicated pipes (see `protocol`), bulk arrays in host-allocated shared
memory (see `shm`), deadlines, fault mapping and escalating teardown (see `client`).
"""

from .client import WorkerClient, describe_exit
from .errors import (
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
from .protocol import MAX_FRAME, PROTOCOL_VERSION, Channel, ChannelClosed, decode, encode
from .server import connect, serve
from .shm import ShmSlot, SlotSet

__all__ = [
    "MAX_FRAME",
    "PROTOCOL_VERSION",
    "Channel",
    "ChannelClosed",
    "ShmSlot",
    "SlotSet",
    "WorkerCallError",
    "WorkerClient",
    "WorkerCrashedError",
    "WorkerError",
    "WorkerFaultedError",
    "WorkerProtocolError",
    "WorkerStartupError",
    "WorkerInterruptedError",
    "WorkerTimeoutError",
    "WorkerVersionError",
    "connect",
    "decode",
    "describe_exit",
    "encode",
    "serve",
]
