"""Body inertia from geoms, as MuJoCo's compiler derives it (``inertiafromgeom``).

Per geom: volume (or surface area with ``shellinertia``) and principal moments per unit density of
the primitive types, the geom frame (``fromto`` included), and the bodies' sum about their centre
of mass diagonalised by MuJoCo's Jacobi rotation (``mju_eig3``: eigenvalues in decreasing order,
the principal frame as a quaternion). SI units; frames are the body frame; quaternions wxyz.
"""

from __future__ import annotations

import math

import numpy as np

from unisim_core.contract import quat as Q

__all__ = ["PRIMITIVES", "unit_inertia", "z_to_quat", "eig3", "combine"]

#: Geom types whose mass and inertia the reader derives.
PRIMITIVES = frozenset({"sphere", "capsule", "cylinder", "ellipsoid", "box"})
_EPS = 1e-12


def unit_inertia(gtype: str, size: np.ndarray, shell: bool) -> tuple[float, np.ndarray]:
    """``(measure, moments)`` of a primitive geom at unit density: its volume (m³) and principal
    moments about its centre in its frame (kg·m² per kg/m³); with ``shell`` the surface area (m²) and
    the moments of a thin shell of unit areal density (MuJoCo's ``shellinertia``)."""
    r = float(size[0])
    if gtype == "sphere":
        if shell:
            a = 4 * math.pi * r * r
            return a, np.full(3, 2 * a * r * r / 3)
        v = 4 * math.pi * r ** 3 / 3
        return v, np.full(3, 2 * v * r * r / 5)
    if gtype in ("capsule", "cylinder"):
        h = float(size[1])  # half height
        if gtype == "cylinder":
            if shell:  # lateral surface and two disks
                al, ad = 2 * math.pi * r * 2 * h, math.pi * r * r
                ixy = al * (r * r / 2 + (2 * h) ** 2 / 12) + 2 * ad * (r * r / 4 + h * h)
                return al + 2 * ad, np.array([ixy, ixy, al * r * r + 2 * ad * r * r / 2])
            v = math.pi * r * r * 2 * h
            return v, np.array([v * (3 * r * r + 4 * h * h) / 12] * 2 + [v * r * r / 2])
        if shell:  # lateral surface and two hemispherical shells
            al, ah = 2 * math.pi * r * 2 * h, 2 * math.pi * r * r
            ihs = 2 * ah * r * r / 3  # hemisphere shell about its diameter, through the sphere centre
            com = r / 2  # centroid of a hemispherical shell from the sphere centre
            ixy = al * (r * r / 2 + (2 * h) ** 2 / 12) + 2 * (ihs - ah * com * com + ah * (h + com) ** 2)
            return al + 2 * ah, np.array([ixy, ixy, al * r * r + 2 * ihs])
        vc, vs = math.pi * r * r * 2 * h, 4 * math.pi * r ** 3 / 3
        ixy = vc * (3 * r * r + 4 * h * h) / 12 + vs * (2 * r * r / 5 + h * h + 3 * h * r / 4)
        return vc + vs, np.array([ixy, ixy, vc * r * r / 2 + vs * 2 * r * r / 5])
    if gtype == "ellipsoid":
        a, b, c = (float(x) for x in size[:3])
        if shell:
            raise ValueError("shellinertia of an ellipsoid")
        v = 4 * math.pi * a * b * c / 3
        return v, v / 5 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    if gtype == "box":
        a, b, c = (2 * float(x) for x in size[:3])
        if shell:
            faces = np.array([b * c, a * c, a * b])  # area of the faces normal to x, y, z
            area = 2 * faces.sum()
            ext = np.array([a, b, c])
            mom = np.zeros(3)
            for k in range(3):
                for f in range(3):  # two faces normal to f, each of area faces[f]
                    i, j = [x for x in range(3) if x != k]
                    m = 2 * faces[f]
                    in_plane = [x for x in (i, j) if x != f]
                    mom[k] += m * (sum(ext[x] ** 2 for x in in_plane) / 12 + (ext[f] / 2) ** 2 * (f != k))
            return area, mom
        v = a * b * c
        return v, v / 12 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    raise ValueError(gtype)


def z_to_quat(vec: np.ndarray) -> np.ndarray:
    """The minimal rotation taking +z to ``vec`` (MuJoCo's ``mjuu_z2quat``), wxyz."""
    v = np.asarray(vec, dtype=np.float64)
    v = v / np.linalg.norm(v)
    axis = np.cross([0.0, 0.0, 1.0], v)
    s = np.linalg.norm(axis)
    if s < 1e-10:
        return np.array([1.0, 0, 0, 0]) if v[2] > 0 else np.array([0.0, 1, 0, 0])
    return Q.quat_from_axis_angle(axis / s, math.atan2(s, v[2]))


def eig3(mat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(eigenvalues, quat)`` of a symmetric 3×3 matrix by MuJoCo's ``mju_eig3``: Jacobi rotations
    from the identity, eigenvalues sorted decreasing, ``quat`` the frame of the eigenvectors."""
    quat = np.array([1.0, 0, 0, 0])
    ev = np.diag(mat).copy()
    for _ in range(500):
        R = Q.matrix_from_quat(quat)
        D = R.T @ mat @ R
        ev = np.array([D[0, 0], D[1, 1], D[2, 2]])
        if abs(D[0, 1]) > abs(D[0, 2]) and abs(D[0, 1]) > abs(D[1, 2]):
            rk, ck, rotk = 0, 1, 2
        elif abs(D[0, 2]) > abs(D[1, 2]):
            rk, ck, rotk = 0, 2, 1
        else:
            rk, ck, rotk = 1, 2, 0
        if abs(D[rk, ck]) < _EPS:
            break
        tau = (D[ck, ck] - D[rk, rk]) / (2 * D[rk, ck])
        t = 1.0 / (tau + math.sqrt(1 + tau * tau)) if tau >= 0 else -1.0 / (-tau + math.sqrt(1 + tau * tau))
        c = 1.0 / math.sqrt(1 + t * t)
        if c > 1.0 - _EPS:
            break
        rot = np.zeros(4)
        rot[rotk + 1] = -math.sqrt(0.5 - 0.5 * c) if tau >= 0 else math.sqrt(0.5 - 0.5 * c)
        if rotk == 1:
            rot[rotk + 1] = -rot[rotk + 1]
        rot[0] = math.sqrt(1.0 - rot[rotk + 1] ** 2)
        quat = Q.quat_normalize(Q.quat_mul(quat, Q.quat_normalize(rot)))
    for j in range(3):  # bubble sort, decreasing (0, 1, 0)
        j1 = j % 2
        if ev[j1] < ev[j1 + 1]:
            ev[j1], ev[j1 + 1] = ev[j1 + 1], ev[j1]
            rot = np.zeros(4)
            rot[0] = rot[(j1 + 2) % 3 + 1] = 0.707106781186548
            quat = Q.quat_normalize(Q.quat_mul(quat, rot))
    return ev, quat


def combine(parts: list[tuple[float, np.ndarray, np.ndarray, np.ndarray]]
            ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """``(mass, ipos, iquat, inertia)`` of a body from ``(mass, pos, quat, moments)`` of its geoms
    (body frame). One geom keeps its own frame and moments, as MuJoCo does; several are summed
    about their common centre of mass and diagonalised with :func:`eig3`."""
    if len(parts) == 1:
        m, p, q, inertia = parts[0]
        return m, np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64), np.asarray(inertia)
    mass = sum(p[0] for p in parts)
    if mass <= 0:
        return 0.0, np.zeros(3), np.array([1.0, 0, 0, 0]), np.zeros(3)
    com = sum(m * np.asarray(p) for m, p, _, _ in parts) / mass
    full = np.zeros((3, 3))
    for m, p, q, inertia in parts:
        R = Q.matrix_from_quat(q)
        d = np.asarray(p) - com
        full += R @ np.diag(inertia) @ R.T + m * (d @ d * np.eye(3) - np.outer(d, d))
    ev, quat = eig3(full)
    return mass, com, quat, ev
