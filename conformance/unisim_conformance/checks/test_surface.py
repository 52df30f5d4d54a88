"""Layer 1 - surface: the contract's methods exist with the reference signatures, model tables
are consistent, and every getter returns the documented shape and dtype (C-contiguous,
leading ``num_envs``, float dtype ``backend.np_dtype``)."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

from unisim_conformance import list_scenes
from unisim_conformance._props import COPY_PROPS
from unisim_conformance._support import Props
from unisim_core import Capability, SimBackend

pytestmark = [pytest.mark.surface, pytest.mark.contract("1.0")]

PUBLIC = sorted(n for n, v in vars(SimBackend).items() if not n.startswith("_")
                and (inspect.isfunction(v) or isinstance(v, property | classmethod | staticmethod)))


def test_method_signatures(kit):
    """Every public contract method exists with the reference parameter names and kinds."""
    b = kit.make("free_body", 1)
    problems = []
    for name in PUBLIC:
        ref = inspect.getattr_static(SimBackend, name)
        impl = inspect.getattr_static(type(b), name, None)
        if impl is None:
            problems.append(f"{name}: missing")
            continue
        if isinstance(ref, property):
            if not isinstance(impl, property):
                problems.append(f"{name}: expected a property, got {type(impl).__name__}")
            continue
        if not callable(getattr(b, name)):
            problems.append(f"{name}: not callable")
            continue
        want = [(p.name, p.kind) for p in inspect.signature(getattr(SimBackend, name)).parameters.values()]
        got = [(p.name, p.kind) for p in inspect.signature(getattr(type(b), name)).parameters.values()]
        if want != got:
            problems.append(f"{name}{inspect.signature(getattr(type(b), name))} != reference "
                            f"{name}{inspect.signature(getattr(SimBackend, name))}")
    assert not problems, f"backend {kit.label!r} deviates from the contract surface:\n" + "\n".join(problems)


GAINS = {"quadruped": ([60.0] * 12, [2.0] * 12), "actuated_hinges": ([0, 0, 8, 100, 0, 0], [0, 0, 0.4, 0, 0.1, 0])}


@pytest.mark.parametrize("gain", ["kp", "kd"])
@pytest.mark.parametrize("scene", list(GAINS))
def test_actuator_gains_values(kit, scene, gain):
    """get_actuator_gains() is (kp, kd) per actuator as written in the MJCF: position actuators
    (kp, kv), velocity actuators (0, kv), motors (0, 0). Exact up to float32 (1e-6 relative)."""
    names, kp, kd = kit.shared(f"surface.gains.{scene}", lambda k: (lambda b: (
        list(b.get_actuator_names()), *b.get_actuator_gains()))(k.make(scene, 1)))
    np.testing.assert_allclose(np.abs(kp if gain == "kp" else kd), GAINS[scene][gain == "kd"], rtol=1e-6,
                               err_msg=f"{gain} of actuators {names}")


def _model_tables(b) -> dict[str, list[str]]:
    """Problems per table group of one backend (empty lists when consistent)."""
    nu, nb, ng = b.num_actuators, b.num_bodies, len(b.get_geom_names())
    kp, kd = b.get_actuator_gains()
    checks = {
        "actuators": [(nu == len(b.get_actuator_names()), "num_actuators != len(get_actuator_names())"),
                      (b.get_actuator_ctrl_range().shape == (nu, 2), "get_actuator_ctrl_range() shape != (nu, 2)"),
                      (kp.shape == kd.shape == (nu,), "get_actuator_gains() shapes != (nu,)"),
                      (len(b.get_actuator_joint_names()) == nu, "len(get_actuator_joint_names()) != nu")],
        "dofs": [(b.get_dof_pos().shape == (b.num_envs, b.num_dof), "get_dof_pos() columns != num_dof"),
                 (b.get_dof_vel().shape == (b.num_envs, b.num_dof_vel), "get_dof_vel() columns != num_dof_vel"),
                 (b.get_joint_range().shape[1] == 2, "get_joint_range() must be (n, 2)")],
        "bodies": [(b.get_body_mass().shape == (nb,), "get_body_mass() shape != (num_bodies,)"),
                   (len(b.model_info.body_names) == nb, "len(model_info.body_names) != num_bodies"),
                   (float(b.get_body_mass()[0]) == 0.0, "body 0 (the world) must have mass 0")],
        "geoms": [(b.get_geom_friction().shape == (ng, 3), "get_geom_friction() must be (ngeom, 3)"),
                  (b.get_geom_solref().shape == (ng, 2), "get_geom_solref() must be (ngeom, 2)"),
                  (b.get_geom_solimp().shape == (ng, 5), "get_geom_solimp() must be (ngeom, 5)")],
        "defaults": [(b.get_default_qpos().shape == (b.nq,), "get_default_qpos() shape != (nq,)"),
                     (b.get_init_qvel().shape == (b.nv,), "get_init_qvel() shape != (nv,)"),
                     (b.get_default_dof_pos().shape == (b.num_dof,), "get_default_dof_pos() shape != (num_dof,)"),
                     (not np.any(b.get_init_qvel()), "get_init_qvel() must be zeros")],
        "gravity": [(np.allclose(b.get_gravity(), [0, 0, -9.81], rtol=1e-6, atol=0),
                     f"get_gravity() = {np.asarray(b.get_gravity()).tolist()}, expected [0, 0, -9.81] (1e-6 rel)")],
    }
    return {k: [msg for ok, msg in v if not ok] for k, v in checks.items()}


@pytest.mark.parametrize("table", ["actuators", "dofs", "bodies", "geoms", "defaults", "gravity"])
@pytest.mark.parametrize("scene", ["quadruped", "fixed_arm", "pendulum"])
def test_model_tables_consistent(kit, scene, table):
    """Counts agree with name lists and each group of model tables has its documented shape
    (actuators, dofs, bodies, geoms, defaults, gravity)."""
    problems = kit.shared(f"surface.tables.{scene}", lambda k: _model_tables(k.make(scene, 2)))[table]
    assert not problems, f"backend {kit.label!r} on {scene}, {table}:\n" + "\n".join(problems)


def _getter_cases(b):
    ids = np.arange(b.num_bodies, dtype=np.int32)
    rows = np.array([2, 0])
    n, nb = b.num_envs, len(ids)
    cases = {
        "get_qpos": (lambda: b.get_qpos(), (n, b.nq)),
        "get_qvel": (lambda: b.get_qvel(), (n, b.nv)),
        "get_base_pos": (lambda: b.get_base_pos(), (n, 3)),
        "get_base_quat": (lambda: b.get_base_quat(), (n, 4)),
        "get_base_lin_vel": (lambda: b.get_base_lin_vel(), (n, 3)),
        "get_base_ang_vel": (lambda: b.get_base_ang_vel(), (n, 3)),
        "get_dof_pos": (lambda: b.get_dof_pos(), (n, b.num_dof)),
        "get_dof_vel": (lambda: b.get_dof_vel(), (n, b.num_dof_vel)),
        "get_body_pos_w": (lambda: b.get_body_pos_w(ids), (n, nb, 3)),
        "get_body_quat_w": (lambda: b.get_body_quat_w(ids), (n, nb, 4)),
        "get_body_lin_vel_w": (lambda: b.get_body_lin_vel_w(ids), (n, nb, 3)),
        "get_body_ang_vel_w": (lambda: b.get_body_ang_vel_w(ids), (n, nb, 3)),
        "get_body_pos_b": (lambda: b.get_body_pos_b(ids), (n, nb, 3)),
        "get_body_quat_b": (lambda: b.get_body_quat_b(ids), (n, nb, 4)),
        "get_body_lin_vel_b": (lambda: b.get_body_lin_vel_b(ids), (n, nb, 3)),
        "get_body_ang_vel_b": (lambda: b.get_body_ang_vel_b(ids), (n, nb, 3)),
        "get_body_pose_w[0]": (lambda: b.get_body_pose_w(ids)[0], (n, nb, 3)),
        "get_body_pose_w[1]": (lambda: b.get_body_pose_w(ids)[1], (n, nb, 4)),
        "get_body_state_w[2]": (lambda: b.get_body_state_w(ids)[2], (n, nb, 3)),
        "get_body_pose_w_rows[1]": (lambda: b.get_body_pose_w_rows(rows, ids)[1], (2, nb, 4)),
        "get_body_lin_vel_w_rows": (lambda: b.get_body_lin_vel_w_rows(rows, ids), (2, nb, 3)),
        "get_body_ang_vel_w_rows": (lambda: b.get_body_ang_vel_w_rows(rows, ids), (2, nb, 3)),
        "get_actuator_ctrl_range": (lambda: b.get_actuator_ctrl_range(), (b.num_actuators, 2)),
        "get_body_mass": (lambda: b.get_body_mass(), (b.num_bodies,)),
    }
    if Capability.SENSORS in b.capabilities:
        for i, s in enumerate(b.model_info.sensor_names):
            dim = int(b.model_info.sensor_dims[i])
            cases[f"get_sensor_data({s})"] = (lambda s=s: b.get_sensor_data(s), (n, dim))
            cases[f"get_sensor_data_rows({s})"] = (lambda s=s: b.get_sensor_data_rows(s, rows), (2, dim))
        names = list(b.model_info.sensor_names)
        total = int(np.sum(b.model_info.sensor_dims))
        cases["get_sensor_data_batch"] = (lambda: b.get_sensor_data_batch(names), (n, total))
    return cases


#: State getters whose arrays must be fresh (the caller's): checked in every np_dtype the kit builds.
FRESH = ("get_qpos", "get_qvel", "get_base_pos", "get_base_quat", "get_base_lin_vel", "get_base_ang_vel",
         "get_dof_pos", "get_dof_vel", "get_body_pos_w", "get_body_quat_w", "get_body_lin_vel_w",
         "get_body_ang_vel_w", "get_sensor_data_batch")


def _getter_props(b) -> dict[str, Any]:
    """Per property (shape, dtype, contiguous, finite), the getters that break it; and per FRESH getter,
    whether an array returned before a step and a set_state kept its values and its own memory."""
    b.step(np.zeros((b.num_envs, b.num_actuators)), 2)
    cases = _getter_cases(b)
    want_dtype = np.dtype(b.np_dtype)
    props: dict[str, Any] = {"shape": [], "dtype": [], "contiguous": [], "finite": [], "np_dtype": str(want_dtype)}
    first = {}
    for name, (call, shape) in cases.items():
        arr = call()
        if not isinstance(arr, np.ndarray):
            props["shape"].append(f"{name}: returned {type(arr).__name__}, expected a numpy array")
            continue
        if name in FRESH:
            first[name] = (arr, arr.copy())
        if arr.shape != shape:
            props["shape"].append(f"{name}: shape {arr.shape}, expected {shape}")
        if arr.dtype != want_dtype:
            props["dtype"].append(f"{name}: dtype {arr.dtype}, expected np_dtype {want_dtype}")
        if not arr.flags.c_contiguous:
            props["contiguous"].append(f"{name}: not C-contiguous")
        if arr.dtype.kind == "f" and not np.isfinite(arr).all():
            props["finite"].append(f"{name}: non-finite values")
    qpos = np.asarray(b.get_qpos(), dtype=np.float64)
    qpos[:, 0] += 0.05
    b.set_state(np.arange(b.num_envs), qpos, np.asarray(b.get_qvel(), dtype=np.float64) + 0.1)
    b.step(np.zeros((b.num_envs, b.num_actuators)) + 0.1, 3)
    for name, (arr, copy) in first.items():
        call = cases[name][0]
        problems = []
        if not np.array_equal(arr, copy, equal_nan=True):
            problems.append("its values changed when the backend set_state and stepped (a view of live state)")
        if np.shares_memory(call(), call()):
            problems.append("two calls returned the same memory")
        props[f"fresh:{name}"] = problems
    return props


def _float64_backend(kit, scene, n):
    """``scene`` built with ``np_dtype=float64`` (skipped when the kit cannot pass options or the
    backend's default already is float64)."""
    if kit.dtype is np.float64:
        pytest.skip("the backend's default np_dtype is float64: the default instance covers it")
    return kit.make(scene, n, options={"np_dtype": "float64"})


INSTANCES = {"quadruped": lambda k: _getter_props(k.make("quadruped", 3)),
             "pendulum": lambda k: _getter_props(k.make("pendulum", 3)),
             "float64": lambda k: _getter_props(_float64_backend(k, "quadruped", 3))}


@pytest.mark.parametrize("prop", ["shape", "dtype", "contiguous", "finite"])
@pytest.mark.parametrize("scene", ["quadruped", "pendulum", pytest.param("float64", marks=pytest.mark.rules(3))])
def test_getter_shapes_dtypes(kit, scene, prop):
    """Each getter (state, bodies in both frames, rows, sensors, model tables): documented shape,
    dtype == np_dtype, C-contiguous, finite; one id per property. ``float64``: the quadruped built
    with ``np_dtype=float64`` (kit rules 3: a getter that passes the engine's float32 through is
    caught without ``--unisim-option np_dtype=float64``)."""
    props = kit.shared(f"surface.getters.{scene}", INSTANCES[scene])
    assert not props[prop], (f"backend {kit.label!r} on {scene} (np_dtype {props['np_dtype']}), {prop}:\n"
                             + "\n".join(props[prop]))


@pytest.mark.rules(3)
@pytest.mark.parametrize("getter", FRESH)
@pytest.mark.parametrize("scene", ["quadruped", "float64"])
def test_getters_return_fresh_arrays(kit, scene, getter):
    """An array a getter returned is the caller's: a later set_state and step leave its values
    alone, and two calls return different memory (primitives return fresh arrays; the base
    passes them through). ``float64``: the same on an instance built with ``np_dtype=float64``,
    where a view of a float64 engine buffer is no longer hidden by the cast to float32."""
    props = kit.shared(f"surface.getters.{scene}", INSTANCES[scene])
    key = f"fresh:{getter}"
    if key not in props:
        pytest.skip(f"{getter} is not read on this backend (needs capability 'sensors')")
    assert not props[key], f"backend {kit.label!r} (np_dtype {props['np_dtype']}): {getter}: " + "; ".join(props[key])


def _copies_run(kit):
    b = kit.make("quadruped", 2)
    changed = {}
    for getter in ("get_qpos", "get_base_pos", "get_dof_pos"):
        before = b.get_qpos().copy()
        arr = getattr(b, getter)()
        if arr.flags.writeable:
            arr[...] = 123.0
        changed[getter] = not np.array_equal(b.get_qpos(), before)
    return changed


@pytest.mark.parametrize("getter", ["get_qpos", "get_base_pos", "get_dof_pos"])
def test_getters_return_copies(kit, getter):
    """Writing into an array a getter returned does not change the backend state (get_qpos)."""
    assert not kit.shared("surface.copies", _copies_run)[getter], f"{getter} returned a view into live state"


def _copy_body_state_run(kit):
    b = kit.make("quadruped", 2)
    b.step(np.zeros((2, b.num_actuators)), 3)
    ids = np.arange(b.num_bodies, dtype=np.int32)
    k = len(ids)
    bufs = [np.empty((2, k, w), dtype=b.np_dtype) for w in (3, 4, 3, 3)]
    out = b.copy_body_state_w(ids, *bufs)
    ref = b.get_body_state_w(ids)
    p = Props()
    for i, name in enumerate(("pos", "quat", "lin_vel", "ang_vel")):
        with p(f"out_{name}"):
            np.testing.assert_array_equal(bufs[i], ref[i], err_msg=f"copy_body_state_w out_{name}")
        with p("returns_buffers"):
            assert out[i] is bufs[i] or np.shares_memory(out[i], bufs[i]), f"out_{name} not returned"
    return p


@pytest.mark.parametrize("prop", COPY_PROPS)
def test_copy_body_state_w_matches(kit, prop):
    """``copy_body_state_w`` fills each caller buffer with exactly ``get_body_state_w``'s part
    (out_pos, out_quat, out_lin_vel, out_ang_vel: bitwise) and returns the buffers it filled
    (returns_buffers)."""
    kit.shared("surface.copy_body_state", _copy_body_state_run).verdict(prop)


@pytest.mark.parametrize("scene", list_scenes())
def test_scene_loads_and_steps(kit, scene):
    """Every kit scene (and every scene a plugin contributes) loads, steps, and stays finite.
    Scenes with contacts or height fields need CONTACTS (skipped otherwise)."""
    if scene in ("box_on_plane", "hfield_terrain") and Capability.CONTACTS not in kit.caps:
        pytest.skip(f"backend {kit.label!r} does not declare capability 'contacts' (scene {scene!r} needs it)")
    b = kit.make(scene, 2)
    b.step(np.zeros((2, b.num_actuators)), 10)
    assert np.isfinite(b.get_qpos()).all() and np.isfinite(b.get_qvel()).all(), f"{scene}: non-finite state"
