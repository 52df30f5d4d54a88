"""``unisim_physx.KinematicMoves`` / ``pose_between``: how the PhysX backends move a mocap body's
kinematic actor over a step (known answers: a linear path, a rotation about a fixed axis at constant
rate, MuJoCo's semantics for reads)."""

from __future__ import annotations

import numpy as np

from unisim_core.contract import quat as Q
from unisim_physx import KinematicMoves, pose_between

Z = np.array([0.0, 0.0, 1.0])


def test_pose_between_is_linear_in_position_and_a_constant_rate_turn():
    qa = Q.quat_from_axis_angle(Z, 0.2)[None]
    qb = Q.quat_from_axis_angle(Z, 1.4)[None]
    for t in (0.0, 0.25, 0.5, 1.0):
        pos, quat = pose_between(np.zeros((1, 3)), qa, np.array([[2.0, -4.0, 6.0]]), qb, t)
        np.testing.assert_allclose(pos, [[2.0 * t, -4.0 * t, 6.0 * t]], atol=1e-12)
        np.testing.assert_allclose(quat, Q.quat_from_axis_angle(Z, 0.2 + 1.2 * t)[None], atol=1e-12)
    # the shorter arc: -q is the same orientation as q, the turn between them is none
    _, quat = pose_between(np.zeros((1, 3)), qa, np.zeros((1, 3)), -qa, 0.5)
    np.testing.assert_allclose(np.abs(Q.quat_mul(Q.quat_conjugate(qa), quat)[0, 0]), 1.0, atol=1e-12)


def test_moves_read_the_written_pose_at_once_and_reach_it_at_the_last_substep():
    moves = KinematicMoves(num_mocap=2, num_envs=3)
    engine_pos, engine_quat = np.zeros((3, 3)), np.tile([1.0, 0, 0, 0], (3, 1))
    turn = Q.quat_from_axis_angle(Z, 0.8)[None]
    moves.write(1, np.array([2]), np.array([[0.0, 0.0, 1.0]]), turn, engine_pos[[2]], engine_quat[[2]])
    pos, quat = moves.poses(1, engine_pos, engine_quat)
    np.testing.assert_allclose(pos, [[0, 0, 0], [0, 0, 0], [0, 0, 1]])  # env 2 at once, the others the engine's
    np.testing.assert_allclose(quat[2], turn[0])
    np.testing.assert_allclose(moves.poses(0, engine_pos, engine_quat)[0], 0.0)  # another mocap body: untouched
    # a second write before the step keeps the move's start (the engine's pose then)
    moves.write(1, np.array([2]), np.array([[0.0, 0.0, 2.0]]), turn, pos[[2]], quat[[2]])
    path = [list(moves.targets(k, 4)) for k in range(4)]
    assert [[(m, ids.tolist()) for m, ids, _, _ in step] for step in path] == [[(1, [2])]] * 4
    np.testing.assert_allclose([step[0][2][0, 2] for step in path], [0.5, 1.0, 1.5, 2.0])
    np.testing.assert_allclose(path[1][0][3], Q.quat_from_axis_angle(Z, 0.4)[None], atol=1e-12)
    moves.clear()
    assert list(moves.targets(0, 4)) == []
    np.testing.assert_allclose(moves.poses(1, engine_pos, engine_quat)[0], 0.0)  # the engine's again
