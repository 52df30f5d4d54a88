"""Mocap bodies on Newton: SolverMuJoCo makes a body fixed to the world a MuJoCo mocap body posed from
its joint frame, one per world; a paddle driven through ``bind_mocap_pose`` pushes a box as on CPU
MuJoCo, and snapshots carry (and restore) the mocap poses."""

from __future__ import annotations

import numpy as np
import pytest

from unisim_core import SceneCfg, create_backend

pytest.importorskip("unisim_mujoco", reason="the reference is MuJoCo")

PADDLE = """<mujoco><option timestep="0.002"/><worldbody>
  <geom name="floor" type="plane" size="5 5 0.1"/>
  <body name="paddle" mocap="true" pos="-0.3 0 0.1"><geom type="box" size="0.05 0.3 0.08"/></body>
  <body name="box" pos="0 0 0.1"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1"/></body>
</worldbody></mujoco>"""


def test_paddle_pushes_the_box_as_on_mujoco(make, tmp_path):
    """Env 0's paddle sweeps 0.4 m in +x over 1 s, env 1's stays: the box of env 0 is pushed (more than
    0.1 m) to where MuJoCo's is (2 mm; measured 0.3 mm), env 1's does not move; the binding reads back."""
    path = tmp_path / "paddle.xml"
    path.write_text(PADDLE)
    boxes = []
    for b in (make(path), create_backend("mujoco", SceneCfg(str(path)), 2, 0.002)):
        paddle = b.bind_mocap_pose("paddle")
        box = b.get_body_ids(["box"])
        for k in range(1, 21):
            pos = np.array([[-0.3 + 0.02 * k, 0.0, 0.1], [-0.3, 0.0, 0.1]])
            paddle.set(pos, np.tile([1.0, 0, 0, 0], (2, 1)))
            b.step(np.zeros((2, 0)), 25)
        np.testing.assert_allclose(paddle.get()[0], pos, atol=1e-6)
        np.testing.assert_allclose(b.get_body_pos_w(b.get_body_ids(["paddle"]))[:, 0], pos, atol=1e-6)
        boxes.append(b.get_body_pos_w(box)[:, 0])
        b.close()
    assert boxes[1][0, 0] > 0.1 and abs(boxes[1][1, 0]) < 1e-6
    np.testing.assert_allclose(boxes[0], boxes[1], atol=2e-3)  # measured 2.7e-4


def test_snapshot_restores_the_mocap_pose(make, tmp_path):
    path = tmp_path / "paddle.xml"
    path.write_text(PADDLE)
    b = make(path)
    paddle = b.bind_mocap_pose("paddle")
    quat = np.array([[np.cos(0.2), 0, 0, np.sin(0.2)]] * 2)
    paddle.set(np.array([[0.1, 0.2, 0.3], [-0.1, 0.0, 0.5]]), quat)
    rows = b.get_physics_state()
    assert rows.shape == (2, b.physics_state_size) == (2, 1 + 7 + 6 + 7)
    np.testing.assert_allclose(rows[:, 14:17], [[0.1, 0.2, 0.3], [-0.1, 0.0, 0.5]], atol=1e-7)
    paddle.set(np.zeros((2, 3)), np.tile([1.0, 0, 0, 0], (2, 1)))
    b.set_physics_state(rows)
    np.testing.assert_allclose(paddle.get()[0], rows[:, 14:17], atol=1e-7)
    np.testing.assert_allclose(paddle.get()[1], quat, atol=1e-7)
