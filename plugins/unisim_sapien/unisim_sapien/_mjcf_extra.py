"""What the SAPIEN backend reads from the MJCF beyond ``unisim_core.mjcf_lite``'s tables.

``mjcf_lite`` records height-field assets without their data and mesh geoms without their
files; PhysX shapes need both. Read from the same tree (``mjcf_lite.read_tree``: includes
expanded), with geom default classes resolved as MuJoCo does (``class``, ``childclass``, nesting).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from unisim_core import LiteModel
from unisim_core.mjcf_lite import read_tree

__all__ = ["Hfield", "MeshFile", "geom_assets", "read_hfields", "read_meshes"]


@dataclass(frozen=True)
class Hfield:
    """An MJCF height field: ``size`` ``(rx, ry, hz, base)`` m, ``data (nrow, ncol)`` normalized to
    [0, 1], row 0 at ``y = -ry`` (MuJoCo's compiled order: the first text row is the +y edge)."""

    size: np.ndarray
    data: np.ndarray


@dataclass(frozen=True)
class MeshFile:
    """An MJCF mesh asset: ``path`` of its file, ``scale (3,)``. MuJoCo collides a mesh geom as the
    convex hull of its vertices; PhysX's convex mesh of the same file is that hull."""

    path: str
    scale: tuple[float, float, float]


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


def _geom_defaults(root) -> dict[str, dict[str, str]]:
    """Geom attributes of every default class, inherited down the nesting (``main`` at the top)."""
    out: dict[str, dict[str, str]] = {}

    def walk(elem, inherited: dict[str, str]) -> None:
        table = dict(inherited)
        for child in elem.findall("geom"):
            table.update(child.attrib)
        out[elem.get("class", "main")] = table
        for child in elem.findall("default"):
            walk(child, table)

    for d in root.findall("default"):
        walk(d, {})
    return out


def read_meshes(path: str, lite: LiteModel) -> list[MeshFile | None]:
    """The mesh file of each of lite's geoms (``None`` for other types or when it cannot be found),
    in lite's order: bodies depth first, each body's own geoms in document order."""
    root = read_tree(path)
    base = os.path.dirname(os.path.abspath(path))
    compiler = {k: v for c in root.iter("compiler") for k, v in c.attrib.items()}
    meshdir = os.path.join(base, compiler.get("assetdir", ""), compiler.get("meshdir", ""))
    meshes = {}
    for asset in root.findall("asset"):
        for m in asset.findall("mesh"):
            file = m.get("file")
            if file:
                name = m.get("name") or os.path.splitext(os.path.basename(file))[0]
                scale = tuple(float(x) for x in (m.get("scale") or "1 1 1").split())
                meshes[name] = MeshFile(path=os.path.join(meshdir, file), scale=scale)
    defaults = _geom_defaults(root)

    def resolved(elem, childclass: str) -> list[dict[str, str]]:
        return [{**defaults.get(g.get("class", childclass), {}), **g.attrib} for g in elem.findall("geom")]

    def bodies(elem, childclass: str) -> list[dict[str, str]]:
        out = []
        for child in elem.findall("body"):
            cc = child.get("childclass", childclass)
            out += resolved(child, cc) + bodies(child, cc)
        return out

    worlds = root.findall("worldbody")  # MuJoCo merges them: the world's geoms first, then the bodies
    rows = [g for wb in worlds for g in resolved(wb, "main")] + [g for wb in worlds for g in bodies(wb, "main")]
    if len(rows) != len(lite.geoms) or any(r.get("type", "sphere") != g["type"] for r, g in zip(rows, lite.geoms)):
        return [None] * len(lite.geoms)
    out = []
    for attrs, geom in zip(rows, lite.geoms):
        mesh = meshes.get(attrs.get("mesh", "")) if geom["type"] == "mesh" else None
        out.append(mesh if mesh is not None and os.path.isfile(mesh.path) else None)
    return out


def geom_assets(path: str, lite: LiteModel) -> list[Hfield | MeshFile | None]:
    """Per lite geom, the asset data its PhysX shape needs: a height field, a mesh file, or ``None``."""
    return [h if h is not None else m for h, m in zip(read_hfields(path, lite), read_meshes(path, lite))]
