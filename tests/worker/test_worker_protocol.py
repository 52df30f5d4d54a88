"""Codec and framing, in-process over real pipes."""

from __future__ import annotations

import math
import os
import struct
import threading
import tracemalloc
from time import monotonic

import numpy as np
import pytest

from unisim_core.plugin.worker import Channel, ChannelClosed, WorkerProtocolError, decode, encode
from unisim_core.plugin.worker.protocol import FRAME_MAGIC, HEADER

PLAIN = {
    "none": None,
    "bools": [True, False],
    "ints": [0, -1, 2**63 - 1, -(2**63), 2**200, -(2**90) - 7],
    "floats": [0.0, -0.0, 1.5e-300, math.inf, -math.inf],
    "str": ["", "ascii", "ünïcødé ✓", "x" * 1000],
    "bytes": [b"", b"\x00\xff" * 50],
    "nested": {"a": [{"b": [[], {}]}], 7: "int key", None: b"k", 2.5: True, b"raw": [None]},
}


def test_round_trip_of_all_plain_types():
    assert decode(encode(PLAIN)) == PLAIN
    assert math.isnan(decode(encode(float("nan"))))


def test_tuples_bytes_likes_and_subclasses_become_plain():
    value = (1, (2, 3), bytearray(b"ab"), memoryview(b"cd"), np.float64(1.5), True)
    assert decode(encode(value)) == [1, [2, 3], b"ab", b"cd", 1.5, True]
    assert type(decode(encode(np.float64(2.0)))) is float


@pytest.mark.parametrize("bad", [object(), {1, 2}, np.int64(3), np.zeros(2), [1, {"k": object()}]])
def test_non_plain_data_is_rejected(bad):
    with pytest.raises(TypeError, match="not plain data"):
        encode(bad)


@pytest.mark.parametrize(
    "blob",
    [
        b"",
        b"Z",  # unknown tag
        b"s\x05\x00\x00\x00ab",  # string overruns
        b"i\x01\x02",  # truncated int
        b"l\xff\xff\xff\xff",  # 4 G items announced in 5 bytes
        b"NN",  # trailing bytes
        b"s\x02\x00\x00\x00\xff\xfe",  # invalid utf-8
        b"d\x01\x00\x00\x00l\x00\x00\x00\x00N",  # unhashable key
        b"l\x01\x00\x00\x00" * 200 + b"N",  # nesting too deep
    ],
)
def test_malformed_payloads_raise_protocol_error(blob):
    with pytest.raises(WorkerProtocolError, match="malformed"):
        decode(blob)


def _channel_pair() -> tuple[Channel, Channel]:
    """Two ends of a duplex channel made of two pipes, host-style (non-blocking fds)."""
    a_r, b_w = os.pipe()
    b_r, a_w = os.pipe()
    for fd in (a_r, b_w, b_r, a_w):
        os.set_blocking(fd, False)
    return Channel(a_r, a_w), Channel(b_r, b_w)


@pytest.fixture
def pipe_pair():
    """(reader Channel, the peer Channel whose wfd feeds it raw bytes)."""
    chan, peer = _channel_pair()
    yield chan, peer
    chan.close()
    peer.close()


def _frame(value) -> bytes:
    payload = encode(value)
    return HEADER.pack(FRAME_MAGIC, len(payload)) + payload


def test_frames_split_and_coalesced(pipe_pair):
    chan, peer = pipe_pair
    data = _frame({"a": 1}) + _frame([2]) + _frame("three")
    os.write(peer.wfd, data[:3])
    with pytest.raises(TimeoutError):
        chan.recv(monotonic() + 0.05)
    os.write(peer.wfd, data[3:])
    deadline = monotonic() + 1
    assert [chan.recv(deadline) for _ in range(3)] == [{"a": 1}, [2], "three"]


def test_large_frame_through_a_small_pipe():
    reader, writer = _channel_pair()
    big = {"blob": os.urandom(3 << 20), "n": list(range(1000))}
    t = threading.Thread(target=lambda: writer.send(big, monotonic() + 10))
    t.start()
    assert reader.recv(monotonic() + 10) == big
    t.join()
    reader.close()
    writer.close()


def test_oversize_header_is_rejected_before_allocating(pipe_pair):
    chan, peer = pipe_pair
    os.write(peer.wfd, HEADER.pack(FRAME_MAGIC, 0xFFFFFFFF))  # announces 4 GiB
    tracemalloc.start()
    try:
        with pytest.raises(WorkerProtocolError, match="4294967295 bytes, over"):
            chan.recv(monotonic() + 1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_outgoing_frame_over_the_cap_is_refused_before_writing():
    chan, peer = _channel_pair()
    chan.max_frame = 1000
    with pytest.raises(ValueError, match="exceeds"):
        chan.send(b"x" * 2000)
    with pytest.raises(TimeoutError):
        peer.recv(monotonic() + 0.01)  # nothing was written
    chan.close()
    peer.close()


def test_garbage_header(pipe_pair):
    chan, peer = pipe_pair
    os.write(peer.wfd, b"hello, world\n")
    with pytest.raises(WorkerProtocolError, match="non-protocol bytes"):
        chan.recv(monotonic() + 1)


def test_partial_frame_then_eof(pipe_pair):
    chan, peer = pipe_pair
    os.write(peer.wfd, struct.pack("<2sI", FRAME_MAGIC, 50) + b"abc")
    peer.close()
    with pytest.raises(ChannelClosed, match="incomplete frame") as info:
        chan.recv(monotonic() + 1)
    assert info.value.partial
