"""What the SAPIEN backend reads from the MJCF beyond ``unisim_core.mjcf_lite``'s tables.

``mjcf_lite`` records height-field assets without their data; a PhysX triangle mesh needs it.
Read from the same tree (``mjcf_lite.read_tree``: includes expanded).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from unisim_core import LiteModel
from unisim_core.mjcf_lite import read_tree

__all__ = ["Hfield", "read_hfields"]


@dataclass(frozen=True)
class Hfield:
    """An MJCF height field: ``size`` ``(rx, ry, hz, base)`` m, ``data (nrow, ncol)`` normalized to
    [0, 1], row 0 at ``y = -ry`` (MuJoCo's compiled order: the first text row is the +y edge)."""

    size: np.ndarray
    data: np.ndarray


def _floats(text: str) -> np.ndarray:
    return np.array([float(x) for x in text.split()], dtype=np.float64)


def _hfields(root) -> dict[str, Hfield | None]:
    """Inline height fields by name; ``None`` for one given by a file or without data (refused where used)."""
    out: dict[str, Hfield | None] = {}
    for asset in root.findall("asset"):
        for h in asset.findall("hfield"):
            nrow, ncol = int(h.get("nrow", "0")), int(h.get("ncol", "0"))
            if h.get("file") or "elevation" not in h.attrib or nrow < 2 or ncol < 2:
                out[h.get("name", "")] = None
                continue
            e = _floats(h.get("elevation")).reshape(nrow, ncol)[::-1]
            lo, hi = float(e.min()), float(e.max())
            out[h.get("name", "")] = Hfield(size=_floats(h.get("size")),
                                            data=(e - lo) / (hi - lo) if hi > lo else np.zeros_like(e))
    return out


def read_hfields(path: str, lite: LiteModel) -> list[Hfield | None]:
    """The height field of each of lite's geoms (``None`` unless a readable hfield geom).

    Height-field geoms are static (a moving one is refused), so they are world geoms: the k-th
    hfield geom among the ``<worldbody>``'s own children is lite's k-th hfield geom.
    """
    root = read_tree(path)
    fields = _hfields(root)
    names = [g.get("hfield") for wb in root.findall("worldbody") for g in wb.findall("geom")
             if g.get("type") == "hfield"]
    out: list[Hfield | None] = []
    k = 0
    for row in lite.geoms:
        if row["type"] == "hfield" and row["body"] == 0 and k < len(names):
            out.append(fields.get(names[k]))
            k += 1
        else:
            out.append(None)
    return out
