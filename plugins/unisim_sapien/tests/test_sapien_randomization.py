"""Randomization on PhysX (one scene per env), against MuJoCo with the same randomized model.

Each env gets its own values; the known answer is MuJoCo's trajectory with those values (the MuJoCo
backend's batch holds them per env), or a closed form.
"""

from __future__ import annotations

import numpy as np
import pytest

from unisim_conformance import scene_path
from unisim_core import (
    InitRandomizationPlan,
    InvalidInputError,
    RandomizationOp,
    ResetRandomizationPayload,
    SceneCfg,
    UnsupportedCapabilityError,
    create_backend,
)

pytest.importorskip("mujoco", reason="the reference trajectories come from MuJoCo (pip install mujoco)")


def _pair(scene: str, n: int, dt: float, ops: list[RandomizationOp]):
    out = []
    for name in ("mujoco", "sapien"):
        b = create_backend(name, SceneCfg(str(scene_path(scene))), n, dt)
        b.apply_init_randomization(InitRandomizationPlan(ops))
        out.append(b)
    return out


def test_body_joint_and_gravity_terms_follow_mujoco_per_env():
    """fixed_arm, 3 envs: link masses, inertias, COMs, joint damping and armature, gravity, each env its
    own values; motor torques for 0.25 s. MuJoCo (float64) vs PhysX (float32): the envs drift 0.23 rad
    apart, PhysX stays within 6e-7 rad of MuJoCo in each (measured), and reads the values back."""
    mj, sp = _pair("fixed_arm", 3, 0.002, [])
    links = mj.get_body_ids(["upper_arm", "forearm", "hand"])
    scale = np.array([[1.5, 0.8, 1.2], [0.7, 1.3, 2.0], [1.0, 1.0, 1.0]])
    ops = [RandomizationOp(term="body_mass", target_ids=links, values=scale, operation="scale"),
           RandomizationOp(term="body_inertia", target_ids=links, values=scale[..., None] * np.ones(3),
                           operation="scale"),
           RandomizationOp(term="body_com_offset", target_ids=links, operation="add",
                           values=np.array([[[0.01, 0, 0.02]] * 3, [[0, -0.02, 0.01]] * 3, [[0, 0, 0]] * 3])),
           RandomizationOp(term="dof_damping", target_ids=[1, 2], values=[[0.5, 0.2], [0.05, 0.3], [0.1, 0.1]]),
           RandomizationOp(term="dof_armature", target_ids=[1, 3], values=[[0.05, 0.02], [0.001, 0.03], [0.01, 0.01]]),
           RandomizationOp(term="gravity", values=[[0, 0, -9.81], [0.5, 0, -12.0], [0, 1.0, -5.0]])]
    q0, ctrl = np.tile([0.3, 0.8, -0.6, 0.4], (3, 1)), np.tile([0.5, 2.0, -1.0, 0.3], (3, 1))
    for b in (mj, sp):
        b.apply_init_randomization(InitRandomizationPlan(ops))
        b.set_state(np.arange(3), q0, np.zeros((3, 4)))
        b.step(ctrl, 125)
    assert np.abs(mj.get_qpos()[0] - mj.get_qpos()[1]).max() > 0.1  # the envs differ
    np.testing.assert_allclose(sp.get_qpos(), mj.get_qpos(), atol=5e-6)
    for term in ("body_mass", "body_inertia", "body_com_offset", "dof_damping", "dof_armature", "gravity"):
        np.testing.assert_allclose(sp.get_model_field(term), mj.get_model_field(term), rtol=1e-6, err_msg=term)


def test_servo_gains_and_frictionloss_follow_mujoco_per_env():
    """actuated_hinges, 3 envs: kp and kd of the position servo, kp of the velocity servo (MuJoCo writes its
    gainprm[0] and biasprm[1]: the velocity servo gets a position term), kd of it, the damped joint's
    frictionloss and damping; 0.3 s. The servos within 1e-5 rad of MuJoCo (measured 4.5e-6 on the kv 1 servo),
    the friction joint within 1e-4 (5.7e-5: MuJoCo's frictionloss is a soft constraint, PhysX's a
    force-limited drive, docs/sapien.md)."""
    ops = [RandomizationOp(term="actuator_kp", target_ids=[2, 4], values=[[20, 0.3], [4, 0.05], [8, 0.0]]),
           RandomizationOp(term="actuator_kd", target_ids=[2, 4], values=[[1.0, 0.3], [0.1, 0.05], [0.4, 0.1]]),
           RandomizationOp(term="dof_frictionloss", target_ids=[5], values=[[0.0], [0.02], [0.05]]),
           RandomizationOp(term="dof_damping", target_ids=[5], values=[[0.01], [0.03], [0.0]])]
    mj, sp = _pair("actuated_hinges", 3, 0.001, ops)
    ctrl = np.tile([0.5, 0.5, 0.8, 0.0, 3.0, 0.0], (3, 1))
    for b in (mj, sp):
        v = np.zeros((3, b.nv))
        v[:, 5] = 2.0  # the damped joint spins down against its friction
        b.set_state(np.arange(3), np.zeros((3, b.nq)), v)
        b.step(ctrl, 300)
    cols = [2, 4, 5]
    assert np.abs(mj.get_qpos()[0, cols] - mj.get_qpos()[1, cols]).min() > 0.05  # every column differs per env
    np.testing.assert_allclose(sp.get_qpos()[:, [2, 4]], mj.get_qpos()[:, [2, 4]], atol=1e-5)
    np.testing.assert_allclose(sp.get_qpos()[:, 5], mj.get_qpos()[:, 5], atol=1e-4)
    for term in ("actuator_kp", "actuator_kd", "dof_frictionloss"):
        np.testing.assert_allclose(sp.get_model_field(term), mj.get_model_field(term), rtol=1e-6, err_msg=term)


def test_friction_is_mujocos_max_of_the_pair_on_physx_averaged_materials():
    """box_on_plane, 3 envs: (floor, box) sliding friction (0.5, 0.3), (0.5, 0.8), (0.2, 0.2); MuJoCo's
    contact takes the larger (0.5, 0.8, 0.2), PhysX averages the two materials, so each env's materials
    are solved for MuJoCo's value. Pushed with 9 N for 0.3 s from rest: dv = (F/m - mu g) t, which PhysX's
    rigid friction meets within 1e-3 m/s (measured 1.3e-6) and MuJoCo's soft cone within 0.03 (0.029)."""
    mu = np.array([0.5, 0.8, 0.2])
    fr = [[[0.5, 0.005, 1e-4], [0.3, 0.005, 1e-4]], [[0.5, 0.005, 1e-4], [0.8, 0.005, 1e-4]],
          [[0.2, 0.005, 1e-4], [0.2, 0.005, 1e-4]]]
    out = {}
    for b in _pair("box_on_plane", 3, 0.002, [RandomizationOp(term="geom_friction", target_ids=[0, 1], values=fr)]):
        b.step(np.zeros((3, 0)), 50)  # settle
        v0, box = b.get_base_lin_vel()[:, 0].copy(), b.get_body_ids(["box"])
        for _ in range(150):
            b.apply_body_force(box, np.tile([[[9.0, 0.0, 0.0]]], (3, 1, 1)))
            b.step(np.zeros((3, 0)), 1)
        out[b.name] = b.get_base_lin_vel()[:, 0] - v0
    np.testing.assert_allclose(out["sapien"], (9.0 - mu * 9.81) * 0.3, atol=1e-3)
    np.testing.assert_allclose(out["sapien"], out["mujoco"], atol=0.03)


def test_reset_and_interval_terms_touch_only_their_envs():
    """A reset payload randomizes only the envs being reset (mass read back, the others' untouched and
    their state bitwise the same); an interval root kick adds to the listed env's velocity only."""
    b = create_backend("sapien", SceneCfg(str(scene_path("free_body"))), 3, 0.002)
    box = b.get_body_ids(["box"])
    before = b.get_qpos()
    op = RandomizationOp(term="body_mass", target_ids=box, values=[[3.0]])
    b.set_state(np.array([1]), before[1:2], b.get_qvel()[1:2], randomization=ResetRandomizationPayload([op]))
    np.testing.assert_allclose(b.get_model_field("body_mass")[:, box[0]], [2.0, 3.0, 2.0])
    assert b.sapien_articulations[1][0].get_links()[0].mass == pytest.approx(3.0)
    b.apply_body_force(box, np.tile([[[6.0, 0.0, 0.0]]], (3, 1, 1)))
    b.step(np.zeros((3, 0)), 1)  # dv = F / m dt per env
    np.testing.assert_allclose(b.get_base_lin_vel()[:, 0], 6.0 / np.array([2.0, 3.0, 2.0]) * 0.002, rtol=1e-4)


def test_terms_physx_cannot_hold_are_refused_by_name_and_nothing_is_written():
    """geom_size, solref and solimp are refused with the engine's reason (nothing written); a free joint's
    dof damping, kp of a motor and frictions no PhysX materials can give are InvalidInputErrors."""
    b = create_backend("sapien", SceneCfg(str(scene_path("box_on_plane"))), 2, 0.002)
    assert not {"geom_size", "geom_solref", "geom_solimp"} & set(b.get_dr_capabilities().init_terms)
    before = b.get_model_field("geom_friction")
    ok = RandomizationOp(term="geom_friction", target_ids=[1], values=[[[0.9, 0.005, 1e-4]]] * 2)
    for term, values, why in (("geom_size", [[[0.2, 0.2, 0.2]]] * 2, "setGeometry"),
                              ("geom_solref", [[[0.01, 1.0]]] * 2, "no PhysX counterpart")):
        bad = RandomizationOp(term=term, target_ids=[1], values=values)
        with pytest.raises(UnsupportedCapabilityError, match=f"{term}.*{why}"):
            b.apply_init_randomization(InitRandomizationPlan([ok, bad]))
    np.testing.assert_array_equal(b.get_model_field("geom_friction"), before)
    with pytest.raises(InvalidInputError, match="free joint"):
        b.apply_init_randomization(InitRandomizationPlan([RandomizationOp(term="dof_damping", target_ids=[0],
                                                                          values=[[1.0]] * 2)]))
    hinges = create_backend("sapien", SceneCfg(str(scene_path("actuated_hinges"))), 1, 0.001)
    with pytest.raises(InvalidInputError, match="no PD bias"):
        hinges.apply_init_randomization(InitRandomizationPlan([RandomizationOp(term="actuator_kp", target_ids=[0],
                                                                               values=[[5.0]])]))


def test_materials_give_mujocos_pair_friction_ground_pairs_first():
    """Floor (rank 0) and moving geoms (rank 2): a star always has MuJoCo's max on every pair; an odd cycle of
    moving geoms fixes the values; a moving pair the others contradict gets the average of its materials and
    is reported with both values; ground pairs that contradict each other are refused."""
    from unisim_sapien._friction import physx_frictions

    mu = np.array([1.0, 0.2, 0.8, 0.5])
    x, off = physx_frictions(mu, [(0, 1), (0, 2), (0, 3)], [0, 2, 2, 2])
    np.testing.assert_allclose(x, [1.0] * 4)
    assert off == []
    x, off = physx_frictions(mu[:3], [(0, 1), (0, 2), (1, 2)], [0, 2, 2])
    np.testing.assert_allclose(x, [1.2, 0.8, 0.8])
    x, off = physx_frictions(mu, [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3), (0, 3)], [0, 2, 2, 2])
    np.testing.assert_allclose(x[0] + x[1:], 2.0)  # every floor pair: MuJoCo's max 1.0
    np.testing.assert_allclose(x[1:], 0.8)  # two of the three moving pairs ask for 0.8: kept
    assert off == [(1, 3, pytest.approx(0.8), 0.5)]
    with pytest.raises(ValueError, match="contradict"):  # two floors and two geoms: an even cycle, 1 != 0.9
        physx_frictions(np.array([1.0, 0.5, 0.2, 0.9]), [(0, 2), (0, 3), (1, 2), (1, 3)], [0, 0, 2, 2])


def test_stacked_drives_give_each_envs_own_efforts():
    """``unisim_physx.stack_drives``: the servo law on per-env gains, damping and gain overrides equals
    each env's own drives on its row, bit for bit (the randomized batch runs one vectorized law)."""
    import dataclasses

    from unisim_core.plugin.mjcf_lite import load_mjcf
    from unisim_physx import physx_drives, stack_drives

    lite = load_mjcf(str(scene_path("actuated_hinges")))
    base = physx_drives(lite.joints, lite.actuators)
    rows = [base, dataclasses.replace(base, kp=base.kp * 2.0, gain=base._default_gain * 3.0,
                                      damping=base.damping + 0.5)]
    stacked = stack_drives(rows)
    assert stacked.kp.shape == (2, len(lite.actuators)) and stacked.damping.shape == (2, len(base.joints))
    rng = np.random.default_rng(0)
    ctrl, q, qd = rng.normal(size=(2, len(lite.actuators))), rng.normal(size=(2, 7)), rng.normal(size=(2, 7))
    got = stacked.efforts(ctrl, q, qd)
    for i, row in enumerate(rows):
        np.testing.assert_array_equal(got[i], row.efforts(ctrl[i:i + 1], q[i:i + 1], qd[i:i + 1])[0])
    assert not np.array_equal(got[0], got[1])
