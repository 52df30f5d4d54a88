"""Generic subprocess transport: a host `WorkerClient` drives a worker running `serve`.

Plain-data frames over dedicated pipes (see `protocol`), bulk arrays in host-allocated shared
memory (see `shm`), deadlines, fault mapping and escalating teardown (see `client`).
"""

from unisim_core.plugin.worker.client import WorkerClient, describe_exit
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
from unisim_core.plugin.worker.protocol import MAX_FRAME, PROTOCOL_VERSION, Channel, ChannelClosed, decode, encode
from unisim_core.plugin.worker.server import connect, serve
from unisim_core.plugin.worker.shm import ShmSlot, SlotSet

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
