"""Per-env model overrides: each declared term changes only the targeted envs and fields."""

from __future__ import annotations

import numpy as np
import pytest
from motrix_testutil import home_state

from unisim_core import InitRandomizationPlan, ResetRandomizationPayload
from unisim_core.contract.errors import InvalidInputError
from unisim_core.contract.randomization import RandomizationOp

# term -> (target ids on the quadruped, value for the targeted env and target)
CASES = {
    "body_mass": ([1], np.array(7.5)),
    "body_inertia": ([1], np.array([0.02, 0.07, 0.08])),
    "body_com_offset": ([1], np.array([0.01, -0.02, 0.03])),
    "geom_friction": ([13], np.array([0.4, 0.01, 0.001])),
    "dof_armature": ([8], np.array(0.05)),
    "dof_frictionloss": ([8], np.array(0.2)),
    "actuator_kp": ([2], np.array(45.0)),
    "actuator_kd": ([2], np.array(1.5)),
    "gravity": (None, np.array([0.0, 0.5, -9.0])),
}


@pytest.mark.parametrize("term", sorted(CASES))
def test_term_changes_only_targeted_env_and_field(make, term):
    b = make("quadruped.xml", 3, keyframe="home")
    assert term in b.get_dr_capabilities().init_terms
    targets, value = CASES[term]
    before = b.get_model_field(term).astype(np.float64)
    vals = value[None] if targets is None else value[None, None]
    b.apply_init_randomization(InitRandomizationPlan([RandomizationOp(
        term=term, values=vals, env_ids=np.array([1]), target_ids=None if targets is None else np.array(targets))]))
    after = b.get_model_field(term).astype(np.float64)
    expected = before.copy()
    if targets is None:
        expected[1] = value
    else:
        expected[1, targets[0]] = value
    np.testing.assert_allclose(after, expected, rtol=1e-5, atol=1e-7)
    assert np.array_equal(after[[0, 2]], before[[0, 2]])


def test_mass_override_changes_physics_per_env(make):
    """F = 4 N on the free box: env 1 with m = 4 kg accelerates half as fast as env 0 (m = 2 kg)."""
    b = make("free_body.xml", 2)
    b.apply_init_randomization(InitRandomizationPlan([RandomizationOp(
        term="body_mass", values=[[2.0]], env_ids=[1], target_ids=[1], operation="scale")]))
    f = np.zeros((2, 1, 3))
    f[:, 0, 0] = 4.0
    b.apply_body_force(np.array([1]), f)
    b.step(np.zeros((2, 0)), 10)
    np.testing.assert_allclose(b.get_base_lin_vel()[:, 0], [0.04, 0.02], rtol=1e-4)


def test_gravity_override_per_env_and_kept_across_set_state(make):
    b = make("free_body.xml", 2)
    b.apply_init_randomization(InitRandomizationPlan([RandomizationOp(
        term="gravity", values=[[0, 0, -1.0]], env_ids=[0])]))
    b.set_state(np.arange(2), *home_state(b))  # a reset must keep the override
    b.step(np.zeros((2, 0)), 10)
    np.testing.assert_allclose(b.get_base_lin_vel()[:, 2], [-0.02, -9.81 * 0.02], rtol=1e-4)


def test_reset_payload_applies_velocity_delta_and_model_term(make):
    b = make("free_body.xml", 3)
    q, v = home_state(b, 2)
    payload = ResetRandomizationPayload([
        # env_ids given explicitly: with env_ids=None the core validates values against num_envs rows
        # *and* against the reset subset (see the report), so a partial reset needs explicit ids.
        RandomizationOp(term="root_lin_vel_delta", values=[[1.0, 0, 0], [2.0, 0, 0]], env_ids=[0, 2],
                        operation="add"),
        RandomizationOp(term="body_mass", values=[[3.0], [4.0]], env_ids=[0, 2], target_ids=[1]),
    ])
    b.set_state(np.array([0, 2]), q, v, randomization=payload)
    np.testing.assert_allclose(b.get_base_lin_vel()[:, 0], [1, 0, 2])
    np.testing.assert_allclose(b.get_model_field("body_mass")[:, 1], [3, 2, 4])


def test_unsupported_targets_fail_closed(make):
    b = make("quadruped.xml", 2)
    with pytest.raises(InvalidInputError, match="hinge/slide"):  # free-root dof
        b.apply_init_randomization(InitRandomizationPlan([RandomizationOp(
            term="dof_armature", values=[[0.1]] * 2, target_ids=[0])]))
    with pytest.raises(InvalidInputError, match="triangle"):
        b.apply_init_randomization(InitRandomizationPlan([RandomizationOp(
            term="body_inertia", values=[[[0.01, 0.01, 1.0]]] * 2, target_ids=[1])]))
    with pytest.raises(InvalidInputError, match="not supported"):
        b.apply_init_randomization(InitRandomizationPlan([RandomizationOp(
            term="dof_damping", values=[[0.1]] * 2, target_ids=[6])]))
    for term in ("dof_damping", "geom_size", "geom_solref", "geom_solimp"):
        assert term not in b.get_dr_capabilities().init_terms


def test_engine_limits_are_checked_before_any_op_is_written(make):
    """A plan whose second op breaks MotrixSim's inertia rule writes nothing, not even the first op."""
    b = make("quadruped.xml", 2)
    mass, inertia = b.get_model_field("body_mass"), b.get_model_field("body_inertia")
    plan = InitRandomizationPlan([
        RandomizationOp(term="body_mass", values=[[9.0], [9.0]], target_ids=[1]),
        RandomizationOp(term="body_inertia", values=[[[0.01, 0.01, 1.0]]] * 2, target_ids=[1]),
    ])
    with pytest.raises(InvalidInputError, match="triangle"):
        b.apply_init_randomization(plan)
    assert np.array_equal(b.get_model_field("body_mass"), mass)
    assert np.array_equal(b.get_model_field("body_inertia"), inertia)
