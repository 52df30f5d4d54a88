"""Layer 2 - conventions: frames and layouts checked against known answers.

Tolerance: readings are exact up to the rounding of ``np_dtype``; every comparison uses
``atol = 8 * eps(np_dtype)`` on unit-sized quantities (float32: 9.5e-7).
"""

from __future__ import annotations

import numpy as np
import pytest

from unisim_conformance._support import eps, yaw_quat

pytestmark = [pytest.mark.conventions, pytest.mark.contract("1.0")]

C45 = np.cos(np.pi / 4)


def _tol(kit):
    return 8 * eps(kit.dtype)


def _free_body_state(b, yaw=np.pi / 2, lin=(0, 0, 0), ang_body=(0, 0, 0), pos=(0.3, -0.2, 1.0)):
    qpos = np.zeros((b.num_envs, 7))
    qpos[:, 0:3] = pos
    qpos[:, 3:7] = yaw_quat(yaw)
    qvel = np.zeros((b.num_envs, 6))
    qvel[:, 0:3] = lin
    qvel[:, 3:6] = ang_body
    b.set_state(np.arange(b.num_envs), qpos, qvel)
    return b.get_body_ids(["box"])


def test_yaw_quat_wxyz(kit):
    """A 90 deg yaw set through qpos reads back as wxyz [cos45, 0, 0, sin45] everywhere
    (not xyzw [0, 0, sin45, cos45], not the conjugate [cos45, 0, 0, -sin45])."""
    b = kit.make("free_body", 2)
    box = _free_body_state(b)
    want = np.array([C45, 0, 0, C45])
    tol = _tol(kit)
    np.testing.assert_allclose(b.get_base_quat(), np.tile(want, (2, 1)), atol=tol,
                               err_msg="get_base_quat after a 90 deg yaw (expected wxyz)")
    np.testing.assert_allclose(b.get_body_quat_w(box)[:, 0], np.tile(want, (2, 1)), atol=tol,
                               err_msg="get_body_quat_w(base) after a 90 deg yaw (expected wxyz)")
    np.testing.assert_allclose(b.get_qpos()[:, 3:7], np.tile(want, (2, 1)), atol=tol,
                               err_msg="get_qpos()[:, 3:7] after a 90 deg yaw (expected wxyz)")
    np.testing.assert_allclose(b.get_body_pose_w(box)[1][:, 0], np.tile(want, (2, 1)), atol=tol,
                               err_msg="get_body_pose_w(base) quaternion")


def test_ang_vel_frames(kit):
    """qvel angular velocity is body-frame: [1,0,0] body with 90 deg yaw is [0,1,0] in the world
    (get_base_ang_vel, get_body_ang_vel_w) and [1,0,0] in get_body_ang_vel_b(base)."""
    b = kit.make("free_body", 2)
    box = _free_body_state(b, ang_body=(1, 0, 0))
    tol = _tol(kit)
    world = np.tile([0.0, 1.0, 0.0], (2, 1))
    np.testing.assert_allclose(b.get_base_ang_vel(), world, atol=tol,
                               err_msg="get_base_ang_vel must be world frame: R @ [1,0,0] = [0,1,0]")
    np.testing.assert_allclose(b.get_body_ang_vel_w(box)[:, 0], world, atol=tol,
                               err_msg="get_body_ang_vel_w(base) must be world frame")
    np.testing.assert_allclose(b.get_body_ang_vel_b(box)[:, 0], np.tile([1.0, 0, 0], (2, 1)), atol=tol,
                               err_msg="get_body_ang_vel_b(base) must be the body frame [1,0,0]")
    np.testing.assert_allclose(b.get_qvel()[:, 3:6], np.tile([1.0, 0, 0], (2, 1)), atol=tol,
                               err_msg="get_qvel()[:, 3:6] round trip (body frame)")


def test_lin_vel_frames(kit):
    """qvel linear velocity is world-frame: [1,0,0] reads [1,0,0] in get_base_lin_vel and
    get_body_lin_vel_w, and R^T v = [0,-1,0] in get_body_lin_vel_b(base) with 90 deg yaw."""
    b = kit.make("free_body", 2)
    box = _free_body_state(b, lin=(1, 0, 0))
    tol = _tol(kit)
    np.testing.assert_allclose(b.get_base_lin_vel(), np.tile([1.0, 0, 0], (2, 1)), atol=tol,
                               err_msg="get_base_lin_vel (world frame)")
    np.testing.assert_allclose(b.get_body_lin_vel_w(box)[:, 0], np.tile([1.0, 0, 0], (2, 1)), atol=tol,
                               err_msg="get_body_lin_vel_w(base) (world frame)")
    np.testing.assert_allclose(b.get_body_lin_vel_b(box)[:, 0], np.tile([0.0, -1.0, 0], (2, 1)), atol=tol,
                               err_msg="get_body_lin_vel_b(base) must be R^T v = [0,-1,0]")


def test_base_frame_identity(kit):
    """The base relative to itself: pos_b = 0, quat_b = identity; world pose equals base pose."""
    b = kit.make("quadruped", 2)
    q = np.tile(np.asarray(b.get_keyframe_qpos("home"), dtype=np.float64), (2, 1))
    q[:, 0:3] = [[0.5, -0.3, 0.4], [-1.0, 2.0, 0.6]]
    q[:, 3:7] = [[0.9, 0.1, -0.2, 0.3], [0.5, 0.5, -0.5, 0.5]]
    q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=1, keepdims=True)
    b.set_state(np.arange(2), q, np.zeros((2, b.nv)))
    base = np.array([b.base_body_id], dtype=np.int32)
    tol = 4 * _tol(kit)
    np.testing.assert_allclose(b.get_body_pos_b(base)[:, 0], 0, atol=tol, err_msg="get_body_pos_b(base) != 0")
    # q and -q are the same rotation: quaternion equalities here are up to sign
    qb = b.get_body_quat_b(base)[:, 0]
    np.testing.assert_allclose(qb * np.sign(qb[:, :1]), np.tile([1.0, 0, 0, 0], (2, 1)), atol=tol,
                               err_msg="get_body_quat_b(base) != identity (up to sign)")
    np.testing.assert_allclose(b.get_body_pos_w(base)[:, 0], b.get_base_pos(), atol=tol,
                               err_msg="get_body_pos_w(base) != get_base_pos")
    qw, qr = b.get_body_quat_w(base)[:, 0], b.get_base_quat()
    sign = np.sign(np.sum(qw * qr, axis=1, keepdims=True))
    np.testing.assert_allclose(qw * sign, qr, atol=tol, err_msg="get_body_quat_w(base) != get_base_quat (up to sign)")
    np.testing.assert_allclose(b.get_base_pos(), q[:, 0:3], atol=tol, err_msg="get_base_pos != set qpos")


def test_hinge_body_orientation(kit):
    """A hinge about +y at q: the pendulum's body quaternion is wxyz [cos q/2, 0, sin q/2, 0]."""
    b = kit.make("pendulum", 1)
    q = 0.7
    b.set_state(np.array([0]), np.array([[q]]), np.zeros((1, 1)))
    pole = b.get_body_ids(["pole"])
    np.testing.assert_allclose(b.get_body_quat_w(pole)[0, 0], [np.cos(q / 2), 0, np.sin(q / 2), 0],
                               atol=_tol(kit), err_msg="hinge body orientation (wxyz, right-handed about +y)")
    np.testing.assert_allclose(b.get_dof_pos(), [[q]], atol=_tol(kit), err_msg="get_dof_pos of the hinge")


# quadruped facts (unisim_core/scenes/quadruped.xml): ctrlrange == joint range per joint class
QUAD_RANGES = {"hip": (-0.8, 0.8), "thigh": (-1.5, 3.4), "calf": (-2.7, -0.9)}


def test_ctrl_range_layout(kit):
    """``get_actuator_ctrl_range()`` is (nu, 2) [low, high] with the model's values
    (quadruped: hip [-0.8, 0.8], thigh [-1.5, 3.4], calf [-2.7, -0.9]; fixed_arm: +-50)."""
    b = kit.make("quadruped", 1)
    r = b.get_actuator_ctrl_range()
    names = b.get_actuator_names()
    assert r.shape == (len(names), 2), f"ctrl range shape {r.shape}, expected ({len(names)}, 2)"
    assert np.all(r[:, 0] <= r[:, 1]), f"ctrl range columns must be [low, high], got\n{r}"
    want = np.array([QUAD_RANGES[n.split("_")[1]] for n in names])
    np.testing.assert_allclose(r, want, atol=1e-6, err_msg="quadruped ctrl ranges")
    jr = b.get_joint_range()
    assert np.all(jr[:, 0] <= jr[:, 1]), f"joint range columns must be [low, high], got\n{jr}"
    arm = kit.make("fixed_arm", 1)
    np.testing.assert_allclose(arm.get_actuator_ctrl_range(), np.tile([-50.0, 50.0], (4, 1)), atol=1e-6,
                               err_msg="fixed_arm ctrl ranges")


def test_joint_index_helpers(kit):
    """Index helpers agree with names: a distinctive value per joint, set through the full-qpos
    column of ``get_joint_state_qpos_indices``, reads back in the ``get_dof_pos`` column of
    ``get_joint_dof_pos_indices`` (and likewise for velocities)."""
    b = kit.make("quadruped", 2)
    joints = list(b.get_actuator_joint_names())
    assert [a.replace("_act", "_joint") for a in b.get_actuator_names()] == joints, \
        "get_actuator_joint_names does not match the quadruped's actuator -> joint map"
    qcols = b.get_joint_state_qpos_indices(joints)
    vcols = b.get_joint_state_qvel_indices(joints)
    dcols = b.get_joint_dof_pos_indices(joints)
    dvcols = b.get_joint_dof_vel_indices(joints)
    qpos = np.tile(np.asarray(b.get_keyframe_qpos("home"), dtype=np.float64), (2, 1))
    qvel = np.zeros((2, b.nv))
    vals = 0.01 * (1 + np.arange(len(joints)))
    qpos[:, qcols] += vals
    qvel[:, vcols] = 10 * vals
    b.set_state(np.arange(2), qpos, qvel)
    tol = 8 * _tol(kit)
    np.testing.assert_allclose(b.get_dof_pos()[:, dcols], qpos[:, qcols], atol=tol,
                               err_msg="get_dof_pos columns of get_joint_dof_pos_indices")
    np.testing.assert_allclose(b.get_dof_vel()[:, dvcols], qvel[:, vcols], atol=tol,
                               err_msg="get_dof_vel columns of get_joint_dof_vel_indices")
    assert sorted(dcols.tolist()) == list(range(b.num_dof)), "dof position indices must cover get_dof_pos"
    np.testing.assert_allclose(b.get_default_dof_pos(), np.asarray(b.get_default_qpos())[7:], atol=tol,
                               err_msg="get_default_dof_pos must be the default qpos without the root")


def test_root_state_layout(kit):
    """The free root occupies qpos[0:7] / qvel[0:6] of the quadruped (MuJoCo layout)."""
    b = kit.make("quadruped", 1)
    lay = b.get_root_state_layout("base")
    assert (lay.qpos_start, lay.qvel_start, lay.joint_name) == (0, 0, "root")
    with pytest.raises(ValueError, match="root_body_name|fixed"):
        b.get_root_state_layout("FL_calf")
