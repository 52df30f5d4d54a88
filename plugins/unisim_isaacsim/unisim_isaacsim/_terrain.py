"""Height fields in the Isaac Sim worker (capabilities ``height_scan`` and ``terrain``).

The host computes scans and terrain spawn data from the MJCF (``unisim_core.contract.heightfield``, MuJoCo's
triangles); the worker makes PhysX collide with the same surface. Isaac Sim's MJCF importer does not
take ``type="hfield"`` geoms, so the staged copy handed to it goes without them
(:func:`without_height_fields`) and the worker authors each as a static triangle-mesh collider in env
0 before cloning (:func:`author_height_fields`): a ``UsdGeom.Mesh`` with ``UsdPhysics.CollisionAPI``
and ``MeshCollisionAPI`` approximation ``none`` (the exact triangles; PhysX takes them for static
colliders on the GPU too), at the geom's world pose. The triangles are MuJoCo's
(:func:`height_field_mesh`): sample ``(r, c)`` at ``x = -size[0] + 2 size[0] c / (ncol - 1)``,
``y = -size[1] + 2 size[1] r / (nrow - 1)``, ``z = data[r, c] size[2]``, each cell split along the
diagonal ``(c, r)-(c+1, r+1)``, counter-clockwise from above. MuJoCo's solid base below the surface
(``size[3]``) is not authored: nothing reaches the field from below in the scenes the backend takes.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

import numpy as np

__all__ = ["height_field_mesh", "author_height_fields", "without_height_fields"]


def height_field_mesh(data: np.ndarray, size) -> tuple[np.ndarray, np.ndarray]:
    """``(points (nrow * ncol, 3), triangles (2 (nrow-1) (ncol-1), 3))`` of a height field in its geom's
    frame (m; ``data (nrow, ncol)`` in [0, 1], ``size`` MuJoCo's ``[x half, y half, max z, base]``)."""
    nrow, ncol = data.shape
    x = -size[0] + 2.0 * size[0] * np.arange(ncol) / (ncol - 1)
    y = -size[1] + 2.0 * size[1] * np.arange(nrow) / (nrow - 1)
    gx, gy = np.meshgrid(x, y)
    points = np.stack([gx.ravel(), gy.ravel(), (np.asarray(data, np.float64) * size[2]).ravel()], axis=1)
    r, c = np.meshgrid(np.arange(nrow - 1), np.arange(ncol - 1), indexing="ij")
    a, b = (r * ncol + c).ravel(), (r * ncol + c + 1).ravel()
    d, e = ((r + 1) * ncol + c + 1).ravel(), ((r + 1) * ncol + c).ravel()
    triangles = np.concatenate([np.stack([a, b, d], axis=1), np.stack([a, d, e], axis=1)])
    return points, triangles


def author_height_fields(stage: Any, parent: str, lite: Any) -> list[str]:
    """One static triangle-mesh collider per height-field geom of ``lite`` under ``parent`` (env 0),
    at the geom's world pose; returns their prim paths."""
    from pxr import Gf, UsdGeom, UsdPhysics, Vt

    paths = []
    for g, geom in enumerate(lite.geoms):
        if geom["type"] != "hfield":
            continue
        field = lite.hfields[geom["hfield"]]
        points, triangles = height_field_mesh(field["data"], field["size"])
        path = f"{parent}/UniSimHeightFields/{geom['name'] or f'hfield_{g}'}"
        mesh = UsdGeom.Mesh.Define(stage, path)
        mesh.CreatePointsAttr(Vt.Vec3fArray([Gf.Vec3f(*map(float, p)) for p in points]))
        mesh.CreateFaceVertexCountsAttr(Vt.IntArray([3] * len(triangles)))
        mesh.CreateFaceVertexIndicesAttr(Vt.IntArray([int(i) for i in triangles.ravel()]))
        pos, quat = lite.geom_pose_w(g)
        mesh.AddTranslateOp().Set(Gf.Vec3d(*map(float, pos)))
        mesh.AddOrientOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Quatd(*map(float, quat)))
        UsdPhysics.CollisionAPI.Apply(mesh.GetPrim())
        UsdPhysics.MeshCollisionAPI.Apply(mesh.GetPrim()).CreateApproximationAttr("none")
        paths.append(path)
    return paths


def without_height_fields(path: str) -> bool:
    """Rewrite the staged MJCF ``path`` in place without its height-field geoms and ``<hfield>`` assets
    (Isaac Sim's importer does not take them); whether there were any."""
    tree = ET.parse(path)
    found = False
    for parent in list(tree.getroot().iter()):
        for child in list(parent):
            if (child.tag == "geom" and (child.get("type") == "hfield" or child.get("hfield"))) or (
                    child.tag == "hfield" and parent.tag == "asset"):
                parent.remove(child)
                found = True
    if found:
        tree.write(path, encoding="utf-8", xml_declaration=True)
    return found
