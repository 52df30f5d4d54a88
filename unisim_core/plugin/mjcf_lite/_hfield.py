"""Height-field assets (``<asset><hfield>``) as MuJoCo's compiler reads them, with numpy and zlib.

:func:`hfield_data` returns the ``(nrow, ncol)`` samples MuJoCo stores in ``hfield_data``: float32
values scaled to ``[0, 1]`` by ``(v - min) / (max - min)`` (all zero when the field is flat), row 0
at ``y = -size[1]``, column 0 at ``x = -size[0]``. Sources, each checked against
``mujoco.MjModel.hfield_data`` in ``tests/core/test_core_heightfield.py``:

- inline ``elevation`` (``nrow * ncol`` numbers): the first text row is the ``+y`` edge (MuJoCo
  flips the rows);
- ``nrow``/``ncol`` without data: zeros;
- a PNG file (``.png`` or ``content_type="image/png"``): grayscale, gray+alpha, RGB or RGBA at 8 or
  16 bits, not interlaced; MuJoCo's decoder keeps the first channel's most significant byte (so a
  16-bit image is quantised to 8 bits, a color image is its red channel); the first image row is the
  ``+y`` edge. Palette and sub-byte images are refused (``hfield_file``);
- MuJoCo's binary format (any other file): little-endian ``int32 nrow, int32 ncol`` then
  ``nrow * ncol`` float32 samples, row 0 at ``y = -size[1]`` (not flipped).

Files are opened only when regular (a FIFO would block) and a PNG's inflated size is bounded by its
header before anything is inflated (a small file cannot expand into all memory).
"""

from __future__ import annotations

import os
import struct
import zlib

import numpy as np

from unisim_core.plugin.mjcf_lite._errors import MjcfLiteError
from unisim_core.plugin.mjcf_lite._mesh import _regular_file

__all__ = ["hfield_data", "read_png_channel"]

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: PNG color type -> channels (0 gray, 2 RGB, 4 gray + alpha, 6 RGBA; 3, palette, is not read)
_CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}


def _normalized(values: np.ndarray) -> np.ndarray:
    """MuJoCo's ``(v - min) / (max - min)`` in float32 (zeros for a flat field), as float64."""
    v = np.asarray(values, dtype=np.float32)
    lo, hi = v.min(), v.max()
    out = (v - lo) / (hi - lo) if hi > lo else np.zeros_like(v)
    return out.astype(np.float64)


def _unfilter(raw: bytes, height: int, stride: int, bpp: int, path: str) -> np.ndarray:
    """The ``(height, stride)`` bytes of a non-interlaced PNG image from its inflated scanlines
    (each a filter byte, then ``stride`` filtered bytes; ``bpp`` bytes per pixel)."""
    rows = np.frombuffer(raw, dtype=np.uint8).reshape(height, stride + 1)
    out = np.zeros((height, stride), dtype=np.uint8)
    prior = np.zeros(stride, dtype=np.uint8)
    for r in range(height):
        kind, line = int(rows[r, 0]), rows[r, 1:]
        if kind == 0:
            cur = line.copy()
        elif kind == 1:  # sub: each byte adds the byte bpp before it -> a running sum per byte lane
            cur = (np.cumsum(line.reshape(-1, bpp), axis=0, dtype=np.int64) & 0xFF).astype(np.uint8).reshape(-1)
        elif kind == 2:  # up
            cur = line + prior
        elif kind in (3, 4):  # average, Paeth: sequential within the row
            cur = bytearray(line.tobytes())
            up = prior.tolist()
            for i in range(stride):
                a = cur[i - bpp] if i >= bpp else 0
                b = up[i]
                if kind == 3:
                    pred = (a + b) >> 1
                else:
                    c = up[i - bpp] if i >= bpp else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                cur[i] = (cur[i] + pred) & 0xFF
            cur = np.frombuffer(bytes(cur), dtype=np.uint8)
        else:
            raise MjcfLiteError(f"{path}: not a valid PNG file (row {r} has filter type {kind})")
        out[r] = cur
        prior = out[r]
    return out


def read_png_channel(path: str) -> np.ndarray:
    """``(height, width)`` uint8: the first channel's most significant byte of each pixel of the PNG
    file ``path``, first image row first (what MuJoCo's decoder gives a height field)."""
    try:
        with open(path, "rb", opener=_regular_file) as fh:
            head = fh.read(8 + 25)
            if head[:8] != _PNG_SIGNATURE or head[12:16] != b"IHDR":
                raise MjcfLiteError(f"{path}: not a PNG file (no PNG signature and IHDR header)")
            width, height, depth, ctype, comp, filt, interlace = struct.unpack(">IIBBBBB", head[16:29])
            if ctype not in _CHANNELS or depth not in (8, 16) or interlace != 0:
                raise MjcfLiteError(f"{path}: PNG of color type {ctype}, bit depth {depth}, interlace {interlace} is "
                                    "not read (height-field images: gray, gray+alpha, RGB or RGBA at 8 or 16 bits, "
                                    "not interlaced)", "hfield_file")
            if width < 1 or height < 1 or comp != 0 or filt != 0:
                raise MjcfLiteError(f"{path}: not a valid PNG file (IHDR {width} x {height}, compression {comp}, "
                                    f"filter {filt})")
            bpp = _CHANNELS[ctype] * depth // 8
            stride = width * bpp
            expected = height * (stride + 1)
            _check_memory(path, expected + 9 * width * height)  # scanlines, then uint8 bytes and float64 samples
            inflate, parts, size = zlib.decompressobj(), [], 0
            while True:
                header = fh.read(8)
                if len(header) < 8:
                    raise MjcfLiteError(f"{path}: not a valid PNG file (truncated before IEND)")
                length, kind = struct.unpack(">I4s", header)
                body = fh.read(length)
                crc = fh.read(4)
                if len(body) < length or len(crc) < 4 or zlib.crc32(kind + body) != struct.unpack(">I", crc)[0]:
                    raise MjcfLiteError(f"{path}: not a valid PNG file (chunk {kind!r} truncated or its CRC is wrong)")
                if kind == b"IDAT":
                    part = inflate.decompress(body, expected + 1 - size)  # never more than the header promises
                    size += len(part)
                    parts.append(part)
                    if size > expected:
                        raise MjcfLiteError(f"{path}: not a valid PNG file (more image data than its "
                                            f"{width} x {height} header holds)")
                elif kind == b"IEND":
                    break
    except OSError as exc:
        raise MjcfLiteError(f"{path}: height-field file cannot be read ({exc.strerror or exc})") from None
    except zlib.error as exc:
        raise MjcfLiteError(f"{path}: not a valid PNG file ({exc})") from None
    raw = b"".join(parts)
    if len(raw) != expected:
        raise MjcfLiteError(f"{path}: not a valid PNG file ({len(raw)} bytes of image data, the header says "
                            f"{expected})")
    pixels = _unfilter(raw, height, stride, bpp, path)
    return np.ascontiguousarray(pixels.reshape(height, width, bpp)[:, :, 0])


def _read_binary(path: str) -> np.ndarray:
    """``(nrow, ncol)`` float32 samples of MuJoCo's binary height-field format."""
    try:
        with open(path, "rb", opener=_regular_file) as fh:
            head = fh.read(8)
            if len(head) < 8:
                raise MjcfLiteError(f"{path}: not a MuJoCo binary height field (shorter than its 8-byte header)")
            nrow, ncol = struct.unpack("<ii", head)
            size = os.fstat(fh.fileno()).st_size
            if nrow < 1 or ncol < 1 or size != 8 + 4 * nrow * ncol:
                raise MjcfLiteError(f"{path}: not a MuJoCo binary height field ({size} bytes; its header gives "
                                    f"{nrow} x {ncol} float32 samples)")
            _check_memory(path, 12 * nrow * ncol)
            return np.frombuffer(fh.read(4 * nrow * ncol), dtype="<f4").reshape(nrow, ncol)
    except OSError as exc:
        raise MjcfLiteError(f"{path}: height-field file cannot be read ({exc.strerror or exc})") from None


def _check_memory(path: str, need: float) -> None:
    from unisim_core.contract.construction import available_memory

    avail, source = available_memory()
    if avail is not None and need > avail:
        raise MjcfLiteError(f"{path}: height field needs about {need / 2**20:.0f} MiB to decode, more than the "
                            f"{avail / 2**20:.0f} MiB available ({source})")


def hfield_data(attrs: dict[str, str], folder: str, where: str) -> np.ndarray:
    """``(nrow, ncol)`` float64 samples in ``[0, 1]`` of an ``<hfield>`` element's attributes (MuJoCo's
    ``hfield_data``, see the module docstring); ``folder`` resolves ``file``; ``where`` names the
    element in errors."""
    if attrs.get("file"):
        path = os.path.join(folder, attrs["file"])
        is_png = attrs.get("content_type", "") == "image/png" or (
            "content_type" not in attrs and os.path.splitext(path)[1].lower() == ".png")
        values = read_png_channel(path)[::-1] if is_png else _read_binary(path)
    else:
        try:
            nrow, ncol = int(attrs.get("nrow", "0")), int(attrs.get("ncol", "0"))
        except ValueError:
            raise MjcfLiteError(f"{where}: nrow and ncol must be integers, got {attrs.get('nrow')!r}, "
                                f"{attrs.get('ncol')!r}") from None
        if not nrow or not ncol:
            raise MjcfLiteError(f"{where}: has no file and no nrow/ncol (MuJoCo: 'hfield not specified')")
        if "elevation" not in attrs:
            values = np.zeros((nrow, ncol), dtype=np.float32)
        else:
            try:
                values = np.array([float(x) for x in attrs["elevation"].split()], dtype=np.float32)
            except ValueError:
                raise MjcfLiteError(f"{where}: elevation must be numbers") from None
            if values.size != nrow * ncol:
                raise MjcfLiteError(f"{where}: elevation has {values.size} numbers, nrow * ncol is {nrow * ncol}")
            values = values.reshape(nrow, ncol)[::-1]
    if values.shape[0] < 2 or values.shape[1] < 2:
        raise MjcfLiteError(f"{where}: is {values.shape[0]} x {values.shape[1]}; MuJoCo needs at least 2 x 2 samples")
    return np.ascontiguousarray(_normalized(values))
