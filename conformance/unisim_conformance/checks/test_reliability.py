"""Layer - reliability: the backend fails closed at the edges.

- Lifecycle: after ``close()`` every public call raises ``BackendClosedError`` (a bound sensor
  view too); the members that describe the model (``num_envs``, ``nq``, ...) stay readable.
- Divergence: a state driven past the engine's bound (``MAX_ABS_VALUE``) is reset to the default
  state and reported every time, by ``DivergenceError`` (policy ``"raise"``, the default) or by
  ``get_diverged_envs``/``get_divergence_counts`` alone (policy ``"reset"``).
- Extreme finite input: huge or tiny quaternions are normalized or rejected (never written as
  zeros); values beyond the bound are rejected before anything is written; accepted extreme
  values read back finite; randomization terms have physical bounds.
- Error types: construction checks names and files (``UniSimError`` naming them); a rejected
  call raises a ``UniSimError`` and leaves the backend usable.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from unisim_core import Capability
from unisim_core.errors import BackendClosedError, DivergenceError, EngineError, UniSimError

pytestmark = [pytest.mark.reliability, pytest.mark.contract("1.0")]

N = 3
#: The env driven to divergence.
BAD = 1


def _state(b) -> tuple[np.ndarray, np.ndarray]:
    return b.get_qpos().astype(np.float64), b.get_qvel().astype(np.float64)


def _with_options(kit, scene: str, num_envs: int, **options):
    """A backend built with the kit's options plus ``options`` (``--unisim-backend`` mode only)."""
    return kit.make(scene, num_envs, options=options)


# ----------------------------------------------------------------------------- lifecycle
def test_closed_backend_refuses_every_call(kit):
    """After close(), state, stepping, writes and bound sensor views raise BackendClosedError;
    the model description stays readable; close() is idempotent."""
    b = kit.make("free_body", 2)
    nq, nv, nu = b.nq, b.nv, b.num_actuators
    q, v = _state(b)
    ids = np.array([b.base_body_id])
    ctrl = np.zeros((2, nu))
    calls = {
        "step": lambda: b.step(ctrl), "step_nsteps": lambda: b.step(ctrl, 20),
        "set_state": lambda: b.set_state(np.array([0]), q[:1], v[:1]),
        **{name: (lambda name=name: getattr(b, name)()) for name in (
            "get_qpos", "get_qvel", "get_state", "get_base_pos", "get_base_quat", "get_base_lin_vel",
            "get_base_ang_vel", "get_dof_pos", "get_diverged_envs", "get_divergence_counts")},
        "get_body_pos_w": lambda: b.get_body_pos_w(ids), "get_body_quat_w": lambda: b.get_body_quat_w(ids),
        "get_body_state_w": lambda: b.get_body_state_w(ids), "get_body_lin_vel_b": lambda: b.get_body_lin_vel_b(ids),
        "get_body_ids": lambda: b.get_body_ids(["box"]),
        "set_pre_step_control": lambda: b.set_pre_step_control(None),
    }
    if Capability.SENSORS in b.capabilities:
        view = b.bind_sensor_data(["box_pos"])
        calls["get_sensor_data"] = lambda: b.get_sensor_data("box_pos")
        calls["bound_sensor_view"] = view.read
    if Capability.BODY_FORCE in b.capabilities:
        calls["apply_body_force"] = lambda: b.apply_body_force(ids, np.zeros((2, 1, 3)))
    if Capability.PHYSICS_SNAPSHOT in b.capabilities:
        snap = b.get_physics_state()
        calls["get_physics_state"] = lambda: b.get_physics_state()
        calls["set_physics_state"] = lambda: b.set_physics_state(snap)
    b.close()
    b.close()  # idempotent
    answered = []
    for name, call in calls.items():
        try:
            call()
        except BackendClosedError:
            continue
        except Exception as exc:  # noqa: BLE001 - any other outcome is the finding
            answered.append(f"{name} raised {type(exc).__name__}: {exc}")
            continue
        answered.append(f"{name} returned")
    assert not answered, f"calls on a closed backend that did not raise BackendClosedError: {answered}"
    assert (b.num_envs, b.nq, b.nv, b.num_actuators) == (2, nq, nv, nu), "model description unreadable after close"


# ----------------------------------------------------------------------------- divergence
def _drive_to_divergence(b) -> None:
    """Give env BAD a root speed at the engine's bound: within 1.5 s its position passes it."""
    q, v = _state(b)
    v[BAD, 0] = b.MAX_ABS_VALUE
    b.set_state(np.array([BAD]), q[[BAD]], v[[BAD]])


def _assert_reset_to_default(b, counts: list[int]) -> None:
    mask = np.zeros(N, dtype=bool)
    mask[BAD] = True
    assert np.array_equal(b.get_diverged_envs(), mask), f"get_diverged_envs {b.get_diverged_envs()} != {mask}"
    assert b.get_divergence_counts().tolist() == counts
    q, v = _state(b)
    assert np.isfinite(q).all() and np.isfinite(v).all(), "a non-finite state was returned"
    tol = 8 * float(np.finfo(b.np_dtype).eps)
    np.testing.assert_allclose(q[BAD], b.get_default_qpos(), rtol=0, atol=tol,
                               err_msg="the diverged env was not reset to the default qpos")
    np.testing.assert_array_equal(v[BAD], 0.0, err_msg="the diverged env's velocity was not reset to zero")


def test_divergence_raises_every_time_and_resets(kit):
    """Policy "raise" (default): DivergenceError (an EngineError) naming the env, each time; the
    env is reset to the default state, counted, and the backend keeps stepping."""
    b = kit.make("free_body", N)
    ctrl = np.zeros((N, b.num_actuators))
    nsteps = math.ceil(1.5 / b.sim_dt) + 1
    for count in (1, 2):
        _drive_to_divergence(b)
        with pytest.raises(DivergenceError) as info:
            b.step(ctrl, nsteps)
        assert isinstance(info.value, EngineError)
        assert info.value.env_ids == (BAD,) and f"[{BAD}]" in str(info.value), str(info.value)
        _assert_reset_to_default(b, [0, count, 0])
    b.step(ctrl, 5)
    assert not b.get_diverged_envs().any(), "a clean step still reports diverged envs"
    assert b.get_divergence_counts().tolist() == [0, 2, 0]


def test_divergence_reset_policy_reports_without_raising(kit):
    """Policy "reset": the step returns; the diverged env is reset and reported by the mask and counter."""
    b = _with_options(kit, "free_body", N, divergence="reset")
    ctrl = np.zeros((N, b.num_actuators))
    _drive_to_divergence(b)
    b.step(ctrl, math.ceil(1.5 / b.sim_dt) + 1)
    _assert_reset_to_default(b, [0, 1, 0])
    b.step(ctrl, 5)
    assert not b.get_diverged_envs().any()


# ----------------------------------------------------------------------------- extreme finite input
@pytest.mark.parametrize("scale", [1e300, 1e-300], ids=["huge", "tiny"])
def test_extreme_quaternion_is_normalized_or_rejected(kit, scale):
    """A root quaternion [s, 0, 0, 0] with a huge or tiny s reads back as the identity, or is
    rejected naming qpos with the state unchanged; it is never written as zeros or NaN."""
    b = kit.make("free_body", 2)
    q, v = _state(b)
    q[0, 3:7] = [scale, 0.0, 0.0, 0.0]
    before = _state(b)
    try:
        b.set_state(np.array([0]), q[:1], v[:1])
    except ValueError as exc:
        assert "qpos" in str(exc)
        after = _state(b)
        assert np.array_equal(after[0], before[0]) and np.array_equal(after[1], before[1])
        return
    np.testing.assert_allclose(b.get_base_quat()[0], [1.0, 0.0, 0.0, 0.0], atol=1e-6)


def test_values_beyond_the_engine_bound_are_rejected(kit):
    """qvel and forces of magnitude above MAX_ABS_VALUE raise a ValueError naming the argument
    before anything is written."""
    b = kit.make("free_body", 2)
    huge = 10.0 * b.MAX_ABS_VALUE
    if not math.isfinite(huge):
        pytest.skip(f"backend {kit.label!r} bounds values only by the float range (MAX_ABS_VALUE="
                    f"{b.MAX_ABS_VALUE:g}): no finite value lies beyond it")
    q, v = _state(b)
    v[0, 0] = huge
    cases = {"qvel": lambda: b.set_state(np.array([0]), q[:1], v[:1])}
    if Capability.BODY_FORCE in b.capabilities:
        cases["force"] = lambda: b.apply_body_force(np.array([b.base_body_id]), np.full((2, 1, 3), huge))
    before = _state(b)
    for name, call in cases.items():
        with pytest.raises(ValueError, match=name):
            call()
    after = _state(b)
    assert np.array_equal(after[0], before[0]) and np.array_equal(after[1], before[1]), "a rejected value was written"


def test_extreme_accepted_values_read_back_finite(kit):
    """A velocity at half the bound is accepted and read back finite and equal."""
    b = kit.make("free_body", 2)
    q, v = _state(b)
    v[0, 0] = 0.5 * b.MAX_ABS_VALUE
    b.set_state(np.array([0]), q[:1], v[:1])
    got = b.get_qvel()[0, 0]
    assert math.isfinite(got), f"an accepted qvel of {v[0, 0]:g} reads back as {got}"
    assert got == pytest.approx(v[0, 0], rel=1e-6)


@pytest.mark.requires("init_randomization")
def test_randomization_has_physical_bounds(kit):
    """A body mass of 1e300 kg is rejected (ValueError naming the term) and nothing is written."""
    from unisim_core.randomization import InitRandomizationPlan, RandomizationOp

    b = kit.make("free_body", 2)
    if "body_mass" not in b.get_dr_capabilities().init_terms:
        pytest.skip(f"backend {kit.label!r} does not randomize body_mass")
    body = b.base_body_id
    before = b.get_model_field("body_mass").copy()
    plan = InitRandomizationPlan([RandomizationOp(term="body_mass", values=np.full((2, 1), 1e300),
                                                  target_ids=np.array([body]))])
    with pytest.raises(ValueError, match="body_mass"):
        b.apply_init_randomization(plan)
    assert np.array_equal(b.get_model_field("body_mass"), before)


# ----------------------------------------------------------------------------- error types
def test_unknown_default_keyframe_is_refused_at_construction(kit):
    """A scene whose default keyframe does not exist is a UniSimError naming it, at construction."""
    with pytest.raises(UniSimError, match="no_such_key"):
        kit.make("free_body", 1, default_keyframe="no_such_key")


def test_malformed_model_file_is_a_unisim_error_naming_it(kit, tmp_path):
    """A model file that is not well-formed XML is a UniSimError naming the file, at construction."""
    from unisim_core import SceneCfg

    bad = tmp_path / "malformed_scene.xml"
    bad.write_text("<mujoco><worldbody><body>")
    with pytest.raises(UniSimError, match="malformed_scene.xml"):
        kit.make(SceneCfg(str(bad)), 1)


def test_unknown_base_name_is_refused_at_construction(kit):
    """The option base_name names a body: an unknown one is a UniSimError naming base_name."""
    with pytest.raises(UniSimError, match="base_name"):
        _with_options(kit, "free_body", 1, base_name="no_such_body")


def test_rejections_are_unisim_errors_and_leave_the_backend_usable(kit):
    """Bad input raises a UniSimError (whatever process the engine runs in); the next call works."""
    b = kit.make("free_body", 2)
    q, v = _state(b)
    bad_q = q[:1].copy()
    bad_q[0, 0] = np.nan
    for call in (lambda: b.step(np.zeros((3, b.num_actuators))),
                 lambda: b.set_state(np.array([0]), bad_q, v[:1]),
                 lambda: b.get_keyframe_qpos("no_such_key"),
                 lambda: b.get_body_ids(["no_such_body"])):
        with pytest.raises(UniSimError):
            call()
    b.step(np.zeros((2, b.num_actuators)), 2)
    assert np.isfinite(b.get_qpos()).all()
