"""Quaternion helpers (wxyz) against rotations with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from unisim_core.contract import quat as Q

S = np.sqrt(0.5)
QZ90 = np.array([S, 0.0, 0.0, S])  # 90 deg about +z
QX90 = np.array([S, S, 0.0, 0.0])  # 90 deg about +x
EX, EY, EZ = np.eye(3)


def random_quats(n: int, seed: int = 0) -> np.ndarray:
    q = np.random.default_rng(seed).normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def test_z90_maps_x_to_y_and_y_to_minus_x():
    np.testing.assert_allclose(Q.quat_apply(QZ90, EX), EY, atol=1e-15)
    np.testing.assert_allclose(Q.quat_apply(QZ90, EY), -EX, atol=1e-15)
    np.testing.assert_allclose(Q.quat_from_axis_angle(EZ, np.pi / 2), QZ90, atol=1e-15)


def test_scalar_apply_and_small_cross_are_the_array_forms_bit_for_bit():
    """``quat_apply_scalar`` and ``com_to_origin_velocity_scalar`` (Python floats) and ``cross`` on a few
    vectors (gathers) do the array forms' operations in their order: equal bits, not merely close; and
    known answers."""
    assert Q.quat_apply_scalar(*QZ90, *EX) == pytest.approx((0.0, 1.0, 0.0), abs=1e-15)
    q, v = random_quats(40, seed=3), np.random.default_rng(4).normal(size=(40, 3))
    for qi, vi in zip(q, v):
        assert Q.quat_apply_scalar(*qi.tolist(), *vi.tolist()) == tuple(Q.quat_apply(qi[None], vi[None])[0])
        w, x, y, z = qi.tolist()
        assert Q.quat_apply_scalar(w, -x, -y, -z, *vi.tolist()) == tuple(Q.quat_apply_inverse(qi[None], vi[None])[0])
    # a body spinning at 2 rad/s about z with its COM 0.5 m along its x, turned 90 deg: the COM sits at
    # +y from the origin, so the origin moves at v_com - w x r = v_com + (1, 0, 0)
    assert Q.com_to_origin_velocity_scalar(QZ90.tolist(), (0.0, 0.0, 0.0), (0.0, 0.0, 2.0), (0.5, 0.0, 0.0)) == \
        pytest.approx((1.0, 0.0, 0.0), abs=1e-15)
    w, c = np.random.default_rng(6).normal(size=(2, 40, 3))
    rows = np.array([Q.com_to_origin_velocity_scalar(qi.tolist(), vi.tolist(), wi.tolist(), ci.tolist())
                     for qi, vi, wi, ci in zip(q, v, w, c)])
    np.testing.assert_array_equal(rows, Q.com_to_origin_velocity(q, v, w, c))
    big = np.random.default_rng(5).normal(size=(2, 200, 3))  # past the gather path's size
    for a, b in ((v[:3], v[3:6]), (v[:1], v), big):
        np.testing.assert_array_equal(Q.cross(a, b), np.cross(a, b))
    np.testing.assert_array_equal(Q.cross(EX, EY), EZ)


def test_matrix_columns_are_body_axes_and_round_trip():
    np.testing.assert_allclose(Q.matrix_from_quat(QZ90), [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-15)
    q = random_quats(64)
    q = np.where(q[:, :1] < 0, -q, q)  # quat_from_matrix returns the w >= 0 representative
    np.testing.assert_allclose(Q.quat_from_matrix(Q.matrix_from_quat(q)), q, atol=1e-12)
    v = np.random.default_rng(1).normal(size=(64, 3))
    np.testing.assert_allclose(np.einsum("nij,nj->ni", Q.matrix_from_quat(q), v), Q.quat_apply(q, v), atol=1e-12)


def test_yaw_extraction_ignores_pitch_and_roll_order():
    for yaw in (-3.0, -np.pi / 2, 0.0, 0.3, np.pi / 2, 3.0):
        assert Q.yaw_from_quat(Q.quat_from_yaw(yaw)) == pytest.approx(yaw, abs=1e-12)
        # yaw after a small pitch (z-y-x order: q = qz ⊗ qy) keeps the heading
        q = Q.quat_mul(Q.quat_from_yaw(yaw), Q.quat_from_axis_angle(EY, 0.2))
        assert Q.yaw_from_quat(q) == pytest.approx(yaw, abs=1e-12)


def test_conjugate_is_inverse():
    q = random_quats(16, 2)
    np.testing.assert_allclose(Q.quat_mul(q, Q.quat_conjugate(q)), np.tile([1.0, 0, 0, 0], (16, 1)), atol=1e-12)
    np.testing.assert_array_equal(Q.quat_conjugate(QZ90), [S, 0, 0, -S])


def test_multiplication_order_applies_right_operand_first():
    v = EY
    composed = Q.quat_apply(Q.quat_mul(QZ90, QX90), v)
    np.testing.assert_allclose(composed, Q.quat_apply(QZ90, Q.quat_apply(QX90, v)), atol=1e-15)
    # x90 maps y to z; z90 leaves z: result z. The other order: z90 maps y to -x; x90 leaves -x.
    np.testing.assert_allclose(composed, EZ, atol=1e-15)
    np.testing.assert_allclose(Q.quat_apply(Q.quat_mul(QX90, QZ90), v), -EX, atol=1e-15)


def test_xyzw_wxyz_reorder():
    np.testing.assert_array_equal(Q.quat_wxyz_to_xyzw(np.array([1.0, 2, 3, 4])), [2, 3, 4, 1])
    np.testing.assert_array_equal(Q.quat_xyzw_to_wxyz(np.array([2.0, 3, 4, 1])), [1, 2, 3, 4])
    q = random_quats(5)
    np.testing.assert_array_equal(Q.quat_xyzw_to_wxyz(Q.quat_wxyz_to_xyzw(q)), q)


def test_apply_inverse_inverts_apply():
    q, v = random_quats(32, 3), np.random.default_rng(4).normal(size=(32, 3))
    np.testing.assert_allclose(Q.quat_apply_inverse(q, Q.quat_apply(q, v)), v, atol=1e-12)
    np.testing.assert_allclose(Q.quat_apply_inverse(QZ90, EY), EX, atol=1e-15)


def test_normalize_rejects_zero():
    np.testing.assert_allclose(Q.quat_normalize(np.array([2.0, 0, 0, 0])), [1, 0, 0, 0])
    with pytest.raises(ValueError, match="zero-norm"):
        Q.quat_normalize(np.zeros(4))
