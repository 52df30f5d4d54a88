"""Pure worker helpers: MuJoCo qpos/qvel <-> Isaac Lab root/joint tensors, body/joint/env order."""

from __future__ import annotations

import numpy as np
import pytest

from unisim_core.contract.quat import quat_apply, quat_normalize
from unisim_isaacsim import _layout as L

# A free root + 3 hinges whose Isaac order differs from MuJoCo's.
NAMES = ("root", "hip", "knee", "ankle")
TYPES = ("free", "hinge", "hinge", "hinge")
QADR, VADR = (0, 7, 8, 9), (0, 6, 7, 8)
ISAAC = ["knee", "ankle", "hip"]


def layout():
    return L.build_layout(NAMES, TYPES, QADR, VADR, 10, 9, ISAAC)


def test_joint_order_is_mapped_by_name():
    lay = layout()
    assert lay.root_q == 0 and lay.root_v == 0
    np.testing.assert_array_equal(lay.isaac_joint_ids, [2, 0, 1])  # hip, knee, ankle in Isaac's tensors


@pytest.mark.parametrize("isaac, match", [
    (["knee", "ankle"], r"missing in Isaac \['hip'\]"),
    (["knee", "ankle", "hip", "toe"], r"only in Isaac \['toe'\]"),
])
def test_joint_mismatch_fails_closed(isaac, match):
    with pytest.raises(ValueError, match=match):
        L.build_layout(NAMES, TYPES, QADR, VADR, 10, 9, isaac)


def test_ball_joints_are_refused():
    with pytest.raises(ValueError, match="'ball' joints"):
        L.build_layout(("root", "b"), ("free", "ball"), (0, 7), (0, 6), 11, 9, [])


def test_root_angular_velocity_is_body_frame_in_the_contract_and_world_frame_in_isaac():
    lay, rng = layout(), np.random.default_rng(1)
    n = 5
    quat = quat_normalize(rng.normal(size=(n, 4)))
    w_body = rng.normal(size=(n, 3))
    origins = rng.normal(size=(n, 3))
    qpos = np.concatenate([rng.normal(size=(n, 3)), quat, rng.normal(size=(n, 3))], axis=1)
    qvel = np.concatenate([rng.normal(size=(n, 3)), w_body, rng.normal(size=(n, 3))], axis=1)
    w = L.isaac_from_qpos_qvel(lay, qpos, qvel, origins)
    np.testing.assert_allclose(w["root_pose"][:, :3], qpos[:, :3] + origins)
    np.testing.assert_allclose(w["root_velocity"][:, 3:], quat_apply(quat, w_body))  # world frame
    np.testing.assert_allclose(w["joint_pos"][:, [2, 0, 1]], qpos[:, 7:])
    back_q, back_v = L.qpos_qvel_from_isaac(
        lay, root_pos_w=w["root_pose"][:, :3], root_quat_wxyz=w["root_pose"][:, 3:],
        root_lin_vel_w=w["root_velocity"][:, :3], root_ang_vel_w=w["root_velocity"][:, 3:],
        joint_pos=w["joint_pos"], joint_vel=w["joint_vel"], env_origins=origins)
    np.testing.assert_allclose(back_q, qpos, atol=1e-12)
    np.testing.assert_allclose(back_v, qvel, atol=1e-12)


def test_yawed_root_spinning_about_world_x_is_body_y():
    lay = layout()
    yaw90 = np.array([[np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)]])
    _, qvel = L.qpos_qvel_from_isaac(lay, root_pos_w=np.zeros((1, 3)), root_quat_wxyz=yaw90,
                                     root_lin_vel_w=np.zeros((1, 3)), root_ang_vel_w=np.array([[1.0, 0, 0]]),
                                     joint_pos=np.zeros((1, 3)), joint_vel=np.zeros((1, 3)))
    np.testing.assert_allclose(qvel[0, 3:6], [0, -1, 0], atol=1e-12)


def test_fixed_base_has_no_root_columns():
    lay = L.build_layout(("a", "b"), ("hinge", "slide"), (0, 1), (0, 1), 2, 2, ["b", "a"])
    w = L.isaac_from_qpos_qvel(lay, np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]]))
    assert w["root_pose"] is None
    np.testing.assert_array_equal(w["joint_pos"], [[2.0, 1.0]])


def test_body_order_and_tables():
    order = L.body_order(("world", "torso", "leg"), ["leg", "torso"])
    np.testing.assert_array_equal(order, [-1, 1, 0])
    with pytest.raises(ValueError, match="missing in Isaac"):
        L.body_order(("world", "torso", "arm"), ["torso"])
    pos = np.arange(12.0).reshape(2, 2, 3)
    quat = np.tile([0.0, 1.0, 0.0, 0.0], (2, 2, 1))
    p, q, lin, ang = L.bodies_from_isaac(order, pos, quat, pos, pos, env_origins=np.ones((2, 3)))
    np.testing.assert_array_equal(p[:, 0], 0.0)
    np.testing.assert_array_equal(q[:, 0], [[1, 0, 0, 0]] * 2)
    np.testing.assert_array_equal(p[:, 1], pos[:, 1] - 1)
    np.testing.assert_array_equal(lin[:, 2], pos[:, 0])


def test_env_rows_come_from_the_view_prim_paths():
    paths = ["/World/envs/env_0/Robot", "/World/envs/env_10/Robot", "/World/envs/env_2/Robot"] + [
        f"/World/envs/env_{i}/Robot" for i in (1, 3, 4, 5, 6, 7, 8, 9)]
    assert L.env_rows_from_prim_paths(paths, 11) == [0, 10, 2, 1, 3, 4, 5, 6, 7, 8, 9]
    with pytest.raises(ValueError, match="permutation"):
        L.env_rows_from_prim_paths(["/World/envs/env_0/Robot", "/World/envs/env_0/Robot"], 2)
    with pytest.raises(ValueError, match="cannot tell"):
        L.env_rows_from_prim_paths(["/World/Robot"], 1)


def test_quaternion_order_per_isaac_lab_version_and_conversion():
    assert L.quat_order_for("0.54.2") == "wxyz"  # Isaac Lab 2.3.2's isaaclab.__version__ (its extension's)
    assert L.quat_order_for("2.3.0") == "wxyz"
    assert L.quat_order_for("3.0.0") == "xyzw"
    for bad in ("unknown", "4.0.0"):
        with pytest.raises(ValueError, match=f"unsupported Isaac Lab version '{bad}'"):
            L.quat_order_for(bad)
    np.testing.assert_array_equal(L.xyzw_to_wxyz(np.array([1, 2, 3, 4])), [4, 1, 2, 3])


def test_orbit_camera_looks_down_at_negative_elevation():
    eye = L.orbit_eye([0, 0, 0], 2.0, 0.0, -30.0)
    np.testing.assert_allclose(eye, [-2 * np.cos(np.radians(30)), 0, 2 * np.sin(np.radians(30))], atol=1e-12)


@pytest.mark.parametrize("mjcf, usd", [
    ("FL_hip", "FL_hip"), ("leg-1.knee", "leg_1_knee"), ("1st link", "_1st_link"), ("", "_"),
    ("café", "caf__"),  # each byte of a non-ASCII character becomes "_"
])
def test_mjcf_usd_name_matches_the_importer(mjcf, usd):
    assert L.mjcf_usd_name(mjcf) == usd


def test_names_are_matched_as_the_importer_writes_them():
    lay = L.build_layout(("hip-1", "knee.1"), ("hinge", "hinge"), (0, 1), (0, 1), 2, 2, ["knee_1", "hip_1"])
    np.testing.assert_array_equal(lay.isaac_joint_ids, [1, 0])
    np.testing.assert_array_equal(L.body_order(("world", "2nd body"), ["_2nd_body"]), [-1, 0])


def test_two_mjcf_names_sharing_one_prim_name_fail_closed():
    with pytest.raises(ValueError, match=r"joints 'a-b' and 'a\.b' both become the USD prim name 'a_b'"):
        L.build_layout(("a-b", "a.b"), ("hinge", "hinge"), (0, 1), (0, 1), 2, 2, ["a_b"])
    with pytest.raises(ValueError, match="bodies 'x y' and 'x_y'"):
        L.body_order(("world", "x y", "x_y"), ["x_y"])


def test_root_body_is_the_one_child_of_the_world():
    assert L.root_body_name(("world", "trunk", "leg"), (0, 0, 1)) == "trunk"
    with pytest.raises(ValueError, match=r"exactly one top-level MJCF body.*has 2: \['trunk', 'box'\]"):
        L.root_body_name(("world", "trunk", "box"), (0, 0, 0))
    with pytest.raises(ValueError, match="has 0"):
        L.root_body_name(("world",), (0,))


def test_unnamed_joints_and_bodies_fail_closed():
    with pytest.raises(ValueError, match="MJCF joints #1 has no name"):
        L.build_layout(("a", ""), ("hinge", "hinge"), (0, 1), (0, 1), 2, 2, ["a", "_"])
    with pytest.raises(ValueError, match="MJCF bodies #0 has no name"):
        L.body_order(("world", ""), ["_"])


def test_mocap_bodies_are_no_articulation_bodies():
    """A mocap body is a top-level body besides the robot (a kinematic rigid body): not the root, not a link
    (-1 in the body order); a body attached to one is refused by scene feature."""
    from unisim_core.contract.errors import UnsupportedCapabilityError

    names, parents = ("world", "target", "trunk", "leg"), (0, 0, 0, 2)
    assert L.root_body_name(names, parents, mocap=("target",)) == "trunk"
    assert L.root_mount(names, parents, ("free", "hinge"), (2, 3), mocap=("target",)) == "free"
    with pytest.raises(UnsupportedCapabilityError, match="multiple_articulations"):
        L.root_mount(names, parents, ("free", "hinge"), (2, 3))
    np.testing.assert_array_equal(L.body_order(names, ["leg", "trunk"], mocap=("target",)), [-1, -1, 1, 0])
    with pytest.raises(UnsupportedCapabilityError, match=r"mocap_child_body.*\['handle'\]") as info:
        L.root_mount(names + ("handle",), parents + (1,), ("free", "hinge"), (2, 3), mocap=("target",))
    assert info.value.capability == "mocap_child_body"
