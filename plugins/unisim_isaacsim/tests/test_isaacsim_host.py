"""IsaacSimBackend end to end against REAL worker subprocesses (no Isaac Sim needed).

The worker is either the test double ``isaacsim_testing.fake_isaac_worker`` (FakeBackend
inside, permuted engine rows, xyzw quaternions on the wire) or the real ``unisim_isaacsim.worker``
module run by this venv's python, which must fail INIT clearly because Isaac Lab is missing.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from isaacsim_testing.fake_isaac_worker import MODE_ENV
from isaacsim_testing.host import LocalWorkerHost

from unisim_core import CameraCfg, Capability, SceneCfg
from unisim_core.contract._playback import video_renderer
from unisim_core.contract.errors import (
    InvalidInputError,
    InvalidTypeError,
    OptionalDependencyError,
    UnsupportedCapabilityError,
)
from unisim_core.contract.quat import quat_normalize
from unisim_core.plugin.fake import FakeBackend
from unisim_core.plugin.worker import WorkerStartupError
from unisim_core.scenes import scene_path
from unisim_isaacsim._backend import IsaacSimBackend
from unisim_isaacsim._launch import FALLBACK_ENV, WorkerPath
from unisim_isaacsim._physx_solver import PhysxSolverConfig
from unisim_isaacsim._readback import SolverReadbackError
from unisim_isaacsim._runtime import HOME_ENV, PYTHON_ENV

N = 3
SCENE = SceneCfg(scene_path("quadruped"), default_keyframe="home")
ALL_FIELDS = dict(solver_position_iteration_count=8, solver_velocity_iteration_count=2,
                  bounce_threshold_velocity=0.3, contact_offset=0.02, rest_offset=0.001,
                  max_depenetration_velocity=5.0, gpu_max_rigid_contact_count=2**20, gpu_max_rigid_patch_count=2**18)


class FakeIsaac(LocalWorkerHost):
    worker_module = "isaacsim_testing.fake_isaac_worker"


@pytest.fixture
def runtime(monkeypatch, tmp_path):
    """This venv's python plays Isaac Sim's interpreter; no default install root is visible."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv(HOME_ENV, raising=False)
    monkeypatch.setenv(PYTHON_ENV, sys.executable)
    monkeypatch.delenv(MODE_ENV, raising=False)
    return monkeypatch


@pytest.fixture
def make(runtime):
    made = []

    def _make(cls=FakeIsaac, **kw):
        kw.setdefault("physx", ALL_FIELDS)
        kw.setdefault("init_timeout_s", 60.0)
        kw.setdefault("call_timeout_s", 30.0)
        b = cls(SCENE, N, 0.005, **kw)
        made.append(b)
        return b

    yield _make
    for b in made:
        b.close()


def _random_state(ref, rng):
    qpos = np.tile(ref.get_default_qpos(), (N, 1)).astype(np.float64)
    qpos[:, :3] += rng.normal(0, 0.1, (N, 3))
    qpos[:, 3:7] = quat_normalize(rng.normal(size=(N, 4)))
    qpos[:, 7:] += rng.normal(0, 0.2, (N, ref.nq - 7))
    return qpos, rng.normal(0, 0.5, (N, ref.nv))


def test_contract_surface_row_order_and_quaternions_match_an_in_process_reference(make):
    b = make(enable_cameras=True)
    ref = FakeBackend(SCENE, N, 0.005)
    assert b.capabilities == {Capability.PRE_STEP_CONTROL, Capability.VIDEO_CAPTURE, Capability.PLAYBACK,
                              Capability.SITE_JACOBIAN, Capability.HEIGHT_SCAN,
                              Capability.TERRAIN}  # all but the first computed in this process
    assert b.env_rows == (2, 1, 0)  # taken from the worker's report, not assumed
    assert "test double" in b.engine_info["name"]
    np.testing.assert_allclose(b.get_qpos(), ref.get_qpos(), atol=1e-6)

    rng = np.random.default_rng(0)
    qpos, qvel = _random_state(ref, rng)
    for x in (b, ref):
        x.set_state(np.arange(N), qpos, qvel)
    np.testing.assert_allclose(b.get_qpos(), ref.get_qpos(), atol=1e-6)
    # the host's site Jacobian (the core's, from the worker's body poses) across the permuted rows
    site = int(b.get_site_ids(["imu"])[0])
    dofs = np.arange(b.nv)
    for got, want in zip(b.get_site_jacobian_w(site, dofs), ref.get_site_jacobian_w(site, dofs)):
        np.testing.assert_allclose(got, want, atol=1e-5)
    # On the wire, env e lives in engine row N-1-e with an xyzw root quaternion.
    raw = np.asarray(b._qpos)
    for e in range(N):
        wxyz = ref.get_qpos()[e, 3:7]
        np.testing.assert_allclose(raw[N - 1 - e, 3:7], wxyz[[1, 2, 3, 0]], atol=1e-6)

    ctrl = rng.normal(0, 0.3, (N, ref.num_actuators)).astype(np.float32)
    for x in (b, ref):
        x.step(ctrl, 3)
    np.testing.assert_allclose(b.get_qpos(), ref.get_qpos(), atol=2e-5)
    np.testing.assert_allclose(b.get_qvel(), ref.get_qvel(), atol=2e-4)
    bodies = np.arange(ref.num_bodies)
    for got, want in zip(b.get_body_state_w(bodies), ref.get_body_state_w(bodies)):
        np.testing.assert_allclose(got, want, atol=2e-4)
    np.testing.assert_allclose(b.get_base_quat(), ref.get_base_quat(), atol=1e-5)

    # A partial reset touches exactly the named env (row mapping on the way in).
    before = b.get_qpos()
    default = np.tile(ref.get_default_qpos(), (1, 1))
    b.set_state(np.array([2]), default, np.zeros((1, ref.nv)))
    after = b.get_qpos()
    np.testing.assert_allclose(after[2], default[0], atol=1e-6)
    np.testing.assert_array_equal(after[:2], before[:2])

    calls = []
    b.set_pre_step_control(lambda backend, c: (calls.append(1), c)[1])
    b.step(ctrl, 2)
    assert len(calls) == 2

    b.init_renderer(capture=True, headless=True, width=32, height=24)
    frame = b.capture_video_frame()
    assert frame.shape == (24, 32, 3) and frame.dtype == np.uint8


def test_without_cameras_frames_are_drawn_in_the_host_from_the_worker_state(make):
    """No Isaac rendering: the shared renderer in this process draws the worker's state (engine rows
    permuted, xyzw on the wire), pixel for pixel what MuJoCo's renderer draws for the same qpos."""
    b = make(physx=None)
    assert {Capability.VIDEO_CAPTURE, Capability.PLAYBACK} <= b.capabilities
    assert b.solver_readback == {}
    qpos, qvel = _random_state(FakeBackend(SCENE, N, 0.005), np.random.default_rng(1))
    qpos[:, 2] += 0.5
    b.set_state(np.arange(N), qpos, qvel)
    camera = CameraCfg(distance=2.0)
    b.init_renderer(capture=True, width=64, height=48, camera_kwargs=camera)
    frame = b.capture_video_frame()
    ref = video_renderer()(SCENE.model_file, N, 64, 48, 1.0, "grid", camera)
    try:
        want, default = ref.draw(qpos), ref.draw(np.tile(b.get_default_qpos(), (N, 1)))
    finally:
        ref.close()
    assert frame.shape == (48, 64, 3) and frame.dtype == np.uint8
    np.testing.assert_array_equal(frame, want)
    assert not np.array_equal(frame, default)  # the state is what is drawn


@pytest.mark.parametrize("kind, match", [
    ("mismatch", "solver_position_iteration_count.*requested 8"),
    ("missing", "solver_position_iteration_count.*did not report"),
    ("extra", "not requested"),
    ("stage_as_engine", "solver_position_iteration_count.*stage read labelled as an engine read"),
    ("unknown_source", "unknown source 'guess'"),
])
def test_forged_or_incomplete_readback_refuses_the_worker(make, runtime, kind, match):
    runtime.setenv(MODE_ENV, f"readback={kind}")
    physx = dict(ALL_FIELDS) if kind != "extra" else {"contact_offset": 0.02}
    with pytest.raises(SolverReadbackError, match=match):
        make(physx=physx)


def test_worker_exit_during_init_reports_the_stderr_tail(make, runtime):
    runtime.setenv(MODE_ENV, "exit_in_init")
    with pytest.raises(WorkerStartupError) as info:
        make()
    assert info.value.returncode == 3
    assert "exited with code 3 during INIT" in str(info.value)
    assert "libcuda.so.1 not found" in info.value.stderr_tail


def test_real_worker_module_without_isaac_lab_fails_init_clearly(make):
    with pytest.raises(WorkerStartupError, match="Isaac Lab is not importable"):
        make(cls=IsaacSimBackend)


def test_missing_runtime_raises_optional_dependency_error_with_the_setup_hint(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv(PYTHON_ENV, raising=False)
    monkeypatch.delenv(HOME_ENV, raising=False)
    with pytest.raises(OptionalDependencyError, match=f"{PYTHON_ENV}.*{HOME_ENV}"):
        IsaacSimBackend(SCENE, 1, 0.005)


INERTIAL = '<inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 0.01"/>'
HINGE_ROOT = f"""<mujoco><worldbody><body name="pole"><joint name="swing" type="hinge" axis="0 1 0"/>
{INERTIAL}</body></worldbody></mujoco>"""
TWO_ROOTS = f"""<mujoco><worldbody><body name="a"><freejoint name="fa"/>{INERTIAL}</body>
<body name="b"><freejoint name="fb"/>{INERTIAL}</body></worldbody></mujoco>"""


def test_a_root_jointed_to_the_world_is_refused_before_launch_by_scene_feature(runtime, tmp_path):
    model = tmp_path / "pole.xml"
    model.write_text(HINGE_ROOT)
    with pytest.raises(UnsupportedCapabilityError, match=r"root_world_joint.*root body 'pole' is jointed to the "
                                                         r"world by \['hinge'\]") as info:
        FakeIsaac(SceneCfg(str(model)), 1, 0.005)
    assert info.value.capability == "root_world_joint"


def test_frictionloss_and_an_unknown_keyframe_are_refused_before_launch(runtime, tmp_path):
    from unisim_core.contract.errors import UnknownNameError

    model = tmp_path / "rub.xml"
    model.write_text(HINGE_ROOT.replace('axis="0 1 0"', 'axis="0 1 0" frictionloss="0.1"'))
    with pytest.raises(UnsupportedCapabilityError, match="frictionloss=0.1") as info:
        FakeIsaac(SceneCfg(str(model)), 1, 0.005)
    assert info.value.capability == "frictionloss" and "frictionloss" in IsaacSimBackend.UNSUPPORTED_SCENE_FEATURES
    with pytest.raises(UnknownNameError, match=r"unknown keyframe 'nope'; known keyframes: \['home'\]"):
        FakeIsaac(SceneCfg(scene_path("quadruped"), default_keyframe="nope"), 1, 0.005)


def test_gravcomp_is_refused_before_launch_by_scene_feature(runtime, tmp_path):
    """``<body gravcomp>``: the worker's MJCF reader would drop it (the body would fall with full gravity);
    the host refuses it before launch as ``body_gravcomp``."""
    model = tmp_path / "held.xml"
    model.write_text(f"""<mujoco><worldbody><body name="base"><freejoint name="root"/>{INERTIAL}
      <body name="arm" gravcomp="1"><joint name="j" axis="0 1 0"/>{INERTIAL}</body></body></worldbody></mujoco>""")
    with pytest.raises(UnsupportedCapabilityError, match="<body name='arm'> has gravcomp=1") as info:
        FakeIsaac(SceneCfg(str(model)), 1, 0.005)
    assert info.value.capability == "body_gravcomp"


def test_two_top_level_bodies_are_refused_before_launch_by_scene_feature(runtime, tmp_path):
    model = tmp_path / "two.xml"
    model.write_text(TWO_ROOTS)
    with pytest.raises(UnsupportedCapabilityError, match=r"2 top-level bodies \['a', 'b'\]") as info:
        FakeIsaac(SceneCfg(str(model)), 1, 0.005)
    assert info.value.capability == "multiple_articulations"
    assert "multiple_articulations" in IsaacSimBackend.UNSUPPORTED_SCENE_FEATURES


def test_options_validate_physx_naming_field_and_bound(runtime):
    with pytest.raises(InvalidInputError, match=r"physx: solver_position_iteration_count must be in \[1, 255\]"):
        FakeIsaac(SCENE, 1, 0.005, physx={"solver_position_iteration_count": 0})
    with pytest.raises(InvalidTypeError, match="unknown PhysX solver field"):
        FakeIsaac(SCENE, 1, 0.005, physx={"iterations": 4})
    with pytest.raises(InvalidInputError, match="device"):
        FakeIsaac(SCENE, 1, 0.005, device="gpu")
    with pytest.raises(TypeError, match="unknown option"):
        FakeIsaac(SCENE, 1, 0.005, spacing=1.0)


def test_worker_path_exposes_only_the_unisim_packages(tmp_path):
    path = WorkerPath()
    try:
        assert sorted(p.name for p in path.path.iterdir()) == ["unisim_core", "unisim_isaacsim", "unisim_physx"]
        assert {"attrs", "pluggy"} <= {p.name for p in path.fallback.iterdir()}
        env = path.env({"PYTHONPATH": "/elsewhere"})
        assert env["PYTHONPATH"] == f"{path.path}{os.pathsep}/elsewhere"
        assert env[FALLBACK_ENV] == str(path.fallback)
    finally:
        path.close()
    assert not path.root.exists()


def test_default_solver_config_requests_nothing():
    assert PhysxSolverConfig().configured_fields() == ()


def test_a_mocap_body_the_worker_cannot_author_is_refused_before_launch(runtime, tmp_path):
    """Mocap bodies are accepted (kinematic rigid bodies, ``_mocap``) unless a colliding geom is not a USD
    primitive (``mocap_geom``) or a body hangs below one (``mocap_child_body``)."""
    model = tmp_path / "target.xml"
    for geom, feature in (('<geom type="ellipsoid" size="0.1 0.2 0.3"/>', "mocap_geom"),
                          ('<geom type="sphere" size="0.1"/><body name="held"><geom size="0.1"/></body>',
                           "mocap_child_body")):
        model.write_text(f"""<mujoco><worldbody><body name="target" mocap="true">{geom}</body>
          <body name="box"><freejoint name="root"/>{INERTIAL}</body></worldbody></mujoco>""")
        with pytest.raises(UnsupportedCapabilityError, match=feature) as info:
            FakeIsaac(SceneCfg(str(model)), 1, 0.005)
        assert info.value.capability == feature and feature in IsaacSimBackend.UNSUPPORTED_SCENE_FEATURES
