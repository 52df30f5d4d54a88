"""The core's default frame capture (``unisim_core.contract._playback``): any backend declaring VIDEO_CAPTURE
gets frames from the renderer plugin of the ``unisim_renderer`` hook, fed with the contract's state;
without such a plugin it fails closed naming what to install; ``close()`` frees the renderer."""

from __future__ import annotations

import numpy as np
import pytest
from core_helpers import SCENES

from unisim_core.contract import registry
from unisim_core.contract._playback import video_renderer
from unisim_core.contract.capabilities import Capability
from unisim_core.contract.config import CameraCfg, SceneCfg
from unisim_core.contract.errors import OptionalDependencyError
from unisim_core.plugin.fake import FakeBackend


class VideoFake(FakeBackend):
    """The fake with frames: it writes no rendering code, the core's defaults draw it."""

    CAPABILITIES = FakeBackend.CAPABILITIES | {Capability.VIDEO_CAPTURE, Capability.PLAYBACK}


def test_without_a_renderer_plugin_capture_names_what_to_install(monkeypatch):
    monkeypatch.setattr(registry, "plugin_hook", lambda name, hook: None)
    b = VideoFake(SceneCfg(str(SCENES["free_body"])), 1, 0.01)
    with pytest.raises(OptionalDependencyError, match=r"pip install 'unisim-mujoco\[video\]'"):
        b.capture_video_frame()
    assert b._video is None


def test_default_capture_draws_the_contract_state_and_close_frees_it():
    pytest.importorskip("mujoco", reason="the renderer plugin is unisim-mujoco (MuJoCo draws the frames)")
    scene = SceneCfg(str(SCENES["free_body"]))
    b = VideoFake(scene, 2, 0.01)
    camera = CameraCfg(distance=1.5, lookat=(0.0, 0.0, 1.0))
    qpos = np.array([[0.2, 0.0, 1.1, np.cos(0.3), 0.0, np.sin(0.3), 0.0], [-0.2, 0.1, 0.9, 1.0, 0.0, 0.0, 0.0]])
    b.set_state(np.arange(2), qpos, np.zeros((2, 6)))
    b.init_renderer(0.5, capture=True, width=48, height=32, camera_kwargs=camera)
    frame, renderer = b.capture_video_frame(), b._video
    ref = video_renderer()(scene.model_file, 2, 48, 32, 0.5, "grid", camera)
    try:
        np.testing.assert_array_equal(frame, ref.draw(b.get_qpos()))
        assert not np.array_equal(frame, ref.draw(np.tile(b.get_default_qpos(), (2, 1))))
    finally:
        ref.close()
    b.close()
    assert b.__dict__["_video"] is None and renderer._gl is None  # the GL context is freed
