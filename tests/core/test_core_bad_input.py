"""Bad input to every hot-path method: the right error class, a message naming the argument and
the expected shape, and nothing written (state, staged wrenches and model tables unchanged)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from core_helpers import make

from unisim_core.contract.errors import BackendClosedError, InvalidInputError, InvalidTypeError, UnknownNameError
from unisim_core.contract.randomization import (
    InitRandomizationPlan,
    IntervalRandomizationPlan,
    RandomizationOp,
    ResetRandomizationPayload,
)

N = 3  # envs
TERMS = ("body_mass", "gravity", "dof_damping", "actuator_kp", "actuator_kd")


_PAIR_SOURCE = []


def pair():
    """Two identical quadruped backends with some history (the second one is the witness)."""
    if not _PAIR_SOURCE:
        b = make("quadruped", N)
        qpos = np.tile(b.get_keyframe_qpos("home"), (N, 1))
        qvel = np.random.default_rng(5).normal(scale=0.1, size=(N, b.nv))
        b.set_state(np.arange(N), qpos, qvel)
        b.step(np.tile(qpos[0, 7:], (N, 1)), 2)
        _PAIR_SOURCE.append(b)
    return copy.deepcopy(_PAIR_SOURCE[0]), copy.deepcopy(_PAIR_SOURCE[0])


def assert_same(b, witness):
    """Bitwise equal state and model tables, and equal after one more step (nothing was staged)."""
    np.testing.assert_array_equal(b.get_physics_state(), witness.get_physics_state())
    np.testing.assert_array_equal(b.get_qpos(), witness.get_qpos())
    np.testing.assert_array_equal(b.get_qvel(), witness.get_qvel())
    for term in TERMS:
        np.testing.assert_array_equal(b.get_model_field(term), witness.get_model_field(term))
    ctrl = np.tile(b.get_keyframe_qpos("home")[7:], (N, 1))
    b.step(ctrl)
    witness.step(ctrl)
    np.testing.assert_array_equal(b.get_physics_state(), witness.get_physics_state())
    np.testing.assert_array_equal(b.get_sensor_data("imu_acc"), witness.get_sensor_data("imu_acc"))


def good_qpos(b, k=1):
    return np.tile(b.get_keyframe_qpos("home"), (k, 1))


def zeros_qvel(b, k=1):
    return np.zeros((k, b.nv))


def bad_quat(b):
    q = good_qpos(b)
    q[0, 3:7] = 0.0
    return q


def plan(cls, *ops):
    return cls(ops)


def op(term, values, env_ids=None, target_ids=None, operation="set"):
    return RandomizationOp(term=term, values=values, env_ids=env_ids, target_ids=target_ids, operation=operation)


F1 = np.zeros((N, 1, 3))
CTRL = np.zeros((N, 12))
CASES = {
    # step
    "step-shape": (lambda b: b.step(np.zeros((N, 11))), InvalidInputError, r"ctrl: expected shape \(3, 12\)"),
    "step-1d": (lambda b: b.step(np.zeros(12)), InvalidInputError, r"ctrl: expected shape \(3, 12\), got \(12,\)"),
    "step-bool": (lambda b: b.step(np.zeros((N, 12), bool)), InvalidTypeError, r"ctrl: .*\(3, 12\).*dtype bool"),
    "step-complex": (lambda b: b.step(np.zeros((N, 12), complex)), InvalidTypeError, "ctrl: .*complex"),
    "step-object": (lambda b: b.step(np.zeros((N, 12), object)), InvalidTypeError, "ctrl: .*object"),
    "step-str": (lambda b: b.step(np.full((N, 12), "a")), InvalidTypeError, "ctrl: .*<U1"),
    "step-none": (lambda b: b.step(None), InvalidTypeError, "ctrl"),
    "step-nan": (lambda b: b.step(np.where(np.eye(N, 12) > 0, np.nan, 0.0)), InvalidInputError,
                 "ctrl: expected finite"),
    "step-inf32": (lambda b: b.step(np.full((N, 12), np.inf, np.float32)), InvalidInputError, "ctrl: expected finite"),
    "step-nsteps0": (lambda b: b.step(CTRL, 0), InvalidInputError, "nsteps: expected an int >= 1"),
    "step-nsteps-float": (lambda b: b.step(CTRL, 1.5), InvalidTypeError, "nsteps"),
    "step-nsteps-bool": (lambda b: b.step(CTRL, True), InvalidTypeError, "nsteps"),
    # set_state
    "set-dup": (lambda b: b.set_state([0, 0], good_qpos(b, 2), zeros_qvel(b, 2)), InvalidInputError,
                "env_indices: duplicate env id 0"),
    "set-range": (lambda b: b.set_state([3], good_qpos(b), zeros_qvel(b)), InvalidInputError,
                  r"env_indices: env id 3 out of range \[0, 3\)"),
    "set-negative": (lambda b: b.set_state([-1], good_qpos(b), zeros_qvel(b)), InvalidInputError, "env id -1"),
    "set-float-ids": (lambda b: b.set_state(np.array([0.0]), good_qpos(b), zeros_qvel(b)), InvalidTypeError,
                      "env_indices: expected a 1-D integer array"),
    "set-bool-ids": (lambda b: b.set_state(np.array([True]), good_qpos(b), zeros_qvel(b)), InvalidTypeError,
                     "env_indices"),
    "set-qpos-shape": (lambda b: b.set_state([0], np.zeros((1, 18)), zeros_qvel(b)), InvalidInputError,
                       r"qpos: expected shape \(1, 19\)"),
    "set-qpos-nan": (lambda b: b.set_state([0], np.full((1, 19), np.nan), zeros_qvel(b)), InvalidInputError,
                     "qpos: expected finite"),
    "set-qpos-complex": (lambda b: b.set_state([0], good_qpos(b).astype(complex), zeros_qvel(b)), InvalidTypeError,
                         "qpos"),
    "set-qvel-shape": (lambda b: b.set_state([0], good_qpos(b), np.zeros((2, 18))), InvalidInputError,
                       r"qvel: expected shape \(1, 18\)"),
    "set-qvel-inf": (lambda b: b.set_state([0], good_qpos(b), np.full((1, 18), np.inf)), InvalidInputError,
                     "qvel: expected finite"),
    "set-zero-quat": (lambda b: b.set_state([1], bad_quat(b), zeros_qvel(b)), InvalidInputError,
                      "quaternion columns 3:7 have zero norm"),
    "set-rand-type": (lambda b: b.set_state([0], good_qpos(b), zeros_qvel(b), randomization=[]), InvalidTypeError,
                      "randomization: expected ResetRandomizationPayload"),
    "set-rand-mass": (lambda b: b.set_state([0], good_qpos(b), zeros_qvel(b), randomization=plan(
        ResetRandomizationPayload, op("body_mass", [[0.0]], target_ids=[1]))), InvalidInputError,
        "body_mass: resulting values must be > 0"),
    "set-rand-envs": (lambda b: b.set_state([0], good_qpos(b), zeros_qvel(b), randomization=plan(
        ResetRandomizationPayload, op("gravity", [[0, 0, -1.0]], env_ids=[2]))), InvalidInputError,
        "gravity.env_ids: must be among the envs being reset"),
    # body getters
    "pos-range": (lambda b: b.get_body_pos_w(np.array([14])), InvalidInputError,
                  r"body_ids: body id 14 out of range \[0, 14\)"),
    "quat-float": (lambda b: b.get_body_quat_w(np.array([0.5])), InvalidTypeError, "body_ids: expected a 1-D integer"),
    "linb-2d": (lambda b: b.get_body_lin_vel_b(np.array([[1]])), InvalidTypeError, "body_ids"),
    "angw-bool": (lambda b: b.get_body_ang_vel_w([True]), InvalidTypeError, "body_ids"),
    "posb-neg": (lambda b: b.get_body_pos_b([-1]), InvalidInputError, "body_ids: body id -1"),
    "rows-env": (lambda b: b.get_body_pose_w_rows([5], [1]), InvalidInputError, r"env_ids: env id 5 out of range"),
    "body-name": (lambda b: b.get_body_ids(["nope"]), UnknownNameError, "names: unknown body 'nope'"),
    "body-name-str": (lambda b: b.get_body_ids("base"), InvalidTypeError, "names: expected a sequence"),
    # sensors
    "sensor-name": (lambda b: b.get_sensor_data("nope"), UnknownNameError, "name: unknown sensor 'nope'"),
    "sensor-type": (lambda b: b.get_sensor_data(3), InvalidTypeError, "name: expected a sensor name"),
    "sensor-rows": (lambda b: b.get_sensor_data_rows("imu_acc", [7]), InvalidInputError, "env_ids: env id 7"),
    "sensor-rows-float": (lambda b: b.get_sensor_data_rows("imu_acc", [0.0]), InvalidTypeError, "env_ids"),
    "sensor-batch": (lambda b: b.get_sensor_data_batch("imu_acc"), InvalidTypeError, "names: expected a sequence"),
    "sensor-bind": (lambda b: b.bind_sensor_data(["imu_acc", "x"]), UnknownNameError, "unknown sensor 'x'"),
    # forces
    "force-shape": (lambda b: b.apply_body_force([1], np.zeros((N, 2, 3))), InvalidInputError,
                    r"force: expected shape \(3, 1, 3\)"),
    "force-nan": (lambda b: b.apply_body_force([1], np.full((N, 1, 3), np.nan)), InvalidInputError,
                  "force: expected finite"),
    "force-bool": (lambda b: b.apply_body_force([1], np.zeros((N, 1, 3), bool)), InvalidTypeError, "force"),
    "force-dup": (lambda b: b.apply_body_force([1, 1], np.ones((N, 2, 3))), InvalidInputError,
                  "body_ids: duplicate body id 1"),
    "force-range": (lambda b: b.apply_body_force([20], np.ones((N, 1, 3))), InvalidInputError, "body id 20"),
    "torque-shape": (lambda b: b.apply_body_force([1], np.ones((N, 1, 3)), np.zeros((N, 3))), InvalidInputError,
                     r"torque: expected shape \(3, 1, 3\)"),
    "push-shape": (lambda b: b.push_robots([1.0]), InvalidInputError, r"force_range: expected shape \(2,\)"),
    "push-order": (lambda b: b.push_robots([2.0, 1.0]), InvalidInputError, "force_range: .*low <= high"),
    "push-nan": (lambda b: b.push_robots([np.nan, 1.0]), InvalidInputError, "force_range: expected finite"),
    # jacobian
    "jac-site": (lambda b: b.get_site_jacobian_w(99, np.arange(3)), InvalidInputError,
                 r"site_id: expected an int in \[0, 4\]"),
    "jac-site-float": (lambda b: b.get_site_jacobian_w(1.0, np.arange(3)), InvalidTypeError, "site_id"),
    "jac-dofs": (lambda b: b.get_site_jacobian_w(0, [18]), InvalidInputError, "dof_indices: dof id 18"),
    # snapshots
    "snap-shape": (lambda b: b.set_physics_state(np.zeros((N, 37))), InvalidInputError,
                   r"state: expected shape \(3, 38\)"),
    "snap-nan": (lambda b: b.set_physics_state(np.full((N, 38), np.nan)), InvalidInputError, "state: expected finite"),
    "snap-object": (lambda b: b.set_physics_state(np.zeros((N, 38), object)), InvalidTypeError, "state"),
    "snap-quat": (lambda b: b.set_physics_state(np.zeros((N, 38))), InvalidInputError,
                  r"state: expected unit quaternions in columns 4:8"),
    # randomization
    "dr-unknown": (lambda b: b.apply_init_randomization(plan(InitRandomizationPlan, op("nope", [1.0]))),
                   UnknownNameError, "unknown term 'nope'"),
    "dr-phase": (lambda b: b.apply_init_randomization(plan(InitRandomizationPlan, op(
        "geom_friction", np.ones((N, 1, 3)), target_ids=[0]))), InvalidInputError, "not supported in this phase"),
    "dr-shape": (lambda b: b.apply_init_randomization(plan(InitRandomizationPlan, op(
        "body_mass", np.ones((N, 2)), target_ids=[1]))), InvalidInputError,
        r"body_mass.values: expected shape \(3, 1\)"),
    "dr-target": (lambda b: b.apply_init_randomization(plan(InitRandomizationPlan, op(
        "body_mass", np.ones((N, 1)), target_ids=[99]))), InvalidInputError, "body_mass.target_ids: body id 99"),
    "dr-envs-dup": (lambda b: b.apply_init_randomization(plan(InitRandomizationPlan, op(
        "gravity", np.ones((2, 3)), env_ids=[1, 1]))), InvalidInputError, "gravity.env_ids: duplicate env id 1"),
    "dr-negative": (lambda b: b.apply_init_randomization(plan(InitRandomizationPlan, op(
        "dof_damping", -np.ones((N, 1)), target_ids=[6], operation="scale"))), InvalidInputError,
        "dof_damping: resulting values must be >= 0"),
    "dr-nan": (lambda b: b.apply_init_randomization(plan(InitRandomizationPlan, op(
        "actuator_kp", np.full((N, 1), np.nan), target_ids=[0]))), InvalidInputError, "actuator_kp.values"),
    "dr-second-op-bad": (lambda b: b.apply_init_randomization(plan(
        InitRandomizationPlan, op("gravity", np.zeros((N, 3))), op("body_mass", np.zeros((N, 1)), target_ids=[1]))),
        InvalidInputError, "body_mass: resulting values must be > 0"),
    "dr-plan-type": (lambda b: b.apply_init_randomization([]), InvalidTypeError,
                     "plan: expected InitRandomizationPlan"),
    "dr-interval-phase": (lambda b: b.apply_interval_randomization(plan(IntervalRandomizationPlan, op(
        "body_mass", np.ones((N, 1)), target_ids=[1]))), InvalidInputError, "not supported in this phase"),
    "dr-interval-op": (lambda b: b.apply_interval_randomization(plan(IntervalRandomizationPlan, op(
        "root_lin_vel_delta", np.ones((N, 3))))), InvalidInputError, "only support operation 'add'"),
    "dr-interval-force-nan": (lambda b: b.apply_interval_randomization(plan(IntervalRandomizationPlan, op(
        "body_force", np.full((N, 1, 3), np.nan), target_ids=[1]))), InvalidInputError, "body_force.values"),
    "dr-model-field": (lambda b: b.get_model_field("nope"), UnknownNameError, "term: unknown model term 'nope'"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_rejected_and_nothing_is_written(case):
    call, exc, match = CASES[case]
    b, witness = pair()
    with pytest.raises(exc, match=match):
        call(b)
    assert_same(b, witness)


def test_error_classes_are_builtin_compatible():
    b, _ = pair()
    with pytest.raises(ValueError):
        b.step(np.zeros((N, 11)))
    with pytest.raises(TypeError):
        b.step(np.zeros((N, 12), bool))
    with pytest.raises(KeyError):
        b.get_body_ids(["nope"])
    with pytest.raises(ValueError):
        b.get_body_ids(["nope"])


def test_closed_backend_refuses_stepping_and_writes():
    b, _ = pair()
    b.close()
    b.close()  # idempotent
    with pytest.raises(BackendClosedError, match="backend 'fake' is closed: step"):
        b.step(CTRL)
    with pytest.raises(BackendClosedError):
        b.set_state([0], good_qpos(b), zeros_qvel(b))
    with pytest.raises(BackendClosedError):
        b.set_physics_state(b.get_physics_state())
