"""Quaternion and frame helpers. Quaternions are ``wxyz`` and unit norm everywhere.

All functions broadcast over leading dimensions: ``q`` has shape ``(..., 4)``,
vectors ``(..., 3)``, rotation matrices ``(..., 3, 3)``. Results are new arrays
in the input's float dtype.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "cross",
    "quat_mul",
    "quat_conjugate",
    "quat_apply",
    "quat_apply_inverse",
    "quat_apply_scalar",
    "com_to_origin_velocity",
    "com_to_origin_velocity_scalar",
    "quat_from_matrix",
    "matrix_from_quat",
    "quat_from_axis_angle",
    "yaw_from_quat",
    "quat_from_yaw",
    "quat_normalize",
    "quat_wxyz_to_xyzw",
    "quat_xyzw_to_wxyz",
]


_NEXT, _PREV = np.array([1, 2, 0]), np.array([2, 0, 1])
_TO_XYZW, _TO_WXYZ = np.array([1, 2, 3, 0]), np.array([3, 0, 1, 2])


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a × b`` over the last axis ``(..., 3)``, broadcast; cheaper than ``np.cross`` on the small
    arrays of the hot path (per-body frames, a few envs): four gathers there, nine slices and a stack
    on large arrays (the same products, so the same bits)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.size + b.size <= 384:
        return a.take(_NEXT, axis=-1) * b.take(_PREV, axis=-1) - a.take(_PREV, axis=-1) * b.take(_NEXT, axis=-1)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0), axis=-1)


def quat_mul(q1: np.ndarray, q2: np.ndarray) -> np.ndarray:
    """Hamilton product ``q1 ⊗ q2`` (apply ``q2`` first, then ``q1``)."""
    w1, x1, y1, z1 = np.moveaxis(np.asarray(q1), -1, 0)
    w2, x2, y2, z2 = np.moveaxis(np.asarray(q2), -1, 0)
    return np.stack(
        (
            w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
        ),
        axis=-1,
    )


def quat_conjugate(q: np.ndarray) -> np.ndarray:
    """Conjugate ``[w, -x, -y, -z]``: the inverse rotation of a unit quaternion."""
    out = np.array(q, copy=True)
    out[..., 1:] *= -1
    return out


def quat_apply(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors ``v`` by ``q`` (body frame → world frame when ``q`` is a pose)."""
    q = np.asarray(q)
    v = np.asarray(v)
    w = q[..., :1]
    u = q[..., 1:]
    t = 2.0 * cross(u, v)
    return v + w * t + cross(u, t)


def quat_apply_inverse(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors ``v`` by the inverse of ``q`` (world frame → body frame)."""
    q = np.asarray(q)
    v = np.asarray(v)
    w = q[..., :1]
    u = -q[..., 1:]
    t = 2.0 * cross(u, v)
    return v + w * t + cross(u, t)


def quat_apply_scalar(w: float, x: float, y: float, z: float, v0: float, v1: float,
                      v2: float) -> tuple[float, float, float]:
    """:func:`quat_apply` of one quaternion ``(w, x, y, z)`` to one vector in Python floats, term for
    term (the same float64 operations in the same order: bit-identical results); for the hot paths
    that convert one or a few frames, where the array form's numpy calls cost ~10x more. Pass
    ``(w, -x, -y, -z)`` for :func:`quat_apply_inverse`."""
    t0, t1, t2 = 2.0 * (y * v2 - z * v1), 2.0 * (z * v0 - x * v2), 2.0 * (x * v1 - y * v0)
    return v0 + w * t0 + (y * t2 - z * t1), v1 + w * t1 + (z * t0 - x * t2), v2 + w * t2 + (x * t1 - y * t0)


def com_to_origin_velocity(q: np.ndarray, v_com: np.ndarray, ang: np.ndarray, com: np.ndarray) -> np.ndarray:
    """Velocity of a body's frame origin, world frame ``(..., 3)``: ``v_com - ang × (q com)``, from the
    velocity of its centre of mass ``v_com`` and its angular velocity ``ang`` (both world frame), its
    pose ``q`` and its centre of mass ``com`` in the body frame (all broadcast). Engines that report
    COM velocities (Newton, PhysX) give MuJoCo's origin velocity with it."""
    return np.asarray(v_com) - cross(ang, quat_apply(q, com))


def com_to_origin_velocity_scalar(q, v_com, ang, com) -> tuple[float, float, float]:
    """:func:`com_to_origin_velocity` of one body in Python floats (``q`` 4 floats, the others 3),
    the same operations in the same order: bit-identical, for hot paths with one or a few bodies."""
    r0, r1, r2 = quat_apply_scalar(*q, *com)
    a0, a1, a2 = ang
    v0, v1, v2 = v_com
    return v0 - (a1 * r2 - a2 * r1), v1 - (a2 * r0 - a0 * r2), v2 - (a0 * r1 - a1 * r0)


def matrix_from_quat(q: np.ndarray) -> np.ndarray:
    """Rotation matrix ``(..., 3, 3)`` of ``q``; columns are the body axes in world frame."""
    w, x, y, z = np.moveaxis(np.asarray(q), -1, 0)
    return np.stack(
        (
            np.stack((1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)), -1),
            np.stack((2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)), -1),
            np.stack((2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)), -1),
        ),
        axis=-2,
    )


def quat_from_matrix(m: np.ndarray) -> np.ndarray:
    """Unit quaternion (``w >= 0``) of rotation matrices ``(..., 3, 3)``.

    Uses the numerically stable branch on the largest of ``w, x, y, z``.
    """
    m = np.asarray(m, dtype=np.float64)
    m00, m11, m22 = m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]
    cand = np.stack(
        (1 + m00 + m11 + m22, 1 + m00 - m11 - m22, 1 - m00 + m11 - m22, 1 - m00 - m11 + m22),
        axis=-1,
    )
    k = np.argmax(cand, axis=-1)
    s = np.sqrt(np.take_along_axis(cand, k[..., None], -1)[..., 0]) * 2.0
    d21, d02, d10 = m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], m[..., 1, 0] - m[..., 0, 1]
    s21, s02, s10 = m[..., 2, 1] + m[..., 1, 2], m[..., 0, 2] + m[..., 2, 0], m[..., 1, 0] + m[..., 0, 1]
    options = np.stack(
        (
            np.stack((s / 4, d21 / s, d02 / s, d10 / s), -1),
            np.stack((d21 / s, s / 4, s10 / s, s02 / s), -1),
            np.stack((d02 / s, s10 / s, s / 4, s21 / s), -1),
            np.stack((d10 / s, s02 / s, s21 / s, s / 4), -1),
        ),
        axis=-2,
    )
    q = np.take_along_axis(options, k[..., None, None], -2)[..., 0, :]
    q = np.where(q[..., :1] < 0, -q, q)
    return quat_normalize(q)


def quat_from_axis_angle(axis: np.ndarray, angle: np.ndarray | float) -> np.ndarray:
    """Quaternion rotating by ``angle`` (rad) about the unit ``axis``."""
    axis = np.asarray(axis, dtype=np.float64)
    axis = axis / np.linalg.norm(axis, axis=-1, keepdims=True)
    half = np.asarray(angle, dtype=np.float64)[..., None] / 2.0
    return np.concatenate((np.cos(half), np.sin(half) * axis), axis=-1)


def yaw_from_quat(q: np.ndarray) -> np.ndarray:
    """Heading angle (rad, about world z, in ``(-π, π]``) of ``q``."""
    w, x, y, z = np.moveaxis(np.asarray(q), -1, 0)
    return np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def quat_from_yaw(yaw: np.ndarray | float) -> np.ndarray:
    """Quaternion of a pure rotation by ``yaw`` (rad) about world z."""
    return quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), yaw)


def quat_normalize(q: np.ndarray) -> np.ndarray:
    """``q / |q|``, scaled by the largest component first (no overflow for huge finite
    components, no underflow for tiny ones). Raises ``ValueError`` for a zero quaternion."""
    q = np.asarray(q)
    s = np.abs(q).max(axis=-1, keepdims=True)
    if np.any(s == 0):
        raise ValueError("cannot normalize a zero-norm quaternion")
    u = q / s
    return u / np.linalg.norm(u, axis=-1, keepdims=True)


def quat_wxyz_to_xyzw(q: np.ndarray) -> np.ndarray:
    """Reorder ``wxyz`` → ``xyzw`` (for engines that store the scalar last)."""
    return np.asarray(q).take(_TO_XYZW, axis=-1)  # a new C-contiguous array


def quat_xyzw_to_wxyz(q: np.ndarray) -> np.ndarray:
    """Reorder ``xyzw`` → ``wxyz``."""
    return np.asarray(q).take(_TO_WXYZ, axis=-1)  # a new C-contiguous array
