"""Wire format: a tagged binary codec for plain data, length-prefixed frames, the handshake.

A frame is a 6-byte header (2 magic bytes, u32 little-endian payload length) followed by one
encoded value. Values are None, bool, int, float, str, bytes (bytearray/memoryview encode as
bytes), list (tuples encode as lists) and dict; anything else is a TypeError on encode. Decoding
never evaluates anything and rejects malformed input with `WorkerProtocolError`.

The handshake is one fixed 8-byte HELLO (b"USIM" + u32 version) each way, outside the framing,
so that a peer of any version can read it.
"""

from __future__ import annotations

import os
import select
import struct
from time import monotonic, perf_counter
from typing import Any

from unisim_core.plugin.worker.errors import WorkerProtocolError

PROTOCOL_VERSION = 1
MAX_FRAME = 64 << 20  # bulk data travels in shared memory, not in frames
MAX_DEPTH = 64

HELLO = struct.Struct("<4sI")
HELLO_MAGIC = b"USIM"
HEADER = struct.Struct("<2sI")
FRAME_MAGIC = b"\xc5\x1f"
_HEADER_PAD = bytes(HEADER.size)
#: Seconds a reader polls without sleeping before it blocks. Waking a sleeping process costs tens
#: of µs on many machines (more than a short step); a reply that arrives within this window is
#: read at once. Bounded, so a long call costs at most this much CPU. UNISIM_WORKER_SPIN_US overrides.
SPIN_S = float(os.environ.get("UNISIM_WORKER_SPIN_US", "200")) * 1e-6

_U32 = struct.Struct("<I")
_I64 = struct.Struct("<q")
_F64 = struct.Struct("<d")
_N, _T, _F, _INT, _BIG, _FLT, _STR, _BYT, _LST, _DCT = b"NTFiIfsbld"
_TAG_N, _TAG_T, _TAG_F = b"N", b"T", b"F"
_TAG_INT, _TAG_FLT = b"i", b"f"
_TAG_BIG, _TAG_STR, _TAG_BYT, _TAG_LST, _TAG_DCT = b"I", b"s", b"b", b"l", b"d"
_PACK_U32, _PACK_I64, _PACK_F64 = _U32.pack, _I64.pack, _F64.pack
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1


class ChannelClosed(EOFError):
    """The peer closed its end; `partial` is True when it happened inside a frame."""

    def __init__(self, message: str, *, partial: bool) -> None:
        super().__init__(message)
        self.partial = partial


_STR_CACHE: dict[str, bytes] = {}  # encodings of short strings (op names, keys) seen so far
_STR_CACHE_MAX, _STR_CACHED_LEN = 4096, 64


def _encode_str(v: str) -> bytes:
    b = v.encode()
    e = _TAG_STR + _PACK_U32(len(b)) + b
    if len(b) <= _STR_CACHED_LEN and len(_STR_CACHE) < _STR_CACHE_MAX:
        _STR_CACHE[v] = e
    return e


def _encode(v: Any, out: bytearray) -> None:
    t = type(v)
    if t is str:
        out += _STR_CACHE.get(v) or _encode_str(v)
    elif t is dict:
        out += _TAG_DCT + _PACK_U32(len(v))
        for k, x in v.items():
            if type(k) is str:
                out += _STR_CACHE.get(k) or _encode_str(k)
            else:
                _encode(k, out)
            _encode(x, out)
    elif t is int:
        if _I64_MIN <= v <= _I64_MAX:
            out += _TAG_INT + _PACK_I64(v)
        else:
            b = v.to_bytes((v.bit_length() + 8) // 8, "little", signed=True)
            out += _TAG_BIG + _PACK_U32(len(b))
            out += b
    elif t is float:
        out += _TAG_FLT + _PACK_F64(v)
    elif v is None:
        out += _TAG_N
    elif t is bool:
        out += _TAG_T if v else _TAG_F
    elif t is list or t is tuple:
        out += _TAG_LST + _PACK_U32(len(v))
        for x in v:
            _encode(x, out)
    elif t is bytes or t is bytearray or t is memoryview:
        out += _TAG_BYT + _PACK_U32(len(v) if t is not memoryview else v.nbytes)
        out += v
    elif isinstance(v, (bool, int, float, str, bytes, list, tuple, dict)):
        # Subclasses (IntEnum, numpy.float64, ...) travel as their plain base type.
        for base in (bool, int, float, str, bytes, list, dict):
            if isinstance(v, base):
                return _encode(base(v), out)
        _encode(list(v), out)
    else:
        raise TypeError(f"not plain data, cannot cross to a worker: {t.__module__}.{t.__name__}")


def encode_into(value: Any, out: bytearray) -> None:
    """Append the encoding of `value` to `out` (TypeError for non-plain data)."""
    _encode(value, out)


def encode(value: Any) -> bytes:
    """Encode one plain value."""
    out = bytearray()
    _encode(value, out)
    return bytes(out)


def encode_frame(value: Any, max_frame: int = MAX_FRAME) -> bytes:
    """One complete frame (header + payload) for `value`, to send later with `Channel.write_raw`."""
    out = bytearray(_HEADER_PAD)
    _encode(value, out)
    size = len(out) - HEADER.size
    if size > max_frame:
        raise ValueError(f"frame of {size} bytes exceeds the {max_frame}-byte cap")
    HEADER.pack_into(out, 0, FRAME_MAGIC, size)
    return bytes(out)


def _decode(buf: bytes | bytearray, pos: int, end: int, depth: int) -> tuple[Any, int]:
    if pos >= end:
        raise ValueError("truncated value")
    tag = buf[pos]
    pos += 1
    if tag == _STR or tag == _BYT or tag == _BIG:
        (n,) = _U32.unpack_from(buf, pos)
        pos += 4
        stop = pos + n
        if stop > end:
            raise ValueError(f"{n}-byte item overruns the frame")
        if tag == _STR:
            return buf[pos:stop].decode(), stop
        if tag == _BYT:
            return bytes(buf[pos:stop]), stop
        return int.from_bytes(buf[pos:stop], "little", signed=True), stop
    if tag == _DCT or tag == _LST:
        (n,) = _U32.unpack_from(buf, pos)
        pos += 4
        if n > end - pos:  # every item takes at least one byte
            raise ValueError(f"container of {n} items cannot fit in {end - pos} bytes")
        if depth >= MAX_DEPTH:
            raise ValueError(f"nesting deeper than {MAX_DEPTH}")
        depth += 1
        if tag == _LST:
            items = []
            for _ in range(n):
                x, pos = _decode(buf, pos, end, depth)
                items.append(x)
            return items, pos
        d = {}
        for _ in range(n):
            k, pos = _decode(buf, pos, end, depth)
            d[k], pos = _decode(buf, pos, end, depth)
        return d, pos
    if tag == _N:
        return None, pos
    if tag == _T:
        return True, pos
    if tag == _F:
        return False, pos
    if tag == _INT:
        if pos + 8 > end:
            raise ValueError("truncated int")
        return _I64.unpack_from(buf, pos)[0], pos + 8
    if tag == _FLT:
        if pos + 8 > end:
            raise ValueError("truncated float")
        return _F64.unpack_from(buf, pos)[0], pos + 8
    raise ValueError(f"unknown tag byte 0x{tag:02x}")


def decode(data: bytes | bytearray | memoryview, start: int = 0, end: int | None = None) -> Any:
    """Decode exactly one value from data[start:end]; WorkerProtocolError if malformed."""
    if type(data) is memoryview:
        data = data.tobytes()
    end = len(data) if end is None else end
    try:
        value, pos = _decode(data, start, end, 0)
        if pos != end:
            raise ValueError(f"{end - pos} trailing bytes")
    except (ValueError, TypeError, struct.error, UnicodeDecodeError, RecursionError) as e:
        raise WorkerProtocolError(f"malformed frame payload: {e}") from None
    return value


class Channel:
    """Frame I/O over a pair of pipe fds, reusing its buffers between frames.

    With `deadline` (a `time.monotonic()` instant) every wait is bounded by poll() and raises
    TimeoutError past it; the fds must then be non-blocking (the host side). With deadline None
    the I/O blocks (the worker side). The peer closing raises `ChannelClosed`.
    """

    _INITIAL = 1 << 16

    def __init__(self, rfd: int, wfd: int, *, max_frame: int = MAX_FRAME) -> None:
        self.rfd, self.wfd, self.max_frame = rfd, wfd, max_frame
        self._set_buffer(bytearray(self._INITIAL))
        self._out = bytearray()
        self._pin = select.poll()
        self._pin.register(rfd, select.POLLIN)
        self._pout = select.poll()
        self._pout.register(wfd, select.POLLOUT)

    # -- writing -----------------------------------------------------------------------------
    def pack(self, value: Any) -> None:
        """Encode `value` as the pending outgoing frame; errors here leave the channel intact."""
        out = self._out
        del out[:]
        out += _HEADER_PAD
        _encode(value, out)
        size = len(out) - HEADER.size
        if size > self.max_frame:
            raise ValueError(f"frame of {size} bytes exceeds the {self.max_frame}-byte cap")
        HEADER.pack_into(out, 0, FRAME_MAGIC, size)

    def flush(self, deadline: float | None = None) -> None:
        """Write the pending frame."""
        self.write_raw(self._out, deadline)

    def send(self, value: Any, deadline: float | None = None) -> None:
        """pack() then flush()."""
        self.pack(value)
        self.write_raw(self._out, deadline)

    def write_raw(self, data: bytes | bytearray, deadline: float | None = None) -> None:
        """Write all of `data`."""
        try:
            n = os.write(self.wfd, data)
        except BlockingIOError:
            n = 0
        except BrokenPipeError:
            raise ChannelClosed("peer closed the channel", partial=False) from None
        if n == len(data):
            return
        with memoryview(data) as mv:
            while n < len(mv):
                self._wait(self._pout, deadline)
                try:
                    n += os.write(self.wfd, mv[n:])
                except BlockingIOError:
                    pass
                except BrokenPipeError:
                    raise ChannelClosed("peer closed the channel", partial=n > 0) from None

    # -- reading -----------------------------------------------------------------------------
    def recv(self, deadline: float | None = None) -> Any:
        """Read and decode one frame."""
        while self._hi - self._lo < HEADER.size:
            self._fill(deadline)
        magic, size = HEADER.unpack_from(self._buf, self._lo)
        if magic != FRAME_MAGIC:
            got = bytes(self._buf[self._lo : min(self._hi, self._lo + 16)])
            raise WorkerProtocolError(f"bad frame header {got!r}: non-protocol bytes on channel")
        if size > self.max_frame:
            raise WorkerProtocolError(
                f"frame header announces {size} bytes, over the {self.max_frame}-byte cap"
            )
        start = self._lo + HEADER.size
        if start + size > len(self._buf):
            self._make_room(HEADER.size + size)
            start = HEADER.size
        end = start + size
        while self._hi < end:
            self._fill(deadline)
        value = decode(self._buf, start, end)
        self._lo = end
        if self._lo == self._hi:
            self._lo = self._hi = 0
            if len(self._buf) > self._INITIAL:
                self._set_buffer(bytearray(self._INITIAL))
        return value

    def read_raw(self, n: int, deadline: float | None = None) -> bytes:
        """Read exactly `n` unframed bytes (the handshake)."""
        while self._hi - self._lo < n:
            self._fill(deadline)
        data = bytes(self._buf[self._lo : self._lo + n])
        self._lo += n
        return data

    def _set_buffer(self, buf: bytearray, pending: bytes = b"") -> None:
        buf[: len(pending)] = pending
        self._buf, self._mv, self._lo, self._hi = buf, memoryview(buf), 0, len(pending)

    def _make_room(self, need: int) -> None:
        pending = self._buf[self._lo : self._hi]
        self._set_buffer(self._buf if need <= len(self._buf) else bytearray(need), pending)

    def _fill(self, deadline: float | None) -> None:
        if self._hi == len(self._buf):
            self._make_room(len(self._buf))
        if SPIN_S > 0:
            poll, end = self._pin.poll, perf_counter() + SPIN_S
            while not poll(0) and perf_counter() < end:
                pass
        while True:
            self._wait(self._pin, deadline)
            try:
                n = os.readv(self.rfd, [self._mv[self._hi :]])
                break
            except BlockingIOError:
                continue
        if n == 0:
            have = self._hi - self._lo
            partial = have > 0
            raise ChannelClosed(
                f"channel closed after {have} bytes of an incomplete frame"
                if partial
                else "channel closed",
                partial=partial,
            )
        self._hi += n

    @staticmethod
    def _wait(poller: select.poll, deadline: float | None) -> None:
        if deadline is None:
            return
        left = deadline - monotonic()
        if not poller.poll(max(left, 0.0) * 1000.0):
            raise TimeoutError("deadline passed")

    def close(self) -> None:
        """Close both fds (idempotent)."""
        for fd in {self.rfd, self.wfd}:
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.rfd = self.wfd = -1
