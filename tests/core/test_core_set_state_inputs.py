"""set_state treats its inputs as read-only and normalizes only off-unit quaternions."""

from __future__ import annotations

import numpy as np
from core_helpers import make

from unisim_core import ResetRandomizationPayload
from unisim_core.randomization import RandomizationOp


def test_set_state_never_writes_into_caller_arrays():
    b = make("free_body", 2)
    qpos = np.tile(b.get_default_qpos(), (2, 1))
    qpos[:, 3:7] = [2.0, 0.0, 0.0, 0.0]  # norm 2: normalized to the identity inside
    qvel = np.zeros((2, b.nv))
    q_in, v_in = qpos.copy(), qvel.copy()
    payload = ResetRandomizationPayload([RandomizationOp(term="root_lin_vel_delta", values=np.ones((2, 3)),
                                                         operation="add")])
    b.set_state(np.arange(2), qpos, qvel, randomization=payload)
    assert np.array_equal(qpos, q_in) and np.array_equal(qvel, v_in)
    np.testing.assert_array_equal(b.get_base_quat(), np.tile([1.0, 0, 0, 0], (2, 1)))
    np.testing.assert_array_equal(b.get_base_lin_vel(), np.ones((2, 3)))


def test_near_unit_quaternion_round_trips_exactly():
    b = make("free_body", 1)
    q = b.get_default_qpos()[None].copy()
    q[0, 3:7] = np.array([0.5, 0.5, 0.5, 0.5]) * (1 + 5e-7)  # within float32 precision of unit
    b.set_state(np.arange(1), q, np.zeros((1, b.nv)))
    np.testing.assert_array_equal(b.get_qpos(), q)
