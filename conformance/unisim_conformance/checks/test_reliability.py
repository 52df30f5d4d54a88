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
- One thread at a time: a call from another thread during a step raises ``ConcurrentUseError``;
  ``close()`` from another thread waits for the step, from a hook it is deferred to its end.
- Fork: a backend used in a forked child raises ``ForkedBackendError`` naming the remedy; the
  parent is untouched. ``copy.copy`` is refused; pickling is refused or faithful.
- Inputs at the boundary: masked arrays, ``np.matrix`` and ragged lists are seen through;
  staged forces are copied; ``model_info`` is read-only.
- Resources and files: ``num_envs`` beyond memory, and malformed files (non-UTF-8, bad
  ``ctrlrange``, ``contype="nan"``, a huge hfield) are UniSim errors naming ``num_envs`` / the file.
"""

from __future__ import annotations

import math
import os
import threading
import time

import numpy as np
import pytest

from unisim_core import Capability
from unisim_core.contract.errors import BackendClosedError, DivergenceError, EngineError, UniSimError

pytestmark = [pytest.mark.reliability, pytest.mark.contract("1.0")]
#: The checks of #28 (threads, fork, array-likes, boundaries, pickling, memory, malformed files)
#: came with kit rules 3; the layer's others with rules 2 (``_rules.LAYER_RULES``).
RULES3 = pytest.mark.rules(3)

N = 3
#: The env driven to divergence.
BAD = 1


def _state(b) -> tuple[np.ndarray, np.ndarray]:
    return b.get_qpos().astype(np.float64), b.get_qvel().astype(np.float64)


def _with_options(kit, scene: str, num_envs: int, **options):
    """A backend built with the kit's options plus ``options`` (``--unisim-backend`` mode only)."""
    return kit.make(scene, num_envs, options=options)


def _not_refused(calls: dict, error: type[Exception]) -> list[str]:
    """What each call did that was not raising ``error`` (the findings)."""
    answered = []
    for name, call in calls.items():
        try:
            call()
        except error:
            continue
        except Exception as exc:  # noqa: BLE001 - any other outcome is the finding
            answered.append(f"{name} raised {type(exc).__name__}: {exc}")
            continue
        answered.append(f"{name} returned")
    return answered


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
    answered = _not_refused(calls, BackendClosedError)
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
    from unisim_core.contract.randomization import InitRandomizationPlan, RandomizationOp

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


# ----------------------------------------------------------------------------- one thread at a time
def _hooked(b, hook_body):
    """A hook that runs ``hook_body(substep)`` on every substep and counts them."""
    calls = []

    def hook(backend, ctrl):
        calls.append(len(calls))
        hook_body(len(calls))
        return ctrl

    b.set_pre_step_control(hook)
    return calls


def _step_in_thread(b, nsteps: int):
    out: dict = {}

    def run():
        try:
            b.step(np.zeros((b.num_envs, b.num_actuators)), nsteps)
            out["ok"] = True
        except BaseException as exc:  # noqa: BLE001 - reported by the check
            out["error"] = exc

    t = threading.Thread(target=run, name="kit-stepper", daemon=True)
    t.start()
    return t, out


@RULES3
@pytest.mark.requires("pre_step_control")
def test_concurrent_call_from_another_thread_is_refused(kit):
    """While a step runs on one thread (held inside its pre-step hook), calls from another thread
    raise ConcurrentUseError (a UniSimError) and change nothing; the step then ends normally."""
    from unisim_core.contract.errors import ConcurrentUseError

    b = kit.make("free_body", 2)
    q, v = _state(b)
    inside, release = threading.Event(), threading.Event()
    _hooked(b, lambda k: (inside.set(), release.wait(10)) if k == 1 else None)
    t, out = _step_in_thread(b, 2)
    try:
        assert inside.wait(10), "the step never reached its pre-step hook"
        calls = {"get_qpos": b.get_qpos, "get_base_pos": b.get_base_pos,
                 "step": lambda: b.step(np.zeros((2, b.num_actuators))),
                 "set_state": lambda: b.set_state(np.array([0]), q[:1] + 1.0, v[:1])}
        answered = _not_refused(calls, ConcurrentUseError)
    finally:
        release.set()
        t.join(10)
    assert not answered, f"concurrent calls not refused with ConcurrentUseError: {answered}"
    assert out.get("ok"), f"the step in the other thread failed: {out.get('error')!r}"
    b.set_pre_step_control(None)
    assert np.isfinite(b.get_qpos()).all()


@RULES3
@pytest.mark.requires("pre_step_control")
def test_close_from_another_thread_waits_for_the_step(kit):
    """close() from another thread during a step returns only once the step ended; the step ends
    normally; then the backend is closed."""
    b = kit.make("free_body", 2)
    inside, release = threading.Event(), threading.Event()
    _hooked(b, lambda k: (inside.set(), release.wait(10)) if k == 1 else None)
    t, out = _step_in_thread(b, 3)
    closer = threading.Thread(target=b.close, name="kit-closer", daemon=True)
    try:
        assert inside.wait(10), "the step never reached its pre-step hook"
        closer.start()
        closer.join(0.3)
        early = not closer.is_alive()
    finally:
        release.set()
        t.join(10)
        closer.join(10)
    assert not early, "close() from another thread returned while the step was still running"
    assert out.get("ok"), f"the step failed when close() was called from another thread: {out.get('error')!r}"
    assert b.closed
    with pytest.raises(BackendClosedError):
        b.get_qpos()


@RULES3
@pytest.mark.requires("pre_step_control")
def test_close_from_a_hook_is_deferred_to_the_end_of_the_step(kit):
    """close() from the pre-step hook on substep 2 of 5: the step stops after that substep and
    returns; then the backend is closed."""
    b = kit.make("free_body", 2)
    calls = _hooked(b, lambda k: b.close() if k == 2 else None)
    b.step(np.zeros((2, b.num_actuators)), 5)
    assert b.closed, "close() from the hook did not close the backend at the end of the step"
    assert len(calls) == 2, f"the hook ran {len(calls)} times: a step must stop after the substep whose hook closed it"
    with pytest.raises(BackendClosedError):
        b.get_qpos()


# ----------------------------------------------------------------------------- fork
@RULES3
@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_forked_child_is_refused_and_the_parent_untouched(kit):
    """In a child forked after construction, a step raises ForkedBackendError naming the remedy
    ('spawn'), the child exits promptly, and the parent's state and backend are untouched."""
    b = kit.make("free_body", 2)
    ctrl = np.zeros((2, b.num_actuators))
    b.step(ctrl)
    before = _state(b)
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, then leave without running any cleanup
        try:
            try:
                b.step(ctrl)
                msg = "stepped"
            except Exception as exc:  # noqa: BLE001
                msg = f"{type(exc).__name__}|{isinstance(exc, UniSimError)}|{exc}"
            os.write(wfd, msg.encode()[:4000])
        finally:
            os._exit(0)
    os.close(wfd)
    try:
        deadline = time.monotonic() + 20
        while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        if done[0] == 0:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung on the backend for 20 s")
        msg = os.read(rfd, 4096).decode()
    finally:
        os.close(rfd)
    name, _, rest = msg.partition("|")
    unisim, _, text = rest.partition("|")
    assert name == "ForkedBackendError" and unisim == "True", f"in the forked child, step gave: {msg}"
    assert "spawn" in text, f"the error does not name the remedy: {text}"
    after = _state(b)
    assert np.array_equal(after[0], before[0]) and np.array_equal(after[1], before[1]), "the child changed the parent"
    b.step(ctrl)
    assert np.isfinite(b.get_qpos()).all()


# ----------------------------------------------------------------------------- inputs at the boundary
@RULES3
def test_numpy_subclasses_and_array_likes_are_seen_through(kit):
    """A masked array hides NaN behind its mask: refused naming the argument (nothing written);
    np.matrix is read as the array it holds; a ragged nested list is an InvalidInputError naming it."""
    from unisim_core.contract.errors import InvalidInputError

    b = kit.make("actuated_hinges", 2)
    q, v = _state(b)
    nu = b.num_actuators
    masked_ctrl = np.ma.masked_invalid(np.where(np.eye(2, nu, dtype=bool), np.nan, 0.0))
    bad_q = np.ma.masked_invalid(np.where(np.arange(b.nq) == 0, np.nan, q[:1]))
    for arg, call in (("ctrl", lambda: b.step(masked_ctrl)),
                      ("qpos", lambda: b.set_state(np.array([0]), bad_q, v[:1])),
                      ("ctrl", lambda: b.step([[0.0] * nu, [0.0] * (nu - 1)]))):
        with pytest.raises(InvalidInputError, match=arg):
            call()
    after = _state(b)
    assert np.array_equal(after[0], q) and np.array_equal(after[1], v), "a refused input changed the state"
    b.step(np.matrix(np.full((2, nu), 0.5)))  # a matrix of the right shape is a valid ctrl
    twin = kit.make("actuated_hinges", 2)
    twin.step(np.full((2, nu), 0.5))
    np.testing.assert_array_equal(b.get_qpos(), twin.get_qpos(), err_msg="np.matrix ctrl stepped differently")


@RULES3
@pytest.mark.requires("body_force")
def test_staged_force_is_copied_at_the_boundary(kit):
    """apply_body_force keeps no reference to the caller's array: changing it before the step
    changes nothing (two twins, the same force, one array overwritten after the call)."""
    a, b = kit.make("free_body", 2), kit.make("free_body", 2)
    ids = np.array([a.base_body_id])
    force = np.tile([3.0, -2.0, 5.0], (2, 1, 1))
    a.apply_body_force(ids, force)
    force[...] = 1e4  # the caller reuses its buffer
    b.apply_body_force(ids, np.tile([3.0, -2.0, 5.0], (2, 1, 1)))
    ctrl = np.zeros((2, a.num_actuators))
    a.step(ctrl, 5)
    b.step(ctrl, 5)
    np.testing.assert_array_equal(a.get_qpos(), b.get_qpos(), err_msg="the staged force followed the caller's array")


@RULES3
def test_model_info_arrays_are_read_only(kit):
    """model_info's arrays (qpos0, gravity, keyframes, tables) refuse writes, also after
    setflags(write=True); get_default_qpos and get_gravity are unchanged."""
    b = kit.make("quadruped", 1)
    info = b.model_info
    default, gravity = b.get_default_qpos().copy(), b.get_gravity().copy()
    arrays = {"qpos0": info.qpos0, "gravity": info.gravity, "body_mass": info.body_mass,
              **{f"keyframes[{k!r}]": q for k, q in info.keyframes.items()}}
    writable = []
    for name, arr in arrays.items():
        try:
            arr.setflags(write=True)
        except ValueError:
            pass
        try:
            arr.reshape(-1)[0] = 123.0
        except ValueError:
            continue
        writable.append(name)
    assert not writable, f"model_info arrays that accepted a write: {writable}"
    np.testing.assert_array_equal(b.get_default_qpos(), default)
    np.testing.assert_array_equal(b.get_gravity(), gravity)


@RULES3
def test_pickling_and_copying_fail_closed(kit):
    """copy.copy (a second owner of one engine) raises a UniSimError; pickling either raises a
    UniSimError or gives a backend that steps like the original."""
    import copy
    import pickle

    b = kit.make("free_body", 2)
    with pytest.raises(UniSimError):
        copy.copy(b)
    try:
        clone = pickle.loads(pickle.dumps(b))
    except UniSimError:
        return
    ctrl = np.zeros((2, b.num_actuators))
    b.step(ctrl, 3)
    clone.step(ctrl, 3)
    np.testing.assert_array_equal(clone.get_qpos(), b.get_qpos())
    clone.close()


# ----------------------------------------------------------------------------- resources and files
@RULES3
@pytest.mark.parametrize("num_envs", [10**12, 10**30], ids=["1e12", "1e30"])
def test_num_envs_beyond_memory_is_refused_naming_num_envs(kit, num_envs):
    """num_envs that cannot fit in memory: a UniSimError naming num_envs, before the engine allocates."""
    with pytest.raises(UniSimError, match="num_envs"):
        kit.make("free_body", num_envs)


_MALFORMED = {
    "non_utf8": b'<mujoco>\n<worldbody><body name="b\xff\xfe"><freejoint/>'
                b'<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/></body></worldbody></mujoco>',
    "ctrlrange": b'<mujoco><worldbody><body name="b"><joint name="j" type="hinge"/><inertial pos="0 0 0" mass="1" '
                 b'diaginertia="1 1 1"/></body></worldbody><actuator><motor joint="j" ctrllimited="true" '
                 b'ctrlrange="-1"/></actuator></mujoco>',
    "contype_nan": b'<mujoco><worldbody><geom type="plane" size="1 1 1" contype="nan"/><body name="b" pos="0 0 1">'
                   b'<freejoint/><geom type="sphere" size="0.1" mass="1"/></body></worldbody></mujoco>',
    "huge_hfield": b'<mujoco><asset><hfield name="h" nrow="1000000" ncol="1000000" size="1 1 1 1"/></asset>'
                   b'<worldbody><geom type="hfield" hfield="h"/><body name="b" pos="0 0 1"><freejoint/>'
                   b'<geom type="sphere" size="0.1" mass="1"/></body></worldbody></mujoco>',
}


@RULES3
@pytest.mark.parametrize("case", sorted(_MALFORMED))
def test_malformed_model_files_are_unisim_errors_naming_the_file(kit, tmp_path, case):
    """Non-UTF-8 bytes, a one-number ctrlrange, contype="nan", a 10^6 x 10^6 hfield (4 TB): a
    UniSimError naming the file (a refusal by feature counts: it names the file too)."""
    from unisim_core import SceneCfg

    path = tmp_path / f"malformed_{case}.xml"
    path.write_bytes(_MALFORMED[case])
    try:
        b = kit._factory(SceneCfg(str(path)), 1, 0.002)  # not kit.make: a refusal by feature is an answer here
    except UniSimError as exc:
        assert path.name in str(exc), f"the error does not name the file: {exc}"
        return
    b.close()
    pytest.fail(f"backend {kit.label!r} loaded the malformed file ({case}) without an error")
