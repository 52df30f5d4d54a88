"""Primitive geoms fitted to a mesh (``<geom type="capsule" mesh="m">``) as MuJoCo's compiler fits them.

MuJoCo centres a mesh at its centre of mass and turns it to its principal axes (the frame of
:func:`~._mesh.mesh_inertia`); a primitive geom naming the mesh takes that frame, composed with its
own pose, and a size from the mesh (``mjCMesh::FitGeom``):

- default: the *inertia box*, the box of the mesh's volume (surface area for ``inertia="shell"``)
  with its principal moments, half sizes ``b_j = sqrt(6 (I_0 + I_1 + I_2 - 2 I_j) / V) / 2``:
  sphere ``mean(b)``; capsule radius ``(b_0 + b_1) / 2``, half length ``max(0, b_2 - radius / 2)``;
  cylinder radius ``(b_0 + b_1) / 2``, half length ``b_2``; box and ellipsoid ``b``;
- ``<compiler fitaabb="true">``: the smallest primitive whose bounding box holds the mesh's
  bounding box ``h`` (half sizes) in that frame, centred on its centre: sphere ``max(h)``; cylinder
  radius ``max(h_0, h_1)``, half length ``h_2``; capsule the same radius, half length ``h_2 - radius``
  (MuJoCo rejects a negative one); box and ellipsoid ``h`` (MuJoCo 4's rule, measured);

then every size times the geom's ``fitscale``. Units: metres; frames in the geom's frame.
"""

from __future__ import annotations

import numpy as np

from unisim_core.contract import quat as Q

__all__ = ["FITTED", "fit_primitive"]

#: Geom types MuJoCo fits to a mesh.
FITTED = frozenset({"sphere", "capsule", "cylinder", "ellipsoid", "box"})


def fit_primitive(gtype: str, size: np.ndarray, verts: np.ndarray, props: tuple, fitaabb: bool, fitscale: float
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(size (3,), pos (3,), quat (4,) wxyz)`` of a ``gtype`` geom fitted to a mesh: its size (the
    entries the fit sets replace those of ``size``, the file's) and its frame in the geom's own frame.
    ``verts``: the mesh's vertices ``(n, 3)`` after ``scale``/``refpos``/``refquat``; ``props``: the
    mesh's ``(measure, com, quat, moments)`` (:func:`~._mesh.mesh_inertia`)."""
    measure, com, quat, moments = props
    size, pos = np.array(size, dtype=np.float64), np.array(com, dtype=np.float64)
    if not fitaabb:
        box = 0.5 * np.sqrt(np.maximum(6.0 * (moments.sum() - 2.0 * moments) / measure, 0.0))
        if gtype == "sphere":
            size[0] = box.sum() / 3
        elif gtype in ("capsule", "cylinder"):
            size[0] = (box[0] + box[1]) / 2
            size[1] = max(0.0, box[2] - size[0] / 2) if gtype == "capsule" else box[2]
        else:
            size[:] = box
    else:
        R = Q.matrix_from_quat(quat)
        local = (np.asarray(verts, dtype=np.float64) - com) @ R  # the vertices in the principal frame
        lo, hi = local.min(axis=0), local.max(axis=0)
        cen, half = (lo + hi) / 2, (hi - lo) / 2
        pos = pos + R @ cen
        if gtype == "sphere":
            size[0] = half.max()
        elif gtype in ("capsule", "cylinder"):
            size[0] = max(half[0], half[1])
            size[1] = half[2] - (size[0] if gtype == "capsule" else 0.0)
        else:
            size[:] = half
    return size * fitscale, pos, np.asarray(quat, dtype=np.float64)
