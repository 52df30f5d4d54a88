"""Layer 7 - bad input: wrong shapes, dtypes, NaN/inf, out-of-range or duplicate env ids and
unknown names are rejected with a ValueError/TypeError/KeyError subclass whose message names
the argument; the state is bitwise unchanged after each rejected call."""

from __future__ import annotations

import numpy as np
import pytest

from unisim_conformance._props import BAD_INPUT_CASES, bad_input_props
from unisim_conformance._support import Props, home_ctrl, varied_quadruped_state
from unisim_core import Capability

pytestmark = [pytest.mark.bad_input, pytest.mark.contract("1.0")]

N = 3


def _cases(b):
    nu, nv = b.num_actuators, b.nv
    q, v = b.get_qpos()[:1].astype(np.float64), b.get_qvel()[:1].astype(np.float64)
    ctrl = home_ctrl(b)
    nan_ctrl = ctrl.copy()
    nan_ctrl[1, 2] = np.nan
    inf_ctrl = ctrl.copy()
    inf_ctrl[0, 0] = np.inf
    nan_q = q.copy()
    nan_q[0, 9] = np.nan
    inf_v = v.copy()
    inf_v[0, 3] = -np.inf
    zero_quat = q.copy()
    zero_quat[0, 3:7] = 0
    ids = np.array([b.base_body_id])
    cases = {
        "step_ctrl_shape": (lambda: b.step(np.zeros((N, nu + 1))), ValueError, "ctrl"),
        "step_ctrl_envs": (lambda: b.step(np.zeros((N - 1, nu))), ValueError, "ctrl"),
        "step_ctrl_nan": (lambda: b.step(nan_ctrl), ValueError, "ctrl"),
        "step_ctrl_inf": (lambda: b.step(inf_ctrl), ValueError, "ctrl"),
        "step_ctrl_bool_dtype": (lambda: b.step(np.zeros((N, nu), dtype=bool)), TypeError, "ctrl"),
        "step_ctrl_object_dtype": (lambda: b.step(np.full((N, nu), None)), TypeError, "ctrl"),
        "step_nsteps_zero": (lambda: b.step(ctrl, 0), ValueError, "nsteps"),
        "step_nsteps_float": (lambda: b.step(ctrl, 1.5), TypeError, "nsteps"),
        "set_state_env_out_of_range": (lambda: b.set_state(np.array([N]), q, v), ValueError, "env_indices"),
        "set_state_env_negative": (lambda: b.set_state(np.array([-1]), q, v), ValueError, "env_indices"),
        "set_state_env_duplicate": (lambda: b.set_state(np.array([0, 0]), np.repeat(q, 2, 0), np.repeat(v, 2, 0)),
                                    ValueError, "env_indices"),
        "set_state_env_float": (lambda: b.set_state(np.array([0.0]), q, v), TypeError, "env_indices"),
        "set_state_qpos_shape": (lambda: b.set_state(np.array([0]), q[:, :-1], v), ValueError, "qpos"),
        "set_state_qpos_rows": (lambda: b.set_state(np.array([0, 1]), q, np.repeat(v, 2, 0)), ValueError, "qpos"),
        "set_state_qvel_shape": (lambda: b.set_state(np.array([0]), q, np.zeros((1, nv + 1))), ValueError, "qvel"),
        "set_state_qpos_nan": (lambda: b.set_state(np.array([0]), nan_q, v), ValueError, "qpos"),
        "set_state_qvel_inf": (lambda: b.set_state(np.array([0]), q, inf_v), ValueError, "qvel"),
        "set_state_zero_quat": (lambda: b.set_state(np.array([0]), zero_quat, v), ValueError, "qpos"),
        "unknown_body": (lambda: b.get_body_ids(["no_such_body"]), KeyError, "no_such_body"),
        "unknown_joint": (lambda: b.get_joint_dof_pos_indices(["no_such_joint"]), KeyError, "no_such_joint"),
        "unknown_site": (lambda: b.get_site_ids(["no_such_site"]), KeyError, "no_such_site"),
        "unknown_keyframe": (lambda: b.get_keyframe_qpos("no_such_key"), KeyError, "no_such_key"),
        "bare_string_names": (lambda: b.get_body_ids("base"), TypeError, "names"),
        "body_id_out_of_range": (lambda: b.get_body_pos_w(np.array([b.num_bodies])), ValueError, "body_ids"),
        "rows_env_out_of_range": (lambda: b.get_body_pose_w_rows(np.array([N]), ids), ValueError, "env_ids"),
    }
    if Capability.SENSORS in b.capabilities:
        cases["unknown_sensor"] = (lambda: b.get_sensor_data("no_such_sensor"), KeyError, "no_such_sensor")
    if Capability.BODY_FORCE in b.capabilities:
        cases["force_shape"] = (lambda: b.apply_body_force(ids, np.zeros((N, 2, 3))), ValueError, "force")
        cases["force_nan"] = (lambda: b.apply_body_force(ids, np.full((N, 1, 3), np.nan)), ValueError, "force")
    return cases


REJECTED_IDS = [pytest.param(case, prop, id=f"{case}-{prop}") for case in BAD_INPUT_CASES
                for prop in bad_input_props(case)]


def _rejected_run(kit, case):
    """One rejected call on a fresh 3-env quadruped: the documented error class (raises), its
    message naming the argument (names_argument), qpos/qvel bitwise unchanged (state_unchanged),
    and for forces the next step equal to a twin's that never got the call (force_not_staged)."""
    b = kit.make("quadruped", N)
    qpos, qvel = varied_quadruped_state(b)
    b.set_state(np.arange(N), qpos, qvel)
    cases = _cases(b)
    if case not in cases:
        pytest.skip(f"case {case!r} needs a capability backend {kit.label!r} does not declare")
    call, exc, needle = cases[case]
    q0, v0 = b.get_qpos(), b.get_qvel()
    p = Props()
    error = None
    with p("raises"):
        with pytest.raises(exc) as info:
            call()
        error = info.value
    with p("names_argument"):
        assert error is not None, f"no {exc.__name__} raised, so no message to name {needle!r}"
        assert needle in str(error), f"error does not name {needle!r}: {error!r}"
    with p("state_unchanged"):
        assert np.array_equal(b.get_qpos(), q0) and np.array_equal(b.get_qvel(), v0), \
            f"state changed after a rejected call ({case})"
    if case.startswith("force"):
        twin = kit.make("quadruped", N)
        twin.set_state(np.arange(N), qpos, qvel)
        b.step(home_ctrl(b), 1)
        twin.step(home_ctrl(twin), 1)
        with p("force_not_staged"):
            assert np.array_equal(b.get_qpos(), twin.get_qpos()), "a rejected force was staged anyway"
    return p


@pytest.mark.parametrize("case,prop", REJECTED_IDS)
def test_rejected(kit, case, prop):
    """The call raises the documented error class naming the argument; state is unchanged (one
    property per id, one rejected call per case)."""
    kit.shared(f"bad_input.{case}", lambda k: _rejected_run(k, case)).verdict(prop)


def test_unknown_option_rejected(kit):
    """An unknown backend option is a TypeError listing the valid options (never ignored)."""
    if kit._state.factory is None:
        pytest.skip("backend provided by a fixture factory: options are the factory's business")
    from unisim_conformance import scene_cfg
    from unisim_core.contract.factory import create_backend

    options = dict(kit._state.options, no_such_option=1)
    with pytest.raises(TypeError, match="no_such_option"):
        create_backend(kit._state.spec, scene_cfg("free_body"), 1, 0.002, **options)
