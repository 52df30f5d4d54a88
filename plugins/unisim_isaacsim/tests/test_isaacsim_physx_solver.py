"""PhysxSolverConfig bounds, payload round trip, strict readback comparison, IsaacLab mapping."""

from __future__ import annotations

import math
import types

import attrs
import numpy as np
import pytest

from unisim_isaacsim._physx_solver import (
    PhysxSolverConfig,
    build_isaaclab_physx_cfg,
    solver_value_matches,
)

U32 = 2**32 - 1
FULL = {
    "solver_position_iteration_count": 8,
    "solver_velocity_iteration_count": 2,
    "bounce_threshold_velocity": 0.2,
    "contact_offset": 0.02,
    "rest_offset": 0.0,
    "max_depenetration_velocity": 10.0,
    "gpu_max_rigid_contact_count": 2**23,
    "gpu_max_rigid_patch_count": 5 * 2**15,
}


def test_fields_match_reference_page():
    """The seed page's fields, in its order, then the solver type both PhysX backends now map."""
    assert [a.name for a in attrs.fields(PhysxSolverConfig)] == [*FULL, "solver_type"]


def test_default_configures_nothing():
    config = PhysxSolverConfig()
    assert config.configured_fields() == ()
    assert config.to_payload() == {}


@pytest.mark.parametrize(
    ("field", "value", "bound"),
    [
        ("solver_position_iteration_count", 0, "[1, 255]"),
        ("solver_position_iteration_count", 256, "[1, 255]"),
        ("solver_velocity_iteration_count", -1, "[0, 255]"),
        ("solver_velocity_iteration_count", 256, "[0, 255]"),
        ("gpu_max_rigid_contact_count", 0, f"[1, {U32}]"),
        ("gpu_max_rigid_contact_count", U32 + 1, f"[1, {U32}]"),
        ("gpu_max_rigid_patch_count", 0, f"[1, {U32}]"),
        ("gpu_max_rigid_patch_count", U32 + 1, f"[1, {U32}]"),
        ("bounce_threshold_velocity", -0.1, ">= 0"),
        ("contact_offset", 0.0, "> 0"),
        ("contact_offset", -0.01, "> 0"),
        ("max_depenetration_velocity", 0.0, "> 0"),
        ("max_depenetration_velocity", -1.0, "> 0"),
        ("max_depenetration_velocity", 1e39, "float32 max"),
    ],
)
def test_out_of_bound_values_rejected(field, value, bound):
    with pytest.raises(ValueError) as info:
        PhysxSolverConfig(**{field: value})
    message = str(info.value)
    assert field in message and bound in message and repr(value) in message


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("solver_position_iteration_count", 1),
        ("solver_position_iteration_count", 255),
        ("solver_velocity_iteration_count", 0),
        ("solver_velocity_iteration_count", 255),
        ("gpu_max_rigid_contact_count", 1),
        ("gpu_max_rigid_contact_count", U32),
        ("gpu_max_rigid_patch_count", U32),
        ("bounce_threshold_velocity", 0.0),
        ("bounce_threshold_velocity", 2),
        ("contact_offset", 1e-6),
        ("max_depenetration_velocity", 1e30),
    ],
)
def test_boundary_values_accepted(field, value):
    assert getattr(PhysxSolverConfig(**{field: value}), field) == value


INT_FIELDS = [f for f, v in FULL.items() if isinstance(v, int)]
FLOAT_FIELDS = ["bounce_threshold_velocity", "contact_offset", "max_depenetration_velocity"]


@pytest.mark.parametrize("field", INT_FIELDS)
@pytest.mark.parametrize("value", [True, False, 8.0, "8", np.bool_(True), np.int64(8)])
def test_int_fields_reject_non_int(field, value):
    with pytest.raises(TypeError, match=field):
        PhysxSolverConfig(**{field: value})


@pytest.mark.parametrize("field", FLOAT_FIELDS)
@pytest.mark.parametrize("value", [True, "0.1", np.float32(0.1), [0.1]])
def test_float_fields_reject_non_numbers(field, value):
    with pytest.raises(TypeError, match=field):
        PhysxSolverConfig(**{field: value})


@pytest.mark.parametrize("field", FLOAT_FIELDS + ["rest_offset"])
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_float_fields_reject_non_finite(field, value):
    kwargs = {field: value}
    if field == "rest_offset":
        kwargs["contact_offset"] = 0.02
    with pytest.raises(ValueError, match=field):
        PhysxSolverConfig(**kwargs)


def test_rest_offset_bounds():
    assert PhysxSolverConfig(contact_offset=0.02, rest_offset=0.01).rest_offset == 0.01
    with pytest.raises(ValueError, match=r"rest_offset must be a finite number >= 0.*-0\.001"):
        PhysxSolverConfig(contact_offset=0.02, rest_offset=-0.001)
    with pytest.raises(
        ValueError, match=r"rest_offset must be < contact_offset \(0\.02\); got 0\.02"
    ):
        PhysxSolverConfig(contact_offset=0.02, rest_offset=0.02)
    with pytest.raises(ValueError, match=r"rest_offset requires contact_offset.*0\.0"):
        PhysxSolverConfig(rest_offset=0.0)


def test_config_is_frozen():
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        PhysxSolverConfig().contact_offset = 0.1


def test_payload_round_trip_keeps_only_configured_fields():
    config = PhysxSolverConfig(solver_position_iteration_count=4, contact_offset=0.01)
    assert config.configured_fields() == ("solver_position_iteration_count", "contact_offset")
    payload = config.to_payload()
    assert payload == {"solver_position_iteration_count": 4, "contact_offset": 0.01}
    assert type(payload) is dict
    assert PhysxSolverConfig.from_payload(payload) == config
    full = PhysxSolverConfig(**FULL)
    assert PhysxSolverConfig.from_payload(full.to_payload()) == full


def test_from_payload_rejects_unknown_keys_naming_them():
    with pytest.raises(TypeError, match=r"'substeps'.*valid fields: bounce_threshold_velocity"):
        PhysxSolverConfig.from_payload({"contact_offset": 0.01, "substeps": 2})


@pytest.mark.parametrize("payload", [None, [("contact_offset", 0.01)], "contact_offset=0.01"])
def test_from_payload_rejects_non_dict(payload):
    with pytest.raises(TypeError, match="must be a dict"):
        PhysxSolverConfig.from_payload(payload)


def test_from_payload_revalidates():
    with pytest.raises(ValueError, match="solver_position_iteration_count"):
        PhysxSolverConfig.from_payload({"solver_position_iteration_count": 0})


# solver_value_matches -------------------------------------------------------------------------


def test_float_readback_tolerates_only_float32_storage():
    stored = float(np.float32(0.02))  # what a float32 USD attribute / PhysX scalar reads back
    assert stored != 0.02
    assert solver_value_matches("contact_offset", 0.02, stored)
    assert solver_value_matches("contact_offset", 0.02, np.float32(0.02))
    # One float32 ulp away is a different engine value, so it must not match.
    next_up = float(np.nextafter(np.float32(0.02), np.float32(1.0)))
    assert not solver_value_matches("contact_offset", 0.02, next_up)
    # A float64 difference far beyond float32 rounding is rejected.
    assert not solver_value_matches("bounce_threshold_velocity", 0.2, 0.2 + 1e-6)


def test_int_readback_must_be_an_equal_int():
    assert solver_value_matches("solver_position_iteration_count", 8, 8)
    assert solver_value_matches("gpu_max_rigid_patch_count", 163840, np.uint32(163840))
    assert not solver_value_matches("solver_position_iteration_count", 8, 9)
    assert not solver_value_matches("solver_position_iteration_count", 8, 8.0)
    assert not solver_value_matches("solver_position_iteration_count", 1, True)


@pytest.mark.parametrize(
    "reported", [None, True, False, "0.02", b"0.02", math.nan, math.inf, [0.02]]
)
def test_forged_or_missing_float_readback_never_matches(reported):
    assert not solver_value_matches("contact_offset", 0.02, reported)


@pytest.mark.parametrize("reported", [None, True, "8", np.bool_(True)])
def test_forged_or_missing_int_readback_never_matches(reported):
    assert not solver_value_matches("solver_velocity_iteration_count", 1, reported)


def test_unknown_field_comparison_is_an_error():
    with pytest.raises(ValueError, match="'substeps'"):
        solver_value_matches("substeps", 1, 1)


# build_isaaclab_physx_cfg ---------------------------------------------------------------------


class RecordingPhysxCfg:
    """Test double for IsaacLab's ``sim_utils.PhysxCfg`` (Isaac Lab cannot run here)."""

    def __init__(self, **kwargs):
        self.kwargs = kwargs


FAKE_SIM_UTILS = types.SimpleNamespace(PhysxCfg=RecordingPhysxCfg)


def test_isaaclab_cfg_pins_iteration_counts_and_forwards_scene_fields():
    cfg = build_isaaclab_physx_cfg(FAKE_SIM_UTILS, PhysxSolverConfig(**FULL))
    assert cfg.kwargs == {
        "min_position_iteration_count": 8,
        "max_position_iteration_count": 8,
        "min_velocity_iteration_count": 2,
        "max_velocity_iteration_count": 2,
        "bounce_threshold_velocity": 0.2,
        "gpu_max_rigid_contact_count": 2**23,
        "gpu_max_rigid_patch_count": 5 * 2**15,
    }


def test_isaaclab_cfg_keeps_defaults_for_unconfigured_fields():
    assert build_isaaclab_physx_cfg(FAKE_SIM_UTILS, PhysxSolverConfig()).kwargs == {}
    only_stage = PhysxSolverConfig(contact_offset=0.01, max_depenetration_velocity=1.0)
    assert build_isaaclab_physx_cfg(FAKE_SIM_UTILS, only_stage).kwargs == {}


def test_isaaclab_cfg_requires_a_validated_config():
    with pytest.raises(TypeError, match="PhysxSolverConfig"):
        build_isaaclab_physx_cfg(FAKE_SIM_UTILS, {"solver_position_iteration_count": 8})
