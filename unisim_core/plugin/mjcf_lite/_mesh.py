"""Mesh assets for inertia: binary STL and OBJ files read with numpy, and a mesh's mass
properties as MuJoCo's compiler derives them (``<mesh inertia="legacy|exact|shell">``).

MuJoCo moves the vertices into the ``refpos``/``refquat`` frame, scales them (``scale``), then
re-centres the mesh at its centre of mass and turns it to its principal axes; a mesh geom's
inertial frame is that one, composed with the geom's own pose. Modes: ``legacy`` (MuJoCo's
default) sums the absolute volumes of the tetrahedra between each face and a centre, ``exact``
their signed volumes, ``shell`` spreads the mass over the surface. ``convex`` (the convex hull)
is not derived. Units: the file's (metres after ``scale``); moments per unit density.
"""

from __future__ import annotations

import os

import numpy as np

from unisim_core.contract import quat as Q
from unisim_core.plugin.mjcf_lite._errors import MjcfLiteError
from unisim_core.plugin.mjcf_lite._inertia import eig3

__all__ = ["read_mesh", "mesh_vertices", "mesh_inertia", "MODES"]

#: ``<mesh inertia>`` values derived here.
MODES = frozenset({"legacy", "exact", "shell"})
_MINVAL = 1e-15  # MuJoCo's mjMINVAL: smaller volumes or areas are an error there


def _stl(fh) -> np.ndarray:
    """``(faces, 3, 3)`` triangles of an open binary STL file (MuJoCo reads no ASCII STL): the
    84-byte header gives the triangle count, and only that many 50-byte records are read."""
    head = fh.read(84)
    n = int.from_bytes(head[80:84], "little") if len(head) == 84 else -1
    size = os.fstat(fh.fileno()).st_size
    if n <= 0 or size < 84 + 50 * n:
        raise ValueError(f"not a binary STL ({size} bytes, header gives {n} triangles; MuJoCo reads binary STL only)")
    rec = np.frombuffer(fh.read(50 * n), dtype=np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")]),
                        count=n)
    return rec["v"].astype(np.float64)


def _pnpoly(xs, ys, tx, ty) -> bool:
    """Whether ``(tx, ty)`` lies inside the polygon ``(xs, ys)`` (even-odd rule, W. R. Franklin's test)."""
    inside, j = False, len(xs) - 1
    for i in range(len(xs)):
        if (ys[i] > ty) != (ys[j] > ty) and tx < (xs[j] - xs[i]) * (ty - ys[i]) / (ys[j] - ys[i]) + xs[i]:
            inside = not inside
        j = i
    return inside


def _split_polygon(idx: list[int], v: np.ndarray) -> list[tuple[int, int, int]]:
    """Triangles of one OBJ polygon as tinyobj (MuJoCo's OBJ loader) splits it, in float32: a quad along its
    shorter diagonal (``(0, 1, 2) (0, 2, 3)`` when 0-2 is strictly shorter, else ``(0, 1, 3) (1, 2, 3)``); a
    larger polygon by its ear clipping in the plane of its first corner, which gives up (leaving the rest
    of the polygon out) when a full round finds no ear."""
    if len(idx) == 3:
        return [tuple(idx)]
    f = np.float32
    p = v[idx].astype(f)
    if len(idx) == 4:
        d02, d13 = f(np.sum((p[2] - p[0]) ** 2, dtype=f)), f(np.sum((p[3] - p[1]) ** 2, dtype=f))
        split = ((0, 1, 2), (0, 2, 3)) if d02 < d13 else ((0, 1, 3), (1, 2, 3))
        return [tuple(idx[k] for k in t) for t in split]
    axes, n = [1, 2], len(idx)
    for k in range(n):  # the plane: drop the largest normal component at the first corner
        e0, e1 = p[(k + 1) % n] - p[k], p[(k + 2) % n] - p[(k + 1) % n]
        c = np.abs(np.array([e0[1] * e1[2] - e0[2] * e1[1], e0[2] * e1[0] - e0[0] * e1[2],
                             e0[0] * e1[1] - e0[1] * e1[0]], dtype=f))
        if (c > np.finfo(f).eps).any():
            if not (c[0] > c[1] and c[0] > c[2]):
                axes[0] = 0
                if c[2] > c[0] and c[2] > c[1]:
                    axes[1] = 1
            break
    xy = {i: (f(v[i][axes[0]]), f(v[i][axes[1]])) for i in idx}
    rest, out, guess = list(idx), [], 0
    left, previous = len(idx), len(rest)
    while len(rest) > 3 and left > 0:
        n = len(rest)
        guess = guess - n if guess >= n else guess
        if previous != n:
            previous, left = n, n
        else:
            left -= 1
        tri = [rest[(guess + k) % n] for k in range(3)]
        vx, vy = [xy[i][0] for i in tri], [xy[i][1] for i in tri]
        cross = f((vx[1] - vx[0]) * (vy[2] - vy[1]) - (vy[1] - vy[0]) * (vx[2] - vx[1]))
        area = f((vx[0] * vy[1] - vy[0] * vx[1]) * f(0.5))  # tinyobj's sign test, as it is
        if cross * area < 0:
            guess += 1
            continue
        if any(_pnpoly(vx, vy, *xy[rest[(guess + o) % n]]) for o in range(3, n)):
            guess += 1
            continue
        out.append(tuple(tri))
        del rest[(guess + 1) % n]
    if len(rest) == 3:
        out.append(tuple(rest))
    return out


def _obj(text: str) -> np.ndarray:
    """``(faces, 3, 3)`` triangles of an OBJ file's ``v`` and ``f`` lines (``v/vt/vn`` and negative indices
    as OBJ defines them), each polygon split as MuJoCo's loader (tinyobj) splits it (:func:`_split_polygon`)."""
    verts, polys = [], []
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "v":
            verts.append([float(x) for x in parts[1:4]])
        elif parts[0] == "f":
            idx = [int(p.split("/")[0]) for p in parts[1:]]
            polys.append([i - 1 if i > 0 else len(verts) + i for i in idx])
    v = np.asarray(verts, dtype=np.float64)
    faces = [t for idx in polys for t in _split_polygon(idx, v)]
    if not faces:
        raise ValueError("no faces")
    return v[np.asarray(faces, dtype=np.int64)]


def read_mesh(path: str) -> np.ndarray:
    """The triangles ``(faces, 3, 3)`` of the mesh file ``path`` (``.stl`` or ``.obj``), in its units.
    Only a regular file is read (a FIFO would block, ``/dev/zero`` never ends), an STL only as far as
    its header says."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".stl", ".obj"):
        raise MjcfLiteError(f"{path}: mesh files {ext!r} are not read (only .stl and .obj)", "mesh_inertia")
    try:
        with open(path, "rb", opener=_regular_file) as fh:
            return _stl(fh) if ext == ".stl" else _obj(fh.read().decode("utf-8", errors="replace"))
    except OSError as exc:
        raise MjcfLiteError(f"{path}: mesh file cannot be read ({exc.strerror or exc})") from None
    except MemoryError:
        raise MjcfLiteError(f"{path}: mesh file too large to read in the memory available") from None
    except (ValueError, IndexError) as exc:
        raise MjcfLiteError(f"{path}: not a valid mesh file ({exc})") from None


def _regular_file(path: str, flags: int) -> int:
    """``open``'s opener: a descriptor of ``path`` only when it is a regular file (opened without
    blocking, so that a FIFO cannot hang the reader)."""
    import stat

    fd = os.open(path, flags | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"not a regular file (a FIFO, device or folder): {path}")
    return fd


def mesh_vertices(tris: np.ndarray, scale=(1.0, 1.0, 1.0), refpos=(0.0, 0.0, 0.0),
                  refquat=(1.0, 0.0, 0.0, 0.0)) -> np.ndarray:
    """The triangles ``tris`` in the mesh frame as MuJoCo compiles them: moved into the ``refpos``/
    ``refquat`` frame, then scaled, each step rounded to float32 as MuJoCo keeps vertices."""
    R = Q.matrix_from_quat(Q.quat_normalize(np.asarray(refquat, dtype=np.float64)))
    f32 = lambda x: np.asarray(x, dtype=np.float32).astype(np.float64)  # noqa: E731 (MuJoCo keeps vertices as float)
    return f32(((f32(tris) - np.asarray(refpos, dtype=np.float64)) @ R) * np.asarray(scale, dtype=np.float64))


def mesh_inertia(tris: np.ndarray, mode: str, scale=(1.0, 1.0, 1.0), refpos=(0.0, 0.0, 0.0),
                 refquat=(1.0, 0.0, 0.0, 0.0)) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """``(measure, pos, quat, moments)`` of a mesh at unit density: volume (m³; surface area m² for
    ``shell``), the centre of mass and principal frame (wxyz) in the mesh frame (after ``refpos``,
    ``refquat``, then ``scale``) and the principal moments (decreasing). Raises ``ValueError`` when
    the volume or area is below MuJoCo's ``mjMINVAL`` (MuJoCo rejects such a mesh)."""
    if mode not in MODES:
        raise ValueError(mode)
    v = mesh_vertices(tris, scale, refpos, refquat)
    cross = np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0])
    area = np.linalg.norm(cross, axis=1) / 2
    if area.sum() < _MINVAL:
        raise ValueError(f"surface area {area.sum():g}")
    centre = area @ v.mean(axis=1) / area.sum()  # area-weighted centroid of the faces

    def tet_volumes(apex):  # signed volumes of the tetrahedra (apex, face), or their sizes for legacy
        r = v - apex
        vol = np.einsum("ij,ij->i", r[:, 0], np.cross(r[:, 1], r[:, 2])) / 6
        return np.abs(vol) if mode == "legacy" else vol

    if mode == "shell":
        com, weight, div = centre, area, 12.0
    else:
        w = tet_volumes(centre)
        if w.sum() < _MINVAL:
            raise ValueError(f"volume {w.sum():g}")
        com = w @ (0.75 * v.mean(axis=1) + 0.25 * centre) / w.sum()  # tetrahedron centroids
        weight, div = tet_volumes(com), 20.0
    measure = float(weight.sum())
    if measure < _MINVAL:
        raise ValueError(f"{'area' if mode == 'shell' else 'volume'} {measure:g}")
    r = v - com
    s = r.sum(axis=1)  # a face's (or tetrahedron's, apex at com) second moment: w/div (s s^T + sum v v^T)
    second = np.einsum("f,fi,fj->ij", weight, s, s) + np.einsum("f,fki,fkj->ij", weight, r, r)
    second /= div
    moments, quat = eig3(np.trace(second) * np.eye(3) - second)
    return measure, com, quat, moments
