"""WorkerBackend: safe input errors, a custom launch (the pattern plugins reuse), wire layout checks."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import attrs
import numpy as np
import pytest

from unisim_core import SceneCfg, create_backend
from unisim_core.contract.errors import EngineError, InvalidInputError, UnsupportedCapabilityError
from unisim_core.plugin.fake import FakeBackend
from unisim_core.plugin.worker import WorkerFaultedError
from unisim_core.plugin.worker.backend import WorkerBackend, hosted_launch
from unisim_core.scenes import scene_path

HERE = Path(__file__).resolve().parent
SCENE = SceneCfg(scene_path("quadruped"), default_keyframe="home")


@pytest.fixture(autouse=True)
def importable(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.syspath_prepend(str(HERE))


class Hosted(WorkerBackend):
    """The hosted fake backend, started through a custom factory (a thin WorkerBackend subclass)."""

    factory = "sample_backends:counting"

    def __init__(self, n: int):
        super().__init__(SCENE, n, 0.005, target="fake", target_cls=FakeBackend)

    def _worker_launch(self, options):
        launch = hosted_launch("fake", self.scene, self._num_envs, self.sim_dt, options)
        return attrs.evolve(launch, argv=(sys.executable, "-m", "unisim_core.plugin.worker", self.factory),
                            init_timeout=30.0, call_timeout=15.0)


def test_engine_input_error_comes_back_typed_and_does_not_poison():
    b = create_backend("sample_backends:PickyFake", SCENE, 2, 0.005, isolation="subprocess")
    try:
        qpos = np.tile(b.get_default_qpos(), (1, 1))
        bad = np.zeros((1, b.nv))
        bad[0, -1] = 123.0
        with pytest.raises(InvalidInputError, match="engine rejects"):
            b.set_state(np.array([0]), qpos, bad)
        b.set_state(np.array([0]), qpos, np.zeros((1, b.nv)))  # still usable
        b.step(np.zeros((2, b.num_actuators), np.float32))
        bad[0, -1] = 666.0
        with pytest.raises(Exception, match="engine exploded"):
            b.set_state(np.array([0]), qpos, bad)
        with pytest.raises(WorkerFaultedError):
            b.step(np.zeros((2, b.num_actuators), np.float32))
    finally:
        b.close()


def test_step_sends_one_request_and_clears_forces_only_when_staged():
    b, ref = Hosted(2), FakeBackend(SCENE, 2, 0.005)
    try:
        ctrl = np.zeros((2, b.num_actuators), np.float32)
        for _ in range(3):
            b.step(ctrl, 2)
            ref.step(ctrl, 2)
        assert b._call("counts").get("clear_body_forces", 0) == 0
        force = np.zeros((2, 1, 3))
        force[:, 0, 2] = 50.0
        for x in (b, ref):
            x.apply_body_force(np.array([1]), force)
            x.step(ctrl, 2)
            x.step(ctrl, 2)  # forces were cleared after the first step
        counts = b._call("counts")
        assert counts["clear_body_forces"] == 1 and counts["step"] == 5
        np.testing.assert_allclose(b.get_qpos(), ref.get_qpos(), atol=1e-5)
    finally:
        b.close()


def test_bad_engine_rows_refuse_the_worker():
    class BadRows(Hosted):
        factory = "sample_backends:bad_rows"

    with pytest.raises(EngineError, match="permutation of range"):
        BadRows(3)


def test_worker_launch_needs_a_target_or_an_override():
    with pytest.raises(TypeError, match="_worker_launch"):
        WorkerBackend(SCENE, 1, 0.005)


def test_hosted_declarations_and_scene_refusals_cross_the_process(tmp_path):
    """The kit reads a backend's declarations from the instance: the worker host reports the hosted
    backend's, and a refused scene comes back with its feature (``capability``) intact."""
    with create_backend("fake", SceneCfg(scene_path("quadruped")), 1, 0.002, isolation="subprocess") as b:
        assert b.UNSUPPORTED_SCENE_FEATURES == FakeBackend.UNSUPPORTED_SCENE_FEATURES
        assert b.KNOWN_KIT_DEVIATIONS == FakeBackend.KNOWN_KIT_DEVIATIONS and b.snapshot_tier == "exact"
        assert b.KIT_RULES == FakeBackend.KIT_RULES == 3
    dry = tmp_path / "dry_friction.xml"
    dry.write_text('<mujoco><worldbody><body name="wheel"><joint name="j" type="hinge" frictionloss="0.05"/>'
                   '<inertial pos="0 0 0" mass="1" diaginertia="0.1 0.1 0.1"/></body></worldbody></mujoco>')
    with pytest.raises(UnsupportedCapabilityError) as info:
        create_backend("fake", SceneCfg(str(dry)), 1, 0.002, isolation="subprocess")
    assert info.value.capability == "frictionloss"
