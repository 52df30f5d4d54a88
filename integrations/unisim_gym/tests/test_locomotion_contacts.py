"""VelocityTrackingTask with ``contact_sensing=True`` on a backend with contact sensing: base
contact and feet air time from the backend's ``bind_contact_forces`` (MuJoCo), geometry elsewhere
(the fake, and every backend by default)."""

from __future__ import annotations

import numpy as np
import pytest

from unisim_core import create_backend
from unisim_gym import VelocityTrackingCfg, VelocityTrackingTask

pytest.importorskip("mujoco", reason="contact sensing is exercised on unisim-mujoco (extra: mujoco)")


def _bound(backend_name: str, n: int = 2):
    task = VelocityTrackingTask(VelocityTrackingCfg(contact_sensing=True))
    b = create_backend(backend_name, task.scene, n, task.sim_dt)
    task.bind(b, np.random.default_rng(0))
    task.reset(np.arange(n))
    task.ctrl_from_action(np.zeros((n, b.num_actuators)))
    return task, b


def test_base_contact_is_the_sensed_force_on_the_base():
    """Env 1's base laid flat on the floor (legs up): a contact force on the base -> terminated;
    env 0 stands on its feet: not. The feet's touch-down reward term is 0 for a robot that never
    left the ground (no air phase ended)."""
    task, b = _bound("mujoco")
    assert task.feet_sensor is not None and task.base_sensor is not None
    q = np.tile(task.home_qpos, (2, 1))
    q[1, 2] = 0.05  # base half-height: resting on the floor
    q[1, 3:7] = [0.0, 1.0, 0.0, 0.0]  # upside down
    b.set_state(np.arange(2), q, np.zeros((2, b.nv)))
    ctrl = task.ctrl_from_action(np.zeros((2, b.num_actuators)))
    for _ in range(5):
        b.step(ctrl, task.decimation)
    assert task.base_contact().tolist() == [False, True]
    _, _, terms = task.evaluate(np.zeros((2, b.num_actuators)))
    assert terms["feet_air_time"][0] == 0.0
    b.close()


def test_fake_backend_keeps_the_geometric_contacts():
    task, b = _bound("fake")
    assert task.feet_sensor is None and task.base_sensor is None
    task.evaluate(np.zeros((2, b.num_actuators)))  # reads the base state the geometric test uses
    assert task.base_contact().tolist() == [False, False]
    b.close()
