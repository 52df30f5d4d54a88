"""Fail-closed edges of the core contract (issue #13), on the fake backend in-process:
lifecycle after close, the divergence policy, extreme finite input, construction checks,
interrupts during long steps and what a failing pre-step hook leaves behind."""

from __future__ import annotations

import os
import signal
import threading

import numpy as np
import pytest
from core_helpers import SCENES, make

from unisim_core import SceneCfg
from unisim_core.contract import quat as Q
from unisim_core.contract.backend import READABLE_AFTER_CLOSE
from unisim_core.contract.errors import (
    BackendClosedError,
    ConcurrentUseError,
    DivergenceError,
    EngineError,
    InvalidInputError,
    UnknownNameError,
    with_context,
)
from unisim_core.contract.randomization import InitRandomizationPlan, RandomizationOp
from unisim_core.plugin.fake import FakeBackend


# ----------------------------------------------------------------------------- lifecycle
def test_every_public_member_raises_after_close_except_the_model_description(quad):
    """Before #13 getters returned stale data, apply_body_force was accepted and some calls
    raised AttributeError. Now each public member outside READABLE_AFTER_CLOSE raises
    BackendClosedError, whatever its arguments."""
    nq, view = quad.nq, quad.bind_sensor_data(["imu_acc"])
    quad.close()
    members = [n for n in dir(quad) if not n.startswith("_") and not n.isupper() and n not in READABLE_AFTER_CLOSE]
    assert {"get_qpos", "step", "apply_body_force", "set_physics_state", "get_diverged_envs"} <= set(members)
    for name in members:
        with pytest.raises(BackendClosedError, match=f"backend 'fake' is closed: {name} "):
            getattr(quad, name)()  # properties raise on access, methods on any call
    with pytest.raises(BackendClosedError):
        view.read()
    assert (quad.nq, quad.num_envs, quad.closed, type(quad).__name__) == (nq, 3, True, "FakeBackend")
    assert isinstance(quad, FakeBackend)
    quad.close()  # idempotent


# ----------------------------------------------------------------------------- divergence
def _blow_up(b, env: int) -> None:
    """Root speed at the bound: the position leaves float32's range within 1.5 s."""
    q, v = b.get_qpos().astype(np.float64), b.get_qvel().astype(np.float64)
    v[env, 0] = b.MAX_ABS_VALUE
    b.set_state(np.array([env]), q[[env]], v[[env]])


def test_divergence_raises_every_time_naming_the_envs_and_resets_them_to_the_keyframe():
    """Before #13 the fake returned inf/NaN with no error. Default policy "raise": each time."""
    b = FakeBackend(SceneCfg(SCENES["quadruped"], default_keyframe="home"), 3, 0.005)  # float32 getters
    home = b.get_keyframe_qpos("home")
    ctrl = np.zeros((3, b.num_actuators))
    for count in (1, 2, 3):
        _blow_up(b, 2)
        with pytest.raises(DivergenceError, match=r"env\(s\) \[2\]") as info:
            b.step(ctrl, 400)
        assert isinstance(info.value, EngineError) and info.value.env_ids == (2,)
        assert b.get_diverged_envs().tolist() == [False, False, True]
        assert b.get_divergence_counts().tolist() == [0, 0, count]
        np.testing.assert_array_equal(b.get_qpos()[2], home)
        np.testing.assert_array_equal(b.get_qvel()[2], 0.0)
        assert np.isfinite(b.get_qpos()).all()
    b.step(ctrl, 2)
    assert not b.get_diverged_envs().any()


def test_divergence_reset_policy_reports_through_mask_and_counter():
    b = FakeBackend(SceneCfg(SCENES["free_body"]), 3, 0.002, divergence="reset")
    _blow_up(b, 0)
    b.step(np.zeros((3, 0)), 800)
    assert b.get_diverged_envs().tolist() == [True, False, False]
    assert b.get_divergence_counts().tolist() == [1, 0, 0]
    np.testing.assert_array_equal(b.get_qpos()[0], b.get_default_qpos())
    with pytest.raises(InvalidInputError, match=r"divergence: expected one of \['raise', 'reset'\], got 'ignore'"):
        FakeBackend(SceneCfg(SCENES["free_body"]), 1, 0.002, divergence="ignore")


# ----------------------------------------------------------------------------- extreme finite input
def test_quat_normalize_cannot_overflow_or_underflow():
    """Before #13 [1e300, 0, 0, 0] normalized to zeros (the norm overflowed)."""
    q = np.array([[1e300, 0.0, 0.0, 0.0], [1e-300, 1e-300, 0.0, 0.0], [1.7e308, 1.7e308, 0.0, 0.0]])
    np.testing.assert_allclose(Q.quat_normalize(q), [[1, 0, 0, 0], [0.5**0.5, 0.5**0.5, 0, 0],
                                                     [0.5**0.5, 0.5**0.5, 0, 0]])
    with pytest.raises(ValueError, match="zero-norm"):
        Q.quat_normalize(np.zeros(4))


def test_set_state_normalizes_a_huge_root_quaternion():
    b = make("free_body", 2)
    q, v = b.get_qpos(), b.get_qvel()
    q[0, 3:7] = [1e300, 0.0, 0.0, 1e300]
    b.set_state(np.array([0]), q[:1], v[:1])
    np.testing.assert_allclose(b.get_base_quat()[0], [0.5**0.5, 0, 0, 0.5**0.5])


def test_values_beyond_the_float32_range_are_rejected_before_writing():
    """A float32 backend cannot return 1e39 finite: it is out of bounds (MAX_ABS_VALUE)."""
    b = make("quadruped", 2, np_dtype=np.float32)
    assert b.MAX_ABS_VALUE == float(np.finfo(np.float32).max)
    q0, v0 = b.get_qpos(), b.get_qvel()
    qvel = v0[:1].astype(np.float64)
    qvel[0, 7] = 1e39
    ctrl = np.zeros((2, b.num_actuators))
    ctrl[1, 3] = -1e39
    for call, name in ((lambda: b.set_state(np.array([0]), q0[:1], qvel), "qvel"), (lambda: b.step(ctrl), "ctrl"),
                       (lambda: b.apply_body_force(np.array([1]), np.full((2, 1, 3), 1e39)), "force")):
        with pytest.raises(InvalidInputError, match=rf"{name}: expected values with \|x\| <= 3.40282e\+38"):
            call()
    assert np.array_equal(b.get_qpos(), q0) and np.array_equal(b.get_qvel(), v0)


def test_set_physics_state_checks_quaternions_and_bounds():
    """Before #13 set_physics_state wrote zero or non-unit quaternions unchecked."""
    b = make("quadruped", 2, np_dtype=np.float32)
    snap = b.get_physics_state()
    for col, value, match in ((4, 2.0, r"unit quaternions in columns 4:8 .*got norm 2 in row 1"),
                              (20, 1e39, r"state: expected values with \|x\| <= 3.40282e\+38")):
        bad = snap.copy()
        bad[1, col] = value
        with pytest.raises(InvalidInputError, match=match):
            b.set_physics_state(bad)
    np.testing.assert_array_equal(b.get_physics_state(), snap)


@pytest.mark.parametrize(("term", "values", "targets"), [
    ("body_mass", np.full((3, 1), 1e300), [1]),
    ("gravity", np.full((3, 3), 1e300), None),
    ("dof_damping", np.full((3, 1), 1e7), [0]),
])
def test_randomization_terms_have_physical_bounds(quad, term, values, targets):
    """Before #13 masses, frictions and gravity of 1e300 were accepted."""
    before = quad.get_model_field(term)
    plan = InitRandomizationPlan([RandomizationOp(term=term, values=values, target_ids=targets)])
    with pytest.raises(InvalidInputError, match=rf"{term}: resulting values: expected values with \|x\| <= "):
        quad.apply_init_randomization(plan)
    np.testing.assert_array_equal(quad.get_model_field(term), before)


# ----------------------------------------------------------------------------- construction
@pytest.mark.parametrize(("scene", "options", "match"), [
    (SceneCfg(SCENES["free_body"], default_keyframe="nope"), {}, "scene.default_keyframe: unknown keyframe 'nope'"),
    (SceneCfg(SCENES["free_body"]), {"base_name": "nope"}, "base_name: unknown body 'nope'"),
    (SceneCfg(SCENES["free_body"]), {"push_body_name": "nope"}, "push_body_name: unknown body 'nope'"),
])
def test_names_are_checked_at_construction(scene, options, match):
    """Before #13 an unknown default_keyframe was accepted by the fake (and motrix)."""
    with pytest.raises(UnknownNameError, match=match):
        FakeBackend(scene, 1, 0.002, **options)


def test_with_context_keeps_class_and_attributes():
    err = DivergenceError("diverged", (4,))
    out = with_context(err, "in shard 1, envs [4:8)")
    assert type(out) is DivergenceError and out.env_ids == (4,) and out.__cause__ is err
    assert str(out) == "in shard 1, envs [4:8): diverged"


# ----------------------------------------------------------------------------- interrupts and hooks
def test_ctrl_c_lands_during_a_long_step_and_leaves_whole_substeps():
    """Before #13 Ctrl-C landed only when the whole call ended. A real SIGINT from a timer
    interrupts a call of 10^8 substeps (hours on the fake); the time is a whole number of
    substeps and the backend steps on."""
    b = make("free_body", 2)
    nsteps = 10**8
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt, match="step interrupted after"):
            b.step(np.zeros((2, 0)), nsteps)
    finally:
        timer.cancel()
    t = b.get_physics_state()[:, 0]
    done = t / b.sim_dt
    assert 0 < done[0] < nsteps and np.allclose(done, np.round(done[0]), rtol=0, atol=1e-6)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    b.step(np.zeros((2, 0)), 3)
    np.testing.assert_allclose(b.get_physics_state()[:, 0], t + 3 * b.sim_dt)


def test_pre_step_output_rejected_on_substep_k_says_what_ran(quad):
    calls = []

    def hook(backend, ctrl):
        calls.append(1)
        return ctrl if len(calls) < 3 else ctrl[:, :2]

    quad.set_pre_step_control(hook)
    t0 = quad.get_physics_state()[0, 0]
    with pytest.raises(InvalidInputError, match=r"pre-step control output: .*\(on substep 3 of 5; the 2 substep"):
        quad.step(np.zeros((3, quad.num_actuators)), 5)
    assert quad.get_physics_state()[0, 0] == pytest.approx(t0 + 2 * quad.sim_dt)


# ----------------------------------------------------------------------------- round three (#28)
def test_numpy_scalar_time_step_and_config_numbers_are_accepted():
    """Before #28 sim_dt=np.float32(0.005) was "not a positive finite time step"."""
    b = make("free_body", 1, sim_dt=np.float32(0.005))
    assert b.sim_dt == pytest.approx(0.005)
    from unisim_core.contract.config import CameraCfg, TerrainCfg

    assert TerrainCfg(hfield_geom="h", spacing=np.float32(2.0)).spacing == 2.0
    assert CameraCfg(distance=np.float64(4.0), azimuth=np.int64(90)).azimuth == 90


@pytest.mark.parametrize("value", [123, b"scene.xml", 1.5])
def test_scene_cfg_names_model_file_for_a_non_path(value):
    """Before #28 the error said "expected a path" without naming the field."""
    with pytest.raises(TypeError, match=r"SceneCfg\.model_file: expected a path"):
        SceneCfg(value)


def test_relative_model_path_survives_chdir(tmp_path, monkeypatch):
    """Before #28 SceneCfg kept a relative path: after os.chdir the fake raised FileNotFoundError."""
    monkeypatch.chdir(SCENES["free_body"].parent)
    scene = SceneCfg("free_body.xml")
    assert scene.model_file == str(SCENES["free_body"])
    monkeypatch.chdir(tmp_path)
    b = FakeBackend(scene, 1, 0.002)
    b.step(np.zeros((1, 0)))


class _RaisesInInit(FakeBackend):
    """The fake whose engine raises ``RAISE`` once its model is loaded (as an engine would)."""

    RAISE: BaseException = ValueError("could not convert string to float: 'nan'")

    def __init__(self, scene, num_envs, sim_dt, **options):
        super().__init__(scene, num_envs, sim_dt, **options)
        raise self.RAISE


@pytest.mark.parametrize(("exc", "cls", "match"), [
    (ValueError("could not convert string to float: 'nan'"), InvalidInputError, r"could not load '.*free_body\.xml'"),
    (UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"), InvalidInputError,
     r"free_body\.xml' is not UTF"),
    (MemoryError("std::bad_alloc"), InvalidInputError, "num_envs: backend 'fake' could not allocate 2 envs"),
    (RuntimeError("Caught an unknown exception!"), EngineError, r"failed to build '.*free_body\.xml' with 2 envs"),
])
def test_engine_errors_while_loading_name_the_file_or_num_envs(monkeypatch, exc, cls, match):
    """Before #28 they reached the user raw (UnicodeDecodeError, ValueError: std::bad_alloc,
    RuntimeError: Caught an unknown exception!). Now a UniSim error, chained to the original."""
    monkeypatch.setattr(_RaisesInInit, "RAISE", exc)
    with pytest.raises(cls, match=match) as info:
        _RaisesInInit(SceneCfg(SCENES["free_body"]), 2, 0.002)
    assert info.value.__cause__ is exc


def test_num_envs_beyond_memory_names_the_estimate_and_what_is_available(monkeypatch):
    """Before #28 numpy's MemoryError / "Maximum allowed dimension exceeded". 10^9 quadruped envs
    on a machine with 10 GiB left: the fake's estimate (about 5.7 KiB per env) is refused."""
    from unisim_core.contract import construction

    monkeypatch.setattr(construction, "available_memory", lambda: (10 * 2**30, "a test's figure"))
    with pytest.raises(InvalidInputError, match=r"num_envs: 1000000000 envs of backend 'fake' need about 5\.\d+ TiB "
                                                r"\(5\.\d+ KiB per env: float64 state.*more than the 10 GiB available "
                                                r"\(a test's figure\)"):
        make("quadruped", 10**9)


def test_guarded_methods_keep_their_signatures_and_work_from_hooks(quad):
    """The call guard wraps public methods with their own signatures (no *args packing), and a
    hook may call the backend's public methods during the step (same thread)."""
    import inspect

    assert str(inspect.signature(FakeBackend.set_state)) == str(inspect.signature(FakeBackend.set_state.__wrapped__))
    seen = []
    quad.set_pre_step_control(lambda b, ctrl: (seen.append(b.get_base_pos()[0, 2]), ctrl)[1])
    quad.step(np.zeros((3, quad.num_actuators)), 3)
    assert len(seen) == 3


def test_a_public_method_defined_as_a_lambda_is_guarded_like_a_def():
    """Before #39 the guard's generated wrapper was named after the function, and a lambda's
    ``<lambda>`` made class creation fail with a raw SyntaxError. Now any Python function works,
    keeps its name, and is refused from another thread like every public method."""

    class Lambda(FakeBackend):
        get_gravity = lambda self: np.array([0.0, 0.0, -1.0])  # noqa: E731

    b = Lambda(SceneCfg(SCENES["quadruped"]), 1, 0.01)
    np.testing.assert_array_equal(b.get_gravity(), [0.0, 0.0, -1.0])
    assert Lambda.get_gravity.__name__ == "<lambda>" and Lambda.get_gravity.__unisim_guarded__
    got = []
    b._slot.pop()  # as if another thread's call were in flight
    b._owner = -1
    t = threading.Thread(target=lambda: got.append(pytest.raises(ConcurrentUseError, b.get_gravity).value))
    t.start()
    t.join()
    b._owner = None
    b._slot.append(True)
    assert "get_gravity called from thread" in str(got[0]), got


def test_fake_backend_is_public_at_the_top_level():
    """DESIGN names ``unisim_core.FakeBackend`` public; before #39 only ``unisim_core.plugin.fake`` had it."""
    import unisim_core

    assert unisim_core.FakeBackend is FakeBackend and "FakeBackend" in unisim_core.__all__


def test_a_program_sigint_handler_is_held_too_and_called_at_the_end(quad):
    """Before #28 only Python's default SIGINT handler was held during a long step; the program's
    own ran mid-step. Now it runs when the step has run all its substeps (only the default handler,
    which raises KeyboardInterrupt, stops a step early)."""
    got = []
    previous = signal.signal(signal.SIGINT, lambda s, f: got.append(quad.get_physics_state()[0, 0]))
    try:
        quad.set_pre_step_control(lambda b, ctrl: (os.kill(os.getpid(), signal.SIGINT) if not got else None, ctrl)[1])
        quad.step(np.zeros((3, quad.num_actuators)), 4)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert len(got) == 1 and got[0] == pytest.approx(4 * quad.sim_dt), got


def test_a_term_the_engine_cannot_randomize_is_refused_by_name_with_its_reason(quad):
    """``REFUSED_TERMS`` (the engine's reason per term, one class attribute; SAPIEN, Genesis and the Isaac
    Sim worker use it): an op naming one raises UnsupportedCapabilityError naming the term and the reason,
    before any op of the plan is written."""
    from unisim_core import UnsupportedCapabilityError

    class NoMass(FakeBackend):
        REFUSED_TERMS = {"body_mass": "this engine bakes masses into its solver at build time"}

    b = NoMass(SceneCfg(SCENES["quadruped"]), 2, 0.01)
    before = b.get_model_field("dof_damping")
    plan = InitRandomizationPlan([RandomizationOp(term="dof_damping", target_ids=[6], values=[[1.0], [2.0]]),
                                  RandomizationOp(term="body_mass", target_ids=[1], values=[[1.0], [2.0]])])
    with pytest.raises(UnsupportedCapabilityError, match="'body_mass': init randomization: this engine bakes"):
        b.apply_init_randomization(plan)
    np.testing.assert_array_equal(b.get_model_field("dof_damping"), before)
