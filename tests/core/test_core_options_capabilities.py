"""Typed options (unknown ones fail loudly) and capability honesty on the fake backend."""

from __future__ import annotations

import numpy as np
import pytest
from core_helpers import SCENES, make

from unisim_core.contract.backend import SimBackend
from unisim_core.contract.capabilities import Capability
from unisim_core.contract.config import SceneCfg
from unisim_core.contract.errors import InvalidInputError, UnsupportedCapabilityError
from unisim_core.plugin.fake import FakeBackend

VALID = ("np_dtype", "base_name", "push_body_name", "seed", "divergence")


def scene(name: str = "free_body") -> SceneCfg:
    return SceneCfg(str(SCENES[name]))


def test_unknown_option_is_a_type_error_listing_valid_ones():
    with pytest.raises(TypeError, match="bogus_option") as info:
        FakeBackend(scene(), 4, 0.01, bogus_option=1)
    for name in VALID:
        assert name in str(info.value)
    with pytest.raises(TypeError, match="did you mean 'np_dtype'"):
        FakeBackend(scene(), 4, 0.01, np_dtyp=np.float64)


def test_create_backend_path_rejects_unknown_options():
    from unisim_core.contract import factory

    with pytest.raises(TypeError, match="bogus_option") as info:
        factory.create_backend("fake", scene(), 4, 0.01, bogus_option=1)
    assert all(name in str(info.value) for name in VALID)
    b = factory.create_backend("fake", scene(), 2, 0.01, np_dtype="float64")
    assert isinstance(b, FakeBackend) and b.get_qpos().dtype == np.float64


def test_option_values_are_validated_and_used():
    with pytest.raises(InvalidInputError, match="np_dtype"):
        FakeBackend(scene(), 1, 0.01, np_dtype=np.int32)
    with pytest.raises(InvalidInputError, match="sim_dt"):
        FakeBackend(scene(), 1, 0.0)
    with pytest.raises(InvalidInputError, match="num_envs"):
        FakeBackend(scene(), 0, 0.01)
    b = make("quadruped", 2, base_name="FL_hip", push_body_name="FL_calf", seed=3)
    assert b.base_body_id == int(b.get_body_ids(["FL_hip"])[0])
    c = make("quadruped", 2, base_name="FL_hip", push_body_name="FL_calf", seed=3)
    np.testing.assert_array_equal(b.push_robots([-5.0, 5.0]), c.push_robots([-5.0, 5.0]))  # seeded


UNDECLARED = {
    Capability.MOCAP: lambda b: b.bind_mocap_pose("box"),
    Capability.RENDER: lambda b: b.render(),
    Capability.VIDEO_CAPTURE: lambda b: b.capture_video_frame(),
    Capability.PLAYBACK: lambda b: b.resolve_play_render_plan(play_render_mode="video", play_steps=1,
                                                              output_video="x.mp4"),
}


@pytest.mark.parametrize("cap", list(UNDECLARED), ids=lambda c: c.value)
def test_undeclared_capabilities_raise_naming_backend_and_capability(cap, free_body):
    assert cap not in free_body.capabilities
    with pytest.raises(UnsupportedCapabilityError, match=f"backend 'fake' does not support capability '{cap.value}'") \
            as info:
        UNDECLARED[cap](free_body)
    assert info.value.backend == "fake" and info.value.capability == cap
    assert isinstance(info.value, NotImplementedError)


def test_declared_and_undeclared_sets(free_body):
    caps = free_body.capabilities
    assert caps == FakeBackend.CAPABILITIES
    for cap in (Capability.CONTACTS, Capability.MOCAP, Capability.RENDER, Capability.VIDEO_CAPTURE,
                Capability.PLAYBACK):
        assert cap not in caps
    for cap in (Capability.PRE_STEP_CONTROL, Capability.SENSORS, Capability.BODY_FORCE, Capability.BODY_TORQUE,
                Capability.PUSH, Capability.PHYSICS_SNAPSHOT, Capability.SITE_JACOBIAN, Capability.HEIGHT_SCAN,
                Capability.TERRAIN, Capability.INIT_RANDOMIZATION, Capability.RESET_RANDOMIZATION,
                Capability.INTERVAL_RANDOMIZATION):
        assert cap in caps
    with pytest.raises(UnsupportedCapabilityError, match="'render'"):
        free_body.init_renderer()
    with pytest.raises(UnsupportedCapabilityError, match="'video_capture'"):
        free_body.init_renderer(capture=True)
    with pytest.raises(UnsupportedCapabilityError, match="'playback'"):
        free_body.run_playback(env=None, initialize=lambda: None, step=lambda: None, num_steps=1)
    assert free_body.get_terrain_spawn_data() is None  # no terrain in the scene
    play = free_body.get_play_capabilities()
    assert not (play.supports_render or play.supports_video_capture or play.supports_playback)
    dr = free_body.get_dr_capabilities()
    assert dr.init_terms == {"body_mass", "gravity", "dof_damping", "actuator_kp", "actuator_kd"}
    assert dr.reset_terms == dr.init_terms | {"root_lin_vel_delta", "root_ang_vel_delta"}
    assert dr.interval_terms == {"root_lin_vel_delta", "root_ang_vel_delta", "body_force", "body_torque"}
    with pytest.raises(UnsupportedCapabilityError, match="'geom_friction' is not randomizable"):
        free_body.get_model_field("geom_friction")


def test_declaring_without_the_primitive_fails_at_construction():
    class NoMocap(FakeBackend):
        CAPABILITIES = FakeBackend.CAPABILITIES | {Capability.MOCAP}

    with pytest.raises(TypeError, match="NoMocap declares 'mocap' but does not implement _bind_mocap_pose"):
        NoMocap(scene(), 1, 0.01)

    class PushOnly(FakeBackend):
        CAPABILITIES = frozenset({Capability.PUSH})

    with pytest.raises(TypeError, match="declares 'push', which needs 'body_force'"):
        PushOnly(scene(), 1, 0.01)


def test_a_minimal_subclass_gets_the_full_surface_and_fails_closed():
    class Bare(FakeBackend):  # drop every optional capability: the primitives stay unused
        CAPABILITIES = frozenset({Capability.PRE_STEP_CONTROL})

    b = Bare(scene(), 2, 0.01)
    assert issubclass(Bare, SimBackend)
    with pytest.raises(UnsupportedCapabilityError, match="'body_force'"):
        b.apply_body_force([1], np.zeros((2, 1, 3)))
    with pytest.raises(UnsupportedCapabilityError, match="'sensors'"):
        b.get_sensor_data("box_pos")
    with pytest.raises(UnsupportedCapabilityError, match="'physics_snapshot'"):
        b.get_physics_state()
    with pytest.raises(UnsupportedCapabilityError, match="'site_jacobian'"):
        b.get_site_jacobian_w(0, [0])
    with pytest.raises(UnsupportedCapabilityError, match="'init_randomization'"):
        b.get_model_field("body_mass")
    b.step(np.zeros((2, 0)))  # stepping still works, and no wrench clearing is attempted
