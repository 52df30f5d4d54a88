"""Randomization on Newton means what it means on MuJoCo: the same plan on both engines, then the
same trajectory within the kit's parity tiers (tight: 1e-4 over 1 s without contacts; contact: base
5 mm, joints 1e-2 rad), env 1 randomized and env 0 nominal. Newton keeps a body's inertia as a tensor
about the COM in the body frame and its free joints' velocity at the COM; MuJoCo principal moments in
an inertial frame and the origin's velocity: the scene below tilts every inertial frame and offsets
every COM, so a conversion missed in either direction leaves the tier."""

from __future__ import annotations

import numpy as np
import pytest
from newton_testutil import QUADRUPED

from unisim_core import InvalidInputError, SceneCfg, create_backend
from unisim_core.contract.randomization import InitRandomizationPlan, RandomizationOp, ResetRandomizationPayload

pytest.importorskip("unisim_mujoco", reason="the reference is MuJoCo")

SPINNER = """<mujoco><option timestep="0.002" gravity="0 0 -1"/><worldbody>
  <body name="box" pos="0 0 1"><freejoint name="root"/>
    <inertial pos="0.02 -0.01 0.03" quat="0.9 0.3 0.2 0.1" mass="2" diaginertia="0.1 0.2 0.25"/>
    <body name="arm" pos="0.2 0 0">
      <joint name="hinge" axis="0 1 0.3" damping="0.1" armature="0.01"/>
      <inertial pos="0.1 0.02 0" quat="0.8 0.1 0.5 0.2" mass="0.5" diaginertia="0.004 0.003 0.002"/>
    </body>
  </body>
</worldbody></mujoco>"""


def _op(term, targets, values, operation="set"):
    values = np.asarray(values, dtype=np.float64)[None]  # env 1 only
    return RandomizationOp(term=term, env_ids=np.array([1]), target_ids=targets, values=values, operation=operation)


def _rollout(b, q, v, ctrl, seconds=1.0):
    b.set_state(np.arange(2), q, v)
    traj = [b.get_qpos().astype(np.float64)]
    for _ in range(int(round(seconds / 0.05))):
        b.step(ctrl, int(round(0.05 / b.sim_dt)))
        traj.append(b.get_qpos().astype(np.float64))
    return np.stack(traj)


def _on_both(make, path, plan, init):
    """The qpos trajectories ``(2 engines, samples, 2 envs, nq)`` of Newton and MuJoCo (float64) on
    ``path`` after ``plan``, from ``init(backend) -> (qpos, qvel, ctrl)``."""
    trajs = []
    for b in (make(path), create_backend("mujoco", SceneCfg(str(path)), 2, 0.002)):
        try:
            b.apply_init_randomization(plan)
            trajs.append(_rollout(b, *init(b)))
        finally:
            b.close()
    return trajs


def _quat_close(a, b):
    """|dq| per column, a quaternion's sign (q and -q are one rotation) chosen per sample."""
    d = np.abs(a - b)
    d[..., 3:7] = np.minimum(d[..., 3:7], np.abs(a[..., 3:7] + b[..., 3:7]))
    return d


def test_body_and_dof_terms_move_as_on_mujoco(make, tmp_path):
    """A free box with a hinged arm, spinning in tilted gravity: mass, principal inertia (in a tilted
    inertial frame), COM, damping, armature and gravity of env 1 randomized on both engines: the tight
    tier (1e-4 over 1 s; gravity and spin are low: float32 drifts ~1e-4 in 5 m of fall or a 4 rad/s spin)
    in both envs, and env 1 leaves env 0 by far more (frictionloss, a constraint,
    is in the contact-tier test below)."""
    path = tmp_path / "spinner.xml"
    path.write_text(SPINNER)
    plan = InitRandomizationPlan([
        _op("body_mass", [1, 2], [2.6, 0.35]),
        _op("body_inertia", [1, 2], [[0.12, 0.18, 0.27], [0.005, 0.0035, 0.0022]]),
        _op("body_com_offset", [1, 2], [[0.03, 0.02, -0.01], [0.12, -0.01, 0.02]]),
        _op("dof_damping", [6], [0.3]), _op("dof_armature", [6], [0.02]),
        _op("gravity", None, [0.3, -0.2, -1.5]),
    ])
    q = np.tile([0, 0, 1, 1, 0, 0, 0, 0.3], (2, 1))
    v = np.tile([0.1, -0.05, 0.2, 0.3, -0.4, 0.6, 2.0], (2, 1))
    trajs = _on_both(make, path, plan, lambda b: (q, v, np.zeros((2, 0))))
    d = _quat_close(*trajs)
    assert d.max() <= 1e-4, f"max |dq| {d.max():.3g} over 1 s (tight tier 1e-4), per env {d.max(axis=(0, 2))}"
    assert _quat_close(trajs[1][:, 1], trajs[1][:, 0]).max() > 0.1  # the randomization matters


def test_contact_and_actuator_terms_stand_as_on_mujoco(make):
    """The quadruped held at home by its PD: foot radius +5 mm, friction, solref, solimp, kp, kd, the
    base's mass and the joints' frictionloss of env 1 randomized on both engines: the contact tier in
    both envs, and env 1 stands higher than env 0 on both (a dropped write would leave them level)."""
    feet = np.arange(5, 18, 4)  # FL/FR/RL/RR_foot_geom
    pd = np.arange(12)
    plan = InitRandomizationPlan([
        _op("geom_size", feet, np.tile([0.025, 0, 0], (4, 1))),
        _op("geom_friction", feet, np.tile([0.7, 0.01, 0.001], (4, 1))),
        _op("geom_solref", feet, np.tile([0.015, 1.2], (4, 1))),
        _op("geom_solimp", feet, np.tile([0.95, 0.99, 0.001, 0.5, 2.0], (4, 1))),
        _op("actuator_kp", pd, np.full(12, 1.3), "scale"), _op("actuator_kd", pd, np.full(12, 3.0)),
        _op("body_mass", [1], [1.2], "scale"), _op("dof_frictionloss", np.arange(6, 18), np.full(12, 0.3)),
    ])

    def init(b):
        home = np.tile(b.get_keyframe_qpos("home"), (2, 1))
        return home, np.zeros((2, b.nv)), home[:, 7:]

    trajs = _on_both(make, QUADRUPED, plan, init)
    d = _quat_close(*trajs)
    assert d[..., :3].max() <= 5e-3 and d[..., 7:].max() <= 1e-2, \
        f"base {d[..., :3].max():.3g} m (tier 5e-3), joints {d[..., 7:].max():.3g} rad (tier 1e-2)"
    for t in trajs:
        assert t[-1, 1, 2] - t[-1, 0, 2] > 0.004  # 7.6 mm on both: feet +5 mm, stiffer PD


def test_new_com_keeps_the_origin_velocity(make):
    """The contract's qvel is the body origin's velocity (MuJoCo's), which Newton's free joint holds at
    the COM: after moving the COM of a spinning free body (init randomization, no set_state) the state
    reads back as it was, and a reset with a new COM reads back as written."""
    b = make("free_body")
    q = np.tile([0, 0, 1, 1, 0, 0, 0], (2, 1)).astype(float)
    v = np.tile([0.5, -0.2, 1.0, 0.2, 0.0, 0.5], (2, 1))
    b.set_state(np.arange(2), q, v)
    b.apply_init_randomization(InitRandomizationPlan([_op("body_com_offset", [1], [[0.05, -0.02, 0.03]])]))
    np.testing.assert_allclose(b.get_model_field("body_com_offset")[:, 1], [[0, 0, 0], [0.05, -0.02, 0.03]],
                               atol=1e-8)
    np.testing.assert_allclose(b.get_qvel(), v, atol=1e-6)
    b.set_state(np.arange(2), q, -v, randomization=ResetRandomizationPayload([_op("body_com_offset", [1],
                                                                                   [[-0.04, 0.01, 0.02]])]))
    np.testing.assert_allclose(b.get_qvel(), -v, atol=1e-6)


def test_terms_a_target_cannot_take_are_refused_before_anything_is_written(quadruped):
    """As on MuJoCo, a plane's size cannot change: the plan is refused naming the geom, and its body_mass
    op before it is not written either."""
    mass = quadruped.get_model_field("body_mass")
    plan = InitRandomizationPlan([_op("body_mass", [1], [9.0]), _op("geom_size", [0], [[1.0, 1.0, 0.1]])])
    with pytest.raises(InvalidInputError, match=r"geom_size.target_ids: geoms \[0\] are not primitives"):
        quadruped.apply_init_randomization(plan)
    np.testing.assert_array_equal(quadruped.get_model_field("body_mass"), mass)


DAMPED_ARM = """<mujoco><option timestep="0.002"/><worldbody>
  <body name="arm" pos="0 0 1"><joint name="j" axis="0 1 0" armature="0.01"/>
    <inertial pos="0.2 0 0" mass="1" diaginertia="0.002 0.01 0.01"/>
  </body></worldbody>
<actuator><position name="servo" joint="j" kp="20" dampratio="0.8"/></actuator></mujoco>"""


def test_dampratio_kv_is_compiled_once_as_on_mujoco(make, tmp_path):
    """MuJoCo resolves a servo's dampratio into kv once, at compile time (mjcf_lite the same way); Newton
    would resolve it again from the randomized mass and kp. kv stays MuJoCo's after both are randomized
    in env 1, and the arm swings as MuJoCo's (tight tier) in both envs."""
    path = tmp_path / "arm.xml"
    path.write_text(DAMPED_ARM)
    plan = InitRandomizationPlan([_op("actuator_kp", [0], [40.0]), _op("body_mass", [1], [2.0])])
    kd = []

    def init(b):
        kd.append(b.get_model_field("actuator_kd"))
        return np.zeros((2, 1)), np.zeros((2, 1)), np.full((2, 1), 0.5)

    trajs = _on_both(make, path, plan, init)
    assert kd[0][1, 0] == pytest.approx(kd[1][1, 0], rel=1e-6) and kd[0][0, 0] == pytest.approx(kd[0][1, 0])
    assert np.abs(trajs[0] - trajs[1]).max() <= 1e-4
