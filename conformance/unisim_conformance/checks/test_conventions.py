"""Layer 2 - conventions: frames and layouts checked against known answers.

Tolerance: readings are exact up to the rounding of ``np_dtype``; every comparison uses
``atol = 8 * eps(np_dtype)`` on unit-sized quantities (float32: 9.5e-7).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from unisim_conformance._support import eps, yaw_quat

pytestmark = [pytest.mark.conventions, pytest.mark.contract("1.0")]

C45 = np.cos(np.pi / 4)


def _tol(kit):
    return 8 * eps(kit.precision)


def _free_body_state(b, yaw=np.pi / 2, lin=(0, 0, 0), ang_body=(0, 0, 0), pos=(0.3, -0.2, 1.0)):
    qpos = np.zeros((b.num_envs, 7))
    qpos[:, 0:3] = pos
    qpos[:, 3:7] = yaw_quat(yaw)
    qvel = np.zeros((b.num_envs, 6))
    qvel[:, 0:3] = lin
    qvel[:, 3:6] = ang_body
    b.set_state(np.arange(b.num_envs), qpos, qvel)
    return b.get_body_ids(["box"])


def _yaw_reads(kit):
    b = kit.make("free_body", 2)
    box = _free_body_state(b)
    return {"get_base_quat": b.get_base_quat(), "get_body_quat_w": b.get_body_quat_w(box)[:, 0],
            "get_qpos": b.get_qpos()[:, 3:7], "get_body_pose_w": b.get_body_pose_w(box)[1][:, 0]}


@pytest.mark.parametrize("getter", ["get_base_quat", "get_body_quat_w", "get_qpos", "get_body_pose_w"])
def test_yaw_quat_wxyz(kit, getter):
    """A 90 deg yaw set through qpos reads back as wxyz [cos45, 0, 0, sin45] in each getter
    (not xyzw [0, 0, sin45, cos45], not the conjugate [cos45, 0, 0, -sin45])."""
    got = kit.shared("conventions.yaw", _yaw_reads)[getter]
    np.testing.assert_allclose(got, np.tile([C45, 0, 0, C45], (2, 1)), atol=_tol(kit),
                               err_msg=f"{getter} (the base's quaternion) after a 90 deg yaw (expected wxyz)")


def _ang_reads(kit):
    b = kit.make("free_body", 2)
    box = _free_body_state(b, ang_body=(1, 0, 0))
    return {"get_base_ang_vel": b.get_base_ang_vel(), "get_body_ang_vel_w": b.get_body_ang_vel_w(box)[:, 0],
            "get_body_ang_vel_b": b.get_body_ang_vel_b(box)[:, 0], "get_qvel": b.get_qvel()[:, 3:6]}


ANG_WANT = {"get_base_ang_vel": ([0.0, 1.0, 0.0], "world frame: R @ [1,0,0] = [0,1,0]"),
            "get_body_ang_vel_w": ([0.0, 1.0, 0.0], "world frame: R @ [1,0,0] = [0,1,0]"),
            "get_body_ang_vel_b": ([1.0, 0.0, 0.0], "the body frame: [1,0,0]"),
            "get_qvel": ([1.0, 0.0, 0.0], "qvel[3:6] round trip: body frame [1,0,0]")}


@pytest.mark.parametrize("getter", list(ANG_WANT))
def test_ang_vel_frames(kit, getter):
    """qvel angular velocity is body-frame: [1,0,0] body with 90 deg yaw is [0,1,0] in the world
    (get_base_ang_vel, get_body_ang_vel_w) and [1,0,0] in get_body_ang_vel_b(base) and qvel[3:6]."""
    want, why = ANG_WANT[getter]
    np.testing.assert_allclose(kit.shared("conventions.ang", _ang_reads)[getter], np.tile(want, (2, 1)),
                               atol=_tol(kit), err_msg=f"{getter} of the base must be {why}")


def _lin_reads(kit):
    b = kit.make("free_body", 2)
    box = _free_body_state(b, lin=(1, 0, 0))
    return {"get_base_lin_vel": b.get_base_lin_vel(), "get_body_lin_vel_w": b.get_body_lin_vel_w(box)[:, 0],
            "get_body_lin_vel_b": b.get_body_lin_vel_b(box)[:, 0]}


LIN_WANT = {"get_base_lin_vel": ([1.0, 0.0, 0.0], "the world frame [1,0,0]"),
            "get_body_lin_vel_w": ([1.0, 0.0, 0.0], "the world frame [1,0,0]"),
            "get_body_lin_vel_b": ([0.0, -1.0, 0.0], "R^T v = [0,-1,0]")}


@pytest.mark.parametrize("getter", list(LIN_WANT))
def test_lin_vel_frames(kit, getter):
    """qvel linear velocity is world-frame: [1,0,0] reads [1,0,0] in get_base_lin_vel and
    get_body_lin_vel_w, and R^T v = [0,-1,0] in get_body_lin_vel_b(base) with 90 deg yaw."""
    want, why = LIN_WANT[getter]
    np.testing.assert_allclose(kit.shared("conventions.lin", _lin_reads)[getter], np.tile(want, (2, 1)),
                               atol=_tol(kit), err_msg=f"{getter} of the base must be {why}")


def _base_frame_reads(kit):
    b = kit.make("quadruped", 2)
    q = np.tile(np.asarray(b.get_keyframe_qpos("home"), dtype=np.float64), (2, 1))
    q[:, 0:3] = [[0.5, -0.3, 0.4], [-1.0, 2.0, 0.6]]
    q[:, 3:7] = [[0.9, 0.1, -0.2, 0.3], [0.5, 0.5, -0.5, 0.5]]
    q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=1, keepdims=True)
    b.set_state(np.arange(2), q, np.zeros((2, b.nv)))
    base = np.array([b.base_body_id], dtype=np.int32)
    return {"set": q, "get_body_pos_b": b.get_body_pos_b(base)[:, 0], "get_body_quat_b": b.get_body_quat_b(base)[:, 0],
            "get_body_pos_w": b.get_body_pos_w(base)[:, 0], "get_body_quat_w": b.get_body_quat_w(base)[:, 0],
            "get_base_pos": b.get_base_pos(), "get_base_quat": b.get_base_quat()}


@pytest.mark.parametrize("getter", ["get_body_pos_b", "get_body_quat_b", "get_body_pos_w", "get_body_quat_w",
                                    "get_base_pos"])
def test_base_frame_identity(kit, getter):
    """The base relative to itself: pos_b = 0, quat_b = identity; its world pose (body_pos_w,
    body_quat_w) equals the base pose, and get_base_pos equals the set qpos. Quaternions up to sign."""
    r = kit.shared("conventions.base_frame", _base_frame_reads)
    got, tol = r[getter], 4 * _tol(kit)
    if getter == "get_body_pos_b":
        want, what = np.zeros((2, 3)), "0"
    elif getter == "get_body_quat_b":
        got, want, what = got * np.sign(got[:, :1]), np.tile([1.0, 0, 0, 0], (2, 1)), "identity (up to sign)"
    elif getter == "get_body_pos_w":
        want, what = r["get_base_pos"], "get_base_pos"
    elif getter == "get_body_quat_w":
        want, what = r["get_base_quat"], "get_base_quat (up to sign)"
        got = got * np.sign(np.sum(got * want, axis=1, keepdims=True))
    else:
        want, what = r["set"][:, 0:3], "the set qpos[0:3]"
    np.testing.assert_allclose(got, want, atol=tol, err_msg=f"{getter}(base) != {what}")


def _hinge_reads(kit):
    b = kit.make("pendulum", 1)
    b.set_state(np.array([0]), np.array([[0.7]]), np.zeros((1, 1)))
    return {"get_body_quat_w": b.get_body_quat_w(b.get_body_ids(["pole"]))[0, 0], "get_dof_pos": b.get_dof_pos()}


@pytest.mark.parametrize("getter", ["get_body_quat_w", "get_dof_pos"])
def test_hinge_body_orientation(kit, getter):
    """A hinge about +y at q = 0.7: the pendulum's body quaternion is wxyz [cos q/2, 0, sin q/2, 0]
    (right-handed about +y) and get_dof_pos reads q."""
    q = 0.7
    want = {"get_body_quat_w": [np.cos(q / 2), 0, np.sin(q / 2), 0], "get_dof_pos": [[q]]}[getter]
    np.testing.assert_allclose(kit.shared("conventions.hinge", _hinge_reads)[getter], want, atol=_tol(kit),
                               err_msg=f"{getter} of the pendulum's hinge at q = 0.7 (wxyz, right-handed about +y)")


# quadruped facts (unisim_core/scenes/quadruped.xml): ctrlrange == joint range per joint class
QUAD_RANGES = {"hip": (-0.8, 0.8), "thigh": (-1.5, 3.4), "calf": (-2.7, -0.9)}


def _ranges_run(kit):
    b, arm = kit.make("quadruped", 1), kit.make("fixed_arm", 1)
    return {"names": list(b.get_actuator_names()), "ctrl": b.get_actuator_ctrl_range(), "joint": b.get_joint_range(),
            "arm": arm.get_actuator_ctrl_range()}


@pytest.mark.parametrize("scene", ["quadruped", "fixed_arm", "joint_range"])
def test_ctrl_range_layout(kit, scene):
    """``get_actuator_ctrl_range()`` is (nu, 2) [low, high] with the model's values
    (quadruped: hip [-0.8, 0.8], thigh [-1.5, 3.4], calf [-2.7, -0.9]; fixed_arm: +-50);
    ``get_joint_range()`` (joint_range, quadruped) is [low, high] too."""
    r = kit.shared("conventions.ranges", _ranges_run)
    if scene == "fixed_arm":
        np.testing.assert_allclose(r["arm"], np.tile([-50.0, 50.0], (4, 1)), atol=1e-6, err_msg="fixed_arm ctrl ranges")
    elif scene == "joint_range":
        jr = r["joint"]
        assert np.all(jr[:, 0] <= jr[:, 1]), f"joint range columns must be [low, high], got\n{jr}"
    else:
        rng, names = r["ctrl"], r["names"]
        assert rng.shape == (len(names), 2), f"ctrl range shape {rng.shape}, expected ({len(names)}, 2)"
        assert np.all(rng[:, 0] <= rng[:, 1]), f"ctrl range columns must be [low, high], got\n{rng}"
        want = np.array([QUAD_RANGES[n.split("_")[1]] for n in names])
        np.testing.assert_allclose(rng, want, atol=1e-6, err_msg="quadruped ctrl ranges")


def _index_reads(kit):
    b = kit.make("quadruped", 2)
    joints = list(b.get_actuator_joint_names())
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
    return {"joints": joints, "actuators": list(b.get_actuator_names()), "num_dof": b.num_dof,
            "dof_pos": (b.get_dof_pos()[:, dcols], qpos[:, qcols]), "dof_vel": (b.get_dof_vel()[:, dvcols],
                                                                               qvel[:, vcols]),
            "dcols": dcols.tolist(), "default_dof_pos": (b.get_default_dof_pos(), np.asarray(b.get_default_qpos())[7:])}


@pytest.mark.parametrize("prop", ["actuator_joint_names", "dof_pos", "dof_vel", "dof_coverage", "default_dof_pos"])
def test_joint_index_helpers(kit, prop):
    """Index helpers agree with names: a distinctive value per joint, set through the full-qpos
    column of ``get_joint_state_qpos_indices``, reads back in the ``get_dof_pos`` column of
    ``get_joint_dof_pos_indices`` (dof_pos; likewise dof_vel); the dof columns cover get_dof_pos
    (dof_coverage); the actuator -> joint map (actuator_joint_names); get_default_dof_pos is the
    default qpos without the root (default_dof_pos)."""
    r = kit.shared("conventions.index", _index_reads)
    tol = 8 * _tol(kit)
    if prop == "actuator_joint_names":
        assert [a.replace("_act", "_joint") for a in r["actuators"]] == r["joints"], \
            "get_actuator_joint_names does not match the quadruped's actuator -> joint map"
    elif prop == "dof_coverage":
        assert sorted(r["dcols"]) == list(range(r["num_dof"])), "dof position indices must cover get_dof_pos"
    else:
        got, want = r[prop]
        what = {"dof_pos": "get_dof_pos columns of get_joint_dof_pos_indices",
                "dof_vel": "get_dof_vel columns of get_joint_dof_vel_indices",
                "default_dof_pos": "get_default_dof_pos must be the default qpos without the root"}[prop]
        np.testing.assert_allclose(got, want, atol=tol, err_msg=what)


def _root_layout_run(kit):
    b = kit.make("quadruped", 1)
    lay = b.get_root_state_layout("base")
    try:
        b.get_root_state_layout("FL_calf")
        rejected = None
    except Exception as exc:  # noqa: BLE001 - the check names what was raised
        rejected = exc
    return {"free_root": (lay.qpos_start, lay.qvel_start, lay.joint_name), "non_root_rejected": rejected}


@pytest.mark.parametrize("prop", ["free_root", "non_root_rejected"])
def test_root_state_layout(kit, prop):
    """The free root occupies qpos[0:7] / qvel[0:6] of the quadruped (MuJoCo layout); a body that
    is not a free root is rejected (ValueError naming root_body_name or 'fixed')."""
    got = kit.shared("conventions.root_layout", _root_layout_run)[prop]
    if prop == "free_root":
        assert got == (0, 0, "root"), f"get_root_state_layout('base') = {got}, expected (0, 0, 'root')"
    else:
        assert isinstance(got, ValueError), f"get_root_state_layout('FL_calf') raised {got!r}, expected a ValueError"
        assert re.search("root_body_name|fixed", str(got)), f"the error does not name root_body_name: {got!r}"
