"""Cross-backend options (``unisim_core.contract.portable_options``): a knob another engine needs is a declared
no-op where the options class lacks it; a value no no-op can honour and every other unknown option
are refused before anything is built."""

from __future__ import annotations

import numpy as np
import pytest

from unisim_core import InvalidInputError, SceneCfg, create_backend
from unisim_core.scenes import scene_path


@pytest.fixture
def scene():
    return SceneCfg(scene_path("quadruped"))


def test_portable_option_is_a_declared_noop(scene):
    with create_backend("fake", scene, 2, 0.01, nconmax=64, threads=4, graph_capture=True, device="cpu") as sim:
        assert set(sim.noop_options) == {"nconmax", "threads", "graph_capture", "device"}
        assert "contact buffers" in sim.noop_options["nconmax"]
        sim.step(np.zeros((2, sim.num_actuators), dtype=np.float32))


def test_an_option_the_backend_declares_is_not_a_noop(scene):
    mujoco = pytest.importorskip("unisim_mujoco")  # noqa: F841
    with create_backend("mujoco", scene, 2, 0.01, threads=1, nconmax=8) as sim:
        assert sim.options.threads == 1
        assert set(sim.noop_options) == {"nconmax"}


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"device": "cuda"}, r"device: this backend runs on the CPU only; expected None or 'cpu', got 'cuda'"),
    ({"nconmax": 0}, r"nconmax: expected an int >= 1 or None, got 0"),
    ({"graph_capture": 1}, r"graph_capture: expected a bool, got 1"),
])
def test_a_value_no_noop_can_honour_is_refused(scene, kwargs, match):
    with pytest.raises(InvalidInputError, match=match):
        create_backend("fake", scene, 2, 0.01, **kwargs)


def test_unknown_options_stay_errors(scene):
    with pytest.raises(TypeError, match=r"unknown option\(s\) 'nconmaxx'"):
        create_backend("fake", scene, 2, 0.01, nconmaxx=3)
