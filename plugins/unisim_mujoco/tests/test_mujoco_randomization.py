"""Per-env model randomization: only the targeted envs change, with a physical effect."""

from __future__ import annotations

import numpy as np
import pytest
from mujoco_testutil import QUADRUPED, home_ctrl, kit

from unisim_core.contract.randomization import (
    InitRandomizationPlan,
    IntervalRandomizationPlan,
    RandomizationOp,
    ResetRandomizationPayload,
)

CASES = [  # term, target ids, values for env 1, expected field row for env 1
    ("body_mass", [1], [[6.0]], [6.0]),
    ("body_inertia", [1], [[[0.01, 0.07, 0.07]]], [[0.01, 0.07, 0.07]]),
    ("body_com_offset", [1], [[[0.01, 0.0, 0.0]]], [[0.01, 0, 0]]),
    ("geom_friction", [0], [[[0.3, 0.01, 0.001]]], [[0.3, 0.01, 0.001]]),
    ("geom_size", [1], [[[0.2, 0.06, 0.06]]], [[0.2, 0.06, 0.06]]),
    ("geom_solref", [0], [[[0.03, 1.0]]], [[0.03, 1.0]]),
    ("geom_solimp", [0], [[[0.8, 0.9, 0.01, 0.5, 2.0]]], [[0.8, 0.9, 0.01, 0.5, 2.0]]),
    ("dof_damping", [6], [[1.5]], [1.5]),
    ("dof_armature", [6], [[0.02]], [0.02]),
    ("dof_frictionloss", [6], [[0.1]], [0.1]),
    ("actuator_kp", [0], [[80.0]], [80.0]),
    ("actuator_kd", [0], [[3.0]], [3.0]),
    ("gravity", None, [[0.0, 0.0, -5.0]], [0.0, 0.0, -5.0]),
]


@pytest.mark.parametrize("term,targets,values,expected", CASES, ids=[c[0] for c in CASES])
def test_init_term_changes_only_targeted_env(make, term, targets, values, expected):
    sim = make(QUADRUPED, num_envs=3)
    before = sim.get_model_field(term)
    sim.apply_init_randomization(InitRandomizationPlan([
        RandomizationOp(term=term, values=values, env_ids=[1], target_ids=targets)]))
    after = sim.get_model_field(term)
    np.testing.assert_array_equal(after[[0, 2]], before[[0, 2]])
    row = after[1] if targets is None else after[1][targets]
    np.testing.assert_allclose(row, expected)


def test_mass_halves_force_acceleration(make):
    # a = F / m: doubling the mass of env 1 halves its velocity gain under the same force.
    sim = make(kit("free_body.xml"), num_envs=2)
    sim.apply_init_randomization(InitRandomizationPlan([
        RandomizationOp(term="body_mass", values=[[2.0]], env_ids=[1], target_ids=[1], operation="scale")]))
    sim.apply_body_force(np.array([1]), np.tile([[[6.0, 0, 0]]], (2, 1, 1)))
    sim.step(np.zeros((2, 0)), 1)
    vx = sim.get_base_lin_vel()[:, 0]
    np.testing.assert_allclose(vx, [6.0 / 2 * 0.002, 6.0 / 4 * 0.002], rtol=1e-12)


def test_gravity_per_env_free_fall(make):
    # z = 1 - g dt^2 n(n+1)/2 with each env's own g (Euler)
    sim = make(kit("free_body.xml"), num_envs=2, integrator="euler")
    sim.apply_init_randomization(InitRandomizationPlan([
        RandomizationOp(term="gravity", values=[[0, 0, -1.62]], env_ids=[1])]))
    sim.step(np.zeros((2, 0)), 10)
    g = np.array([9.81, 1.62])
    np.testing.assert_allclose(sim.get_base_pos()[:, 2], 1 - g * 0.002 ** 2 * 55, atol=1e-12)


def test_kp_changes_position_response(make):
    # Stiffer PD (kp 600 vs 60) on the fixed base tracks a step target more closely.
    sim = make(QUADRUPED, num_envs=2, scene_kwargs={"default_keyframe": "home"})
    all_acts = np.arange(12)
    sim.apply_init_randomization(InitRandomizationPlan([
        RandomizationOp(term="actuator_kp", values=np.full((1, 12), 600.0), env_ids=[1], target_ids=all_acts)]))
    kp, _ = sim.get_model_field("actuator_kp"), None
    assert kp[1].tolist() == [600.0] * 12 and kp[0].tolist() == [60.0] * 12
    sim.step(home_ctrl(sim), 200)
    err = np.abs(sim.get_dof_pos() - home_ctrl(sim)).mean(axis=1)
    assert err[1] < err[0] / 3


def test_geom_size_grows_contact(make):
    # A larger ball (r 0.2 vs 0.1) rests 0.1 m higher on the plateau (h = 0.4).
    sim = make(kit("hfield_terrain.xml"), num_envs=2)
    sim.apply_init_randomization(InitRandomizationPlan([
        RandomizationOp(term="geom_size", values=[[[0.2, 0, 0]]], env_ids=[1], target_ids=[1])]))
    sim.step(np.zeros((2, 0)), 1000)
    np.testing.assert_allclose(sim.get_base_pos()[:, 2], [0.5, 0.6], atol=2e-3)


def test_motor_has_no_kp(make):
    sim = make(kit("fixed_arm.xml"))
    with pytest.raises(ValueError, match="PD bias"):
        sim.apply_init_randomization(InitRandomizationPlan([
            RandomizationOp(term="actuator_kp", values=[[5.0]], target_ids=[0])]))


def test_interval_and_reset_terms(make):
    sim = make(kit("free_body.xml"), num_envs=3)
    sim.apply_interval_randomization(IntervalRandomizationPlan([
        RandomizationOp(term="root_lin_vel_delta", values=[[1.0, 0, 0]], env_ids=[2], operation="add")]))
    np.testing.assert_allclose(sim.get_base_lin_vel()[:, 0], [0, 0, 1.0])
    qpos, qvel = sim.get_qpos()[[0]], np.zeros((1, 6))
    sim.set_state(np.array([0]), qpos, qvel, randomization=ResetRandomizationPayload([
        # env_ids given explicitly: core's resolve_op checks env_ids=None values against num_envs
        RandomizationOp(term="dof_damping", values=[[0.5] * 6], env_ids=[0], target_ids=np.arange(6)),
        RandomizationOp(term="root_ang_vel_delta", values=[[0, 0, 2.0]], env_ids=[0], operation="add")]))
    damping = sim.get_model_field("dof_damping")
    assert damping[0].tolist() == [0.5] * 6 and damping[1].tolist() == [0.0] * 6
    np.testing.assert_allclose(sim.get_base_ang_vel()[0], [0, 0, 2.0])
