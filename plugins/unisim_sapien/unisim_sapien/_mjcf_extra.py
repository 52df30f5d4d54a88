"""What the SAPIEN backend reads from the MJCF beyond ``unisim_core.mjcf_lite``'s tables.

``mjcf_lite`` gives geoms as table rows without their pose and records height fields without
their data; a PhysX collision shape needs both. This module reads them from the same tree
(``mjcf_lite.read_tree``: includes expanded), in ``mjcf_lite``'s geom order (document order),
with default classes resolved the same way, and the ``<option integrator>``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from unisim_core import quat as Q
from unisim_core.mjcf_lite import read_tree

__all__ = ["GeomFrame", "Hfield", "read_extras"]


@dataclass(frozen=True)
class GeomFrame:
    """A geom's frame in its body's frame: ``pos (3,)`` m, ``quat (4,)`` wxyz (the geom's z axis is
    a capsule's or cylinder's axis)."""

    pos: np.ndarray
    quat: np.ndarray


@dataclass(frozen=True)
class Hfield:
    """An MJCF height field: ``nrow x ncol`` samples, ``size`` ``(rx, ry, hz, base)`` m,
    ``data (nrow, ncol)`` normalized to [0, 1], row 0 at ``y = -ry`` (MuJoCo's compiled order)."""

    size: np.ndarray
    data: np.ndarray


def _vec(text: str | None, default) -> np.ndarray:
    return np.array(default if text is None else [float(x) for x in text.split()], dtype=np.float64)


def _frame_from_z(z: np.ndarray) -> np.ndarray:
    """The shortest rotation taking +z to the unit vector ``z`` (wxyz)."""
    z = z / np.linalg.norm(z)
    c = float(z[2])
    if c < -1.0 + 1e-12:
        return np.array([0.0, 1.0, 0.0, 0.0])
    axis = np.cross([0.0, 0.0, 1.0], z)
    q = np.array([1.0 + c, *axis])
    return q / np.linalg.norm(q)


class _Reader:
    def __init__(self, root) -> None:
        self.angle = math.pi / 180.0
        for c in root.iter("compiler"):
            self.angle = 1.0 if c.get("angle") == "radian" else math.pi / 180.0
        self.defaults: dict[str, dict[str, str]] = {}
        for d in root.findall("default"):
            self._defaults(d, {})

    def _defaults(self, elem, inherited: dict) -> None:
        table = dict(inherited)
        for child in elem:
            if child.tag == "geom":
                table = {**table, **child.attrib}
        self.defaults[elem.get("class", "main")] = table
        for child in elem:
            if child.tag == "default":
                self._defaults(child, table)

    def geom_attrs(self, elem, childclass: str) -> dict[str, str]:
        return {**self.defaults.get(elem.get("class", childclass), {}), **elem.attrib}

    def frame(self, a: dict[str, str]) -> GeomFrame:
        if "fromto" in a:
            ft = _vec(a["fromto"], None)
            return GeomFrame(pos=(ft[:3] + ft[3:]) / 2.0, quat=_frame_from_z(ft[3:] - ft[:3]))
        pos = _vec(a.get("pos"), [0.0, 0.0, 0.0])
        if "quat" in a:
            quat = Q.quat_normalize(_vec(a["quat"], None))
        elif "euler" in a:
            e = _vec(a["euler"], None) * self.angle
            qs = [Q.quat_from_axis_angle(np.eye(3)[i], e[i]) for i in range(3)]
            quat = Q.quat_mul(Q.quat_mul(qs[0], qs[1]), qs[2])
        elif "axisangle" in a:
            v = _vec(a["axisangle"], None)
            quat = Q.quat_from_axis_angle(v[:3], v[3] * self.angle)
        elif "zaxis" in a:
            quat = _frame_from_z(_vec(a["zaxis"], None))
        else:
            quat = np.array([1.0, 0.0, 0.0, 0.0])
        return GeomFrame(pos=pos, quat=np.asarray(quat, dtype=np.float64))

    def walk(self, elem, childclass: str, out: list) -> None:
        for child in elem:
            if child.tag == "geom":
                a = self.geom_attrs(child, childclass)
                out.append((self.frame(a), a.get("hfield")))
            elif child.tag == "body":
                self.walk(child, child.get("childclass", childclass), out)


def _hfields(root) -> dict[str, Hfield]:
    out = {}
    for asset in root.findall("asset"):
        for h in asset.findall("hfield"):
            nrow, ncol = int(h.get("nrow", "0")), int(h.get("ncol", "0"))
            if h.get("file") or "elevation" not in h.attrib or nrow < 2 or ncol < 2:
                out[h.get("name", "")] = None  # refused where it is used
                continue
            e = _vec(h.get("elevation"), None).reshape(nrow, ncol)[::-1]  # first text row is +y
            lo, hi = float(e.min()), float(e.max())
            data = (e - lo) / (hi - lo) if hi > lo else np.zeros_like(e)
            out[h.get("name", "")] = Hfield(size=_vec(h.get("size"), None), data=data)
    return out


def read_extras(path: str) -> tuple[list[GeomFrame], list[Hfield | None], str]:
    """``(geom frames, height field of each geom (None if not an hfield geom or unreadable), integrator)``."""
    root = read_tree(path)
    r = _Reader(root)
    rows: list = []
    for wb in root.findall("worldbody"):
        r.walk(wb, "main", rows)
    fields = _hfields(root)
    integrator = "euler"
    for o in root.iter("option"):
        integrator = o.get("integrator", integrator).lower()
    return [f for f, _ in rows], [fields.get(h) if h else None for _, h in rows], integrator
