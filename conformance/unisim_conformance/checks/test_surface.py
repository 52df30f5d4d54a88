"""Layer 1 - surface: the contract's methods exist with the reference signatures, model tables
are consistent, and every getter returns the documented shape and dtype (C-contiguous,
leading ``num_envs``, float dtype ``backend.np_dtype``)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from unisim_conformance import list_scenes
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


@pytest.mark.parametrize("scene, kp, kd", [
    ("quadruped", [60.0] * 12, [2.0] * 12),
    ("actuated_hinges", [0, 0, 8, 100, 0, 0], [0, 0, 0.4, 0, 0.1, 0]),
], ids=["quadruped", "actuated_hinges"])
def test_actuator_gains_values(kit, scene, kp, kd):
    """get_actuator_gains() is (kp, kd) per actuator as written in the MJCF: position actuators
    (kp, kv), velocity actuators (0, kv), motors (0, 0). Exact up to float32 (1e-6 relative)."""
    b = kit.make(scene, 1)
    got_kp, got_kd = b.get_actuator_gains()
    names = list(b.get_actuator_names())
    np.testing.assert_allclose(np.abs(got_kp), kp, rtol=1e-6, err_msg=f"kp of actuators {names}")
    np.testing.assert_allclose(np.abs(got_kd), kd, rtol=1e-6, err_msg=f"kd of actuators {names}")


@pytest.mark.parametrize("scene", ["quadruped", "fixed_arm", "pendulum"])
def test_model_tables_consistent(kit, scene):
    """Counts agree with name lists and every model table has its documented shape."""
    b = kit.make(scene, 2)
    nu, nb = b.num_actuators, b.num_bodies
    info = b.model_info
    assert nu == len(b.get_actuator_names()), "num_actuators != len(get_actuator_names())"
    assert b.get_actuator_ctrl_range().shape == (nu, 2), "get_actuator_ctrl_range() shape"
    kp, kd = b.get_actuator_gains()
    assert kp.shape == kd.shape == (nu,), "get_actuator_gains() shapes"
    assert b.get_dof_pos().shape == (2, b.num_dof), "get_dof_pos() columns != num_dof"
    assert b.get_dof_vel().shape == (2, b.num_dof_vel), "get_dof_vel() columns != num_dof_vel"
    assert b.get_joint_range().shape[1] == 2, "get_joint_range() must be (n, 2)"
    assert b.get_body_mass().shape == (nb,), "get_body_mass() shape"
    ng = len(b.get_geom_names())
    assert b.get_geom_friction().shape == (ng, 3) and b.get_geom_solref().shape == (ng, 2) \
        and b.get_geom_solimp().shape == (ng, 5), "geom tables must be (ngeom, 3|2|5)"
    assert b.get_default_qpos().shape == (b.nq,) and b.get_init_qvel().shape == (b.nv,)
    assert b.get_default_dof_pos().shape == (b.num_dof,)
    assert not np.any(b.get_init_qvel()), "get_init_qvel() must be zeros"
    np.testing.assert_allclose(b.get_gravity(), [0, 0, -9.81], rtol=1e-6, err_msg="get_gravity()")
    assert len(b.get_actuator_joint_names()) == nu
    assert len(info.body_names) == nb
    np.testing.assert_allclose(b.get_body_mass()[0], 0.0, err_msg="body 0 (world) has mass 0")


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


@pytest.mark.parametrize("scene", ["quadruped", "pendulum"])
def test_getter_shapes_dtypes(kit, scene):
    """Each getter: documented shape, dtype == np_dtype, C-contiguous, leading num_envs."""
    b = kit.make(scene, 3)
    b.step(np.zeros((3, b.num_actuators)), 2)
    problems = []
    for name, (call, shape) in _getter_cases(b).items():
        arr = call()
        if not isinstance(arr, np.ndarray):
            problems.append(f"{name}: returned {type(arr).__name__}, expected numpy array")
            continue
        if arr.shape != shape:
            problems.append(f"{name}: shape {arr.shape}, expected {shape}")
        if arr.dtype != np.dtype(b.np_dtype):
            problems.append(f"{name}: dtype {arr.dtype}, expected np_dtype {np.dtype(b.np_dtype)}")
        if not arr.flags.c_contiguous:
            problems.append(f"{name}: not C-contiguous")
        if arr.dtype.kind == "f" and not np.isfinite(arr).all():
            problems.append(f"{name}: non-finite values")
    assert not problems, f"backend {kit.label!r} on {scene}:\n" + "\n".join(problems)


def test_getters_return_copies(kit):
    """Mutating a returned array does not change the backend state."""
    b = kit.make("quadruped", 2)
    before = b.get_qpos().copy()
    for arr in (b.get_qpos(), b.get_base_pos(), b.get_dof_pos()):
        if arr.flags.writeable:
            arr[...] = 123.0
    np.testing.assert_array_equal(b.get_qpos(), before, err_msg="a getter returned a view into live state")


def test_copy_body_state_w_matches(kit):
    """``copy_body_state_w`` fills caller buffers with exactly ``get_body_state_w``."""
    b = kit.make("quadruped", 2)
    b.step(np.zeros((2, b.num_actuators)), 3)
    ids = np.arange(b.num_bodies, dtype=np.int32)
    k = len(ids)
    bufs = [np.empty((2, k, w), dtype=b.np_dtype) for w in (3, 4, 3, 3)]
    out = b.copy_body_state_w(ids, *bufs)
    ref = b.get_body_state_w(ids)
    for i, name in enumerate(("pos", "quat", "lin_vel", "ang_vel")):
        np.testing.assert_array_equal(bufs[i], ref[i], err_msg=f"copy_body_state_w out_{name}")
        assert out[i] is bufs[i] or np.shares_memory(out[i], bufs[i]), f"out_{name} not returned"


@pytest.mark.parametrize("scene", list_scenes())
def test_scene_loads_and_steps(kit, scene):
    """Every kit scene (and every scene a plugin contributes) loads, steps, and stays finite.
    Scenes with contacts or height fields need CONTACTS (skipped otherwise)."""
    if scene in ("box_on_plane", "hfield_terrain") and Capability.CONTACTS not in kit.caps:
        pytest.skip(f"backend {kit.label!r} does not declare capability 'contacts' (scene {scene!r} needs it)")
    b = kit.make(scene, 2)
    b.step(np.zeros((2, b.num_actuators)), 10)
    assert np.isfinite(b.get_qpos()).all() and np.isfinite(b.get_qvel()).all(), f"{scene}: non-finite state"
