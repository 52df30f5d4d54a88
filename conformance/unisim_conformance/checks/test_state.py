"""Layer 3 - state: ``set_state`` isolation and visibility, round trips, ``step(nsteps)``.

Tolerances: isolation and ``nsteps`` are bitwise (``np.array_equal`` on every read). For
``nsteps`` the contract says ``step(ctrl, k)`` holds ``ctrl`` over k substeps, so it must be the
same computation as k single steps; an engine whose fused stepping reorders floating-point
work may list the reads of ``state::nsteps_equals_repeated_steps[READ]`` that differ as expected
failures with its bound.
Round trips through ``np_dtype`` allow ``4 * eps(np_dtype)`` relative (set_state renormalizes
quaternions from rounded values).
"""

from __future__ import annotations

import numpy as np
import pytest

from unisim_conformance._props import READS
from unisim_conformance._support import (
    all_getters,
    assert_read_equal,
    diff_by_read,
    diff_report,
    eps,
    home_ctrl,
    varied_quadruped_state,
)

pytestmark = [pytest.mark.state, pytest.mark.contract("1.0")]


def _setup(kit, n=4):
    b = kit.make("quadruped", n)
    qpos, qvel = varied_quadruped_state(b)
    b.set_state(np.arange(n), qpos, qvel)
    b.step(home_ctrl(b), 3)
    return b


def _isolation_run(kit):
    b = _setup(kit)
    before = all_getters(b)
    qpos, qvel = varied_quadruped_state(b, seed=7)
    b.set_state(np.array([3, 1]), qpos[:2], qvel[:2])
    after = all_getters(b)
    return {"untouched_envs_unchanged": diff_report(before, after, rows=[0, 2]),
            "listed_envs_changed": diff_report(before, after, rows=[1, 3])}


@pytest.mark.parametrize("prop", ["untouched_envs_unchanged", "listed_envs_changed"])
def test_set_state_subset_isolation(kit, prop):
    """set_state on envs [1, 3] leaves envs [0, 2] bit-identical in every read (base, dof,
    all bodies in world and base/body frames, sensors, snapshots: untouched_envs_unchanged) and
    changes envs 1 and 3 (listed_envs_changed)."""
    bad = kit.shared("state.isolation", _isolation_run)[prop]
    if prop == "untouched_envs_unchanged":
        assert not bad, f"set_state([3, 1]) changed untouched envs 0 and 2 in: {', '.join(bad)}"
    else:
        assert bad, "set_state([3, 1]) changed nothing in envs 1 and 3"


def test_set_state_subset_does_not_perturb_future(kit):
    """After set_state on env 1, env 0 evolves exactly as in a twin backend without that reset."""
    b, twin = _setup(kit, 2), _setup(kit, 2)
    qpos, qvel = varied_quadruped_state(b, seed=3)
    b.set_state(np.array([1]), qpos[:1], qvel[:1])
    for _ in range(5):
        b.step(home_ctrl(b), 2)
        twin.step(home_ctrl(twin), 2)
    bad = diff_report(all_getters(twin), all_getters(b), rows=[0])
    assert not bad, f"a reset of env 1 changed the later trajectory of env 0 in: {', '.join(bad)}"


def _visible_run(kit):
    b = _setup(kit, 2)
    ids = np.arange(b.num_bodies, dtype=np.int32)
    q0 = np.tile(np.asarray(b.get_keyframe_qpos("home"), dtype=np.float64), (2, 1))
    b.set_state(np.arange(2), q0, np.zeros((2, b.nv)))
    p0 = b.get_body_pos_w(ids).astype(np.float64)
    q1 = q0.copy()
    q1[:, 0:3] += [[1.0, 2.0, 0.5], [-3.0, 0.25, 1.0]]
    b.set_state(np.arange(2), q1, np.zeros((2, b.nv)))
    want = np.repeat((q1 - q0)[:, None, 0:3], len(ids), axis=1)
    want[:, 0] = 0.0  # the world body does not move
    return {"base_pos": (b.get_base_pos(), q1[:, 0:3]),
            "body_pos_w": (b.get_body_pos_w(ids).astype(np.float64) - p0, want),
            "base_lin_vel": (b.get_base_lin_vel(), np.zeros((2, 3)))}


@pytest.mark.parametrize("read", ["base_pos", "body_pos_w", "base_lin_vel"])
def test_set_state_visible_immediately(kit, read):
    """Getters reflect a set_state at once: get_base_pos is the set translation (base_pos), every
    body moves rigidly with it (body_pos_w), and a set qvel of 0 reads 0 (base_lin_vel). 4e-5 m."""
    got, want = kit.shared("state.visible", _visible_run)[read]
    what = {"base_pos": "get_base_pos stale after set_state",
            "body_pos_w": "get_body_pos_w stale after set_state (bodies must translate with the base)",
            "base_lin_vel": "get_base_lin_vel not cleared by set_state(qvel=0)"}[read]
    np.testing.assert_allclose(got, want, atol=4e-5, err_msg=what)


ROUND_TRIP = ("get_qpos", "get_qvel", "get_base_pos", "get_base_quat", "get_dof_pos", "get_body_pos_w")


def _round_trip_run(kit):
    b = _setup(kit, 3)
    before = all_getters(b)
    b.set_state(np.arange(3), b.get_qpos(), b.get_qvel())
    after = all_getters(b)
    return {k: (after[k], before[k]) for k in ROUND_TRIP}


@pytest.mark.parametrize("getter", ROUND_TRIP)
def test_get_set_round_trip(kit, getter):
    """get_qpos/get_qvel -> set_state(all) reproduces each read to 4 eps of the engine's precision."""
    after, before = kit.shared("state.round_trip", _round_trip_run)[getter]
    tol = 4 * eps(kit.precision)
    np.testing.assert_allclose(after, before, rtol=tol, atol=tol, err_msg=f"{getter} after get->set round trip")


def _keyframe_run(kit):
    b = kit.make("quadruped", 2)
    home = np.asarray(b.get_keyframe_qpos("home"), dtype=np.float64)
    b.set_state(np.arange(2), np.tile(home, (2, 1)), np.zeros((2, b.nv)))
    out = {"home": home, "keyframe_round_trip": b.get_qpos()}
    d = np.asarray(b.get_default_qpos(), dtype=np.float64)
    b.set_state(np.arange(2), np.tile(d, (2, 1)), np.tile(b.get_init_qvel(), (2, 1)))
    out.update(default=d, default_round_trip=b.get_qpos())
    out["default_keyframe"] = kit.make("quadruped", 1, default_keyframe="home").get_default_qpos()
    return out


@pytest.mark.parametrize("prop", ["keyframe_values", "keyframe_round_trip", "default_qpos", "default_round_trip",
                                  "default_keyframe"])
def test_keyframe_and_default_round_trip(kit, prop):
    """Keyframe 'home' (joints (0, 0.9, -1.8) per leg, base z 0.2848: keyframe_values) and the default
    qpos (the model qpos0: default_qpos) survive set_state -> get_qpos (keyframe_round_trip,
    default_round_trip); SceneCfg(default_keyframe='home') makes 'home' the default (default_keyframe)."""
    r = kit.shared("state.keyframe", _keyframe_run)
    home, tol = r["home"], 4 * eps(kit.precision)
    if prop == "keyframe_values":
        assert home.shape == (len(r["default"]),), f"keyframe 'home' shape {home.shape}"
        np.testing.assert_allclose(home[7:], np.tile([0, 0.9, -1.8], 4), atol=1e-6, err_msg="keyframe joints")
        np.testing.assert_allclose(home[:7], [0, 0, 0.2848, 1, 0, 0, 0], atol=1e-6, err_msg="keyframe root")
    elif prop == "keyframe_round_trip":
        np.testing.assert_allclose(r[prop], np.tile(home, (2, 1)), rtol=tol, atol=tol, err_msg="keyframe round trip")
    elif prop == "default_qpos":
        np.testing.assert_allclose(r["default"][:7], [0, 0, 0.2848, 1, 0, 0, 0], atol=1e-6,
                                   err_msg="default qpos root (qpos0)")
    elif prop == "default_round_trip":
        np.testing.assert_allclose(r[prop], np.tile(r["default"], (2, 1)), rtol=tol, atol=tol,
                                   err_msg="default round trip")
    else:
        np.testing.assert_allclose(r[prop], home, atol=tol,
                                   err_msg="get_default_qpos with SceneCfg(default_keyframe='home')")


@pytest.mark.rules(4)
@pytest.mark.parametrize("prop", ["qpos", "qvel"])
def test_a_new_backend_starts_in_the_default_state(kit, prop):
    """A backend built on SceneCfg(default_keyframe='home') starts every env in 'home' (qpos, 4 eps)
    at rest (qvel exactly 0), the same on every engine (#41 found MotrixSim and the fake starting at
    qpos0, the others at the keyframe: a policy deployed without set_state threw the robot up)."""
    b = kit.make("quadruped", 2, default_keyframe="home")
    tol = 4 * eps(kit.precision)
    if prop == "qpos":
        np.testing.assert_allclose(b.get_qpos(), np.tile(b.get_keyframe_qpos("home"), (2, 1)), rtol=tol, atol=tol,
                                   err_msg="initial qpos is not the default keyframe")
    else:
        assert not b.get_qvel().any(), f"initial qvel is not zero: {b.get_qvel()}"


def _nsteps_run(kit):
    a, b = _setup(kit, 2), _setup(kit, 2)
    ctrl = home_ctrl(a) + 0.1
    a.step(ctrl, 5)
    for _ in range(5):
        b.step(ctrl, 1)
    return diff_by_read(all_getters(b), all_getters(a))


@pytest.mark.parametrize("read", READS)
def test_nsteps_equals_repeated_steps(kit, read):
    """step(ctrl, 5) equals five step(ctrl, 1) calls, bitwise, one read per id (every sensor under
    get_sensor_data; one pair of simulations)."""
    diffs = kit.shared("state.nsteps", _nsteps_run)
    assert_read_equal(kit, diffs, read, "step(ctrl, 5) differs from 5 x step(ctrl, 1)")


def test_nsteps_advances(kit):
    """step(ctrl, k) advances k substeps: free fall velocity after k steps is -g k dt."""
    b = kit.make("free_body", 1)
    dt = b.sim_dt
    b.step(np.zeros((1, b.num_actuators)), 7)
    vz = float(b.get_base_lin_vel()[0, 2])
    # constant acceleration: every integrator gives v = -g t exactly (float rounding only)
    assert abs(vz - (-9.81 * 7 * dt)) < 1e-4, f"after step(ctrl, 7): vz = {vz}, expected {-9.81 * 7 * dt}"
