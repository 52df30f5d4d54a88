"""What the SAPIEN backend reads from the MJCF beyond ``unisim_core.plugin.mjcf_lite``'s tables.

``mjcf_lite`` records mesh geoms without their files (height fields it reads itself:
``LiteModel.hfields``); PhysX's convex shapes need the files. It counts fixed tendons without
reading them; whether one acts on its joints is read here. Read from the same tree
(``mjcf_lite.read_tree``: includes expanded), with geom default classes resolved as MuJoCo does
(``class``, ``childclass``, nesting).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from unisim_core import LiteModel
from unisim_core.plugin.mjcf_lite import read_tree

__all__ = ["MeshFile", "acting_tendons", "read_meshes"]


@dataclass(frozen=True)
class MeshFile:
    """An MJCF mesh asset: ``path`` of its file, ``scale (3,)``. MuJoCo collides a mesh geom as the
    convex hull of its vertices; PhysX's convex mesh of the same file is that hull."""

    path: str
    scale: tuple[float, float, float]


def _defaults(root, tag: str) -> dict[str, dict[str, str]]:
    """``tag`` attributes of every default class, inherited down the nesting (``main`` at the top)."""
    out: dict[str, dict[str, str]] = {}

    def walk(elem, inherited: dict[str, str]) -> None:
        table = dict(inherited)
        for child in elem.findall(tag):
            table.update(child.attrib)
        out[elem.get("class", "main")] = table
        for child in elem.findall("default"):
            walk(child, table)

    for d in root.findall("default"):
        walk(d, {})
    return out


#: Fixed-tendon attributes that make MuJoCo act on the joints (a tendon with none of them set is inert).
_ACTING = ("stiffness", "damping", "frictionloss", "armature")


def acting_tendons(path: str) -> list[str]:
    """The ``<tendon><fixed>`` elements that act on their joints, each as ``name: what`` (stiffness, damping,
    friction, armature, or limits: ``limited``, or a ``range`` with ``<compiler autolimits>``, default classes
    applied). A fixed tendon with none of them (gymnasium's humanoid) changes nothing in MuJoCo: its length is
    only computed (actuators and sensors on tendons are refused by ``mjcf_lite``)."""
    root = read_tree(path)
    defaults = _defaults(root, "tendon")
    autolimits = all(c.get("autolimits", "true") == "true" for c in root.iter("compiler"))
    out = []
    for k, fixed in enumerate(f for t in root.findall("tendon") for f in t.findall("fixed")):
        a = {**defaults.get(fixed.get("class", "main"), {}), **fixed.attrib}
        why = [key for key in _ACTING if float(a.get(key, "0").split()[0]) != 0.0]
        limited = a.get("limited", "auto")
        if limited == "true" or (limited == "auto" and autolimits and "range" in a):
            why.append("limits")
        if why:
            out.append(f"{a.get('name') or k}: {', '.join(why)}")
    return out


def read_meshes(path: str, lite: LiteModel) -> list[MeshFile | None]:
    """The mesh file of each of lite's geoms (``None`` for other types or when it cannot be found),
    in lite's order: bodies depth first, each body's own geoms in document order."""
    root = read_tree(path)
    base = os.path.dirname(os.path.abspath(path))
    compiler = {k: v for c in root.iter("compiler") for k, v in c.attrib.items()}
    meshdir = os.path.join(base, compiler.get("assetdir", ""), compiler.get("meshdir", ""))
    meshes, mesh_defaults = {}, _defaults(root, "mesh")
    for asset in root.findall("asset"):
        for elem in asset.findall("mesh"):
            m = {**mesh_defaults.get(elem.get("class", "main"), {}), **elem.attrib}  # a class's scale too
            file = m.get("file")
            if file:
                name = m.get("name") or os.path.splitext(os.path.basename(file))[0]
                scale = tuple(float(x) for x in (m.get("scale") or "1 1 1").split())
                meshes[name] = MeshFile(path=os.path.join(meshdir, file), scale=scale)
    defaults = _defaults(root, "geom")

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
