"""Randomization on Genesis means what it means on MuJoCo: the same plan on both engines gives the same
tables (``get_model_field``) and the same motion, env by env; terms Genesis cannot hold per env are refused
by name with nothing written."""

from __future__ import annotations

import numpy as np
import pytest
from genesis_testutil import require_genesis

require_genesis()

from unisim_core import (  # noqa: E402
    InitRandomizationPlan,
    IntervalRandomizationPlan,
    RandomizationOp,
    SceneCfg,
    UnsupportedCapabilityError,
    create_backend,
)
from unisim_core.contract.randomization import MODEL_TERMS  # noqa: E402

#: Three joints (hinge, hinge, slide) under gravity, no contacts: every model term changes the motion. The
#: second link's inertial frame is rotated (iquat), so principal moments must land in that frame.
ARM = """<mujoco model="dr_arm">
  <compiler angle="radian"/>
  <option timestep="0.002" integrator="implicitfast"/>
  <worldbody>
    <body name="l1" pos="0 0 1">
      <joint name="j1" type="hinge" axis="0 1 0" damping="0.05" armature="0.01" frictionloss="0.02"/>
      <inertial pos="0.1 0 -0.2" mass="1" diaginertia="0.02 0.03 0.01"/>
      <geom name="g1" type="capsule" fromto="0 0 0 0 0 -0.4" size="0.02" contype="0" conaffinity="0" mass="0"/>
      <body name="l2" pos="0 0 -0.4">
        <joint name="j2" type="hinge" axis="1 0 0" damping="0.02"/>
        <inertial pos="0 0.05 -0.15" quat="0.9 0.1 0.3 0.2" mass="0.5" diaginertia="0.01 0.006 0.004"/>
        <geom name="g2" type="capsule" fromto="0 0 0 0 0 -0.3" size="0.02" contype="0" conaffinity="0" mass="0"/>
        <body name="l3" pos="0 0 -0.3">
          <joint name="j3" type="slide" axis="0 0 1" damping="0.5"/>
          <inertial pos="0 0 0" mass="0.2" diaginertia="0.001 0.001 0.001"/>
          <geom name="g3" type="sphere" size="0.03" contype="0" conaffinity="0" mass="0"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position name="p1" joint="j1" kp="20" kv="1"/>
    <velocity name="v2" joint="j2" kv="0.5"/>
    <motor name="m3" joint="j3" gear="1"/>
  </actuator>
</mujoco>
"""

#: Env 1 of 2 randomized (env 0 nominal), every model term Genesis holds and every operation.
PLAN = [
    RandomizationOp(term="body_mass", env_ids=[1], target_ids=[1, 3], values=[[1.5, 0.8]], operation="scale"),
    RandomizationOp(term="body_com_offset", env_ids=[1], target_ids=[2], values=[[[0.02, -0.03, 0.01]]],
                    operation="add"),
    RandomizationOp(term="body_inertia", env_ids=[1], target_ids=[2], values=[[[0.015, 0.008, 0.005]]]),
    RandomizationOp(term="dof_damping", env_ids=[1], target_ids=[0, 1], values=[[0.2, 0.05]]),
    RandomizationOp(term="dof_armature", env_ids=[1], target_ids=[1], values=[[0.02]], operation="add"),
    RandomizationOp(term="dof_frictionloss", env_ids=[1], target_ids=[0], values=[[0.05]]),
    RandomizationOp(term="actuator_kp", env_ids=[1], target_ids=[0], values=[[1.5]], operation="scale"),
    RandomizationOp(term="actuator_kd", env_ids=[1], target_ids=[0, 1], values=[[2.0, 0.8]]),
    RandomizationOp(term="gravity", env_ids=[1], values=[[1.0, -0.5, -7.0]]),
]


def _run(sim):
    """Apply the plan, then 0.4 s of fixed controls from a tilted start; returns the (steps, 2, nq) qpos trace."""
    sim.apply_init_randomization(InitRandomizationPlan(PLAN))
    sim.set_state(np.arange(2), np.tile([0.3, -0.2, 0.05], (2, 1)), np.zeros((2, 3)))
    ctrl = np.tile([0.5, 1.0, 0.3], (2, 1))
    trace = []
    for _ in range(200):
        sim.step(ctrl, 1)
        trace.append(sim.get_qpos())
    return np.array(trace)


@pytest.fixture(scope="module")
def arms(tmp_path_factory):
    path = tmp_path_factory.mktemp("dr") / "dr_arm.xml"
    path.write_text(ARM)
    sims = {name: create_backend(name, SceneCfg(str(path)), 2, 0.002, np_dtype=np.float64)
            for name in ("mujoco", "genesis")}
    yield sims
    for sim in sims.values():
        sim.close()


def test_plan_gives_mujocos_tables_and_motion(arms):
    """The same plan on both engines: every randomized table reads back as MuJoCo's (1e-12); over 0.4 s each
    env's qpos follows MuJoCo's same env within 2e-4 (measured 1.6e-5 nominal, 7.8e-5 randomized: the two
    engines' soft frictionloss constraints, solved by each one's own solver), while the randomization moves
    env 1 by 0.21 from env 0, so a value stored but not applied, or applied in another frame, fails."""
    mj, gs = arms["mujoco"], arms["genesis"]
    traces = {name: _run(sim) for name, sim in arms.items()}
    for term in sorted(MODEL_TERMS & gs.get_dr_capabilities().init_terms):
        np.testing.assert_allclose(gs.get_model_field(term), mj.get_model_field(term), rtol=1e-12, atol=1e-12,
                                   err_msg=term)
    effect = np.abs(traces["mujoco"][:, 1] - traces["mujoco"][:, 0]).max()
    gap = np.abs(traces["genesis"] - traces["mujoco"]).max(axis=(0, 2))
    assert effect > 0.05, effect
    assert gap[1] < 2e-4 and gap[0] < 2e-4, gap


def test_friction_ratio_slides_as_on_mujoco():
    """box_on_plane sliding from 1.5 m/s: env 1's floor and box friction lowered to 0.3 (from 0.5; both engines
    take the larger of the pair) let it slide v0^2 / (2 mu g) = 0.382 m instead of 0.229 m; Genesis' stops
    match MuJoCo's within 2 mm (contact tier)."""
    from unisim_conformance import scene_path

    out = {}
    for name in ("mujoco", "genesis"):
        sim = create_backend(name, SceneCfg(str(scene_path("box_on_plane"))), 2, 0.002, np_dtype=np.float64)
        geoms = [sim.get_geom_id("floor"), sim.get_geom_id("box_geom")]
        sim.apply_init_randomization(InitRandomizationPlan([RandomizationOp(
            term="geom_friction", env_ids=[1], target_ids=geoms, values=[[[0.3, 0.005, 0.0001]] * 2])]))
        qvel = np.zeros((2, 6))
        qvel[:, 0] = 1.5
        sim.set_state(np.arange(2), sim.get_qpos(), qvel)
        sim.step(np.zeros((2, 0)), 400)
        out[name] = sim.get_base_pos()[:, 0]
        sim.close()
    np.testing.assert_allclose(out["mujoco"], [0.229, 0.382], atol=5e-3)
    np.testing.assert_allclose(out["genesis"], out["mujoco"], atol=2e-3)


@pytest.mark.parametrize("term", ["geom_size", "geom_solref", "geom_solimp"])
def test_terms_genesis_cannot_hold_per_env_are_refused_by_name(arms, term):
    """Genesis builds collision shapes and their constraint parameters once for all envs: the term is refused
    at the call, naming it and why; the plan's other ops are not written either."""
    sim = arms["genesis"]
    width = {"geom_size": 3, "geom_solref": 2, "geom_solimp": 5}[term]
    before = sim.get_model_field("dof_damping")
    plan = IntervalRandomizationPlan([
        RandomizationOp(term="dof_damping", env_ids=[0], target_ids=[0], values=[[9.0]]),
        RandomizationOp(term=term, env_ids=[0], target_ids=[0], values=np.ones((1, 1, width)), operation="scale")])
    with pytest.raises(UnsupportedCapabilityError, match=f"'{term}'.*once for every env"):
        sim.apply_interval_randomization(plan)
    assert np.array_equal(sim.get_model_field("dof_damping"), before)
    assert term not in sim.get_dr_capabilities().interval_terms
