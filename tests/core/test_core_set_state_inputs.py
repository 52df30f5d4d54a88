"""set_state treats its inputs as read-only and normalizes only off-unit quaternions."""

from __future__ import annotations

import numpy as np
from core_helpers import make

from unisim_core import ResetRandomizationPayload
from unisim_core.contract.randomization import RandomizationOp


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


def test_empty_sensor_selection_reads_as_zero_columns():
    b = make("quadruped", 3)
    assert b.get_sensor_data_batch([]).shape == (3, 0)
    assert b.bind_sensor_data([]).read().shape == (3, 0)


def test_unsupported_capability_error_survives_pickling():
    import pickle

    from unisim_core import Capability, UnsupportedCapabilityError

    err = pickle.loads(pickle.dumps(UnsupportedCapabilityError("mujoco", Capability.RENDER, "no display")))
    assert isinstance(err, NotImplementedError) and err.capability is Capability.RENDER
    assert str(err) == "backend 'mujoco' does not support capability 'render': no display"


def test_rebuild_error_restores_type_message_and_attributes():
    from unisim_core.contract.errors import InvalidInputError, rebuild_error

    err = rebuild_error("unisim_core.contract.errors.InvalidInputError", "qpos: expected shape (2, 7)", {"hint": 1})
    assert type(err) is InvalidInputError and str(err) == "qpos: expected shape (2, 7)" and err.hint == 1
    assert isinstance(rebuild_error("ValueError", "x"), ValueError)
    assert rebuild_error("no_such_module.Error", "x") is None
    assert rebuild_error("os.path", "x") is None  # not an exception type
