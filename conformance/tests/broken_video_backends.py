"""A deliberately broken video path (a subclass of the fake): the state drawn is not the state.

Referenced by ``test_kit_video.py`` as ``broken_video_backends:VideoQuatXyzw``; it must fail each
check of ``EXPECTED``. Frames come from the core's default renderer (``unisim_core.contract._playback``, MuJoCo's
renderer through the ``unisim_renderer`` hook), which draws what ``get_qpos`` reports.
"""

from __future__ import annotations

from unisim_core import Capability
from unisim_core.plugin.fake import FakeBackend


class VideoQuatXyzw(FakeBackend):
    """Declares frame capture and playback, and reports the free root's quaternion of ``get_qpos``
    in xyzw order (the classic adapter bug): every frame shows the body turned wrong."""

    name = "broken_video_quat_xyzw"
    CAPABILITIES = FakeBackend.CAPABILITIES | {Capability.VIDEO_CAPTURE, Capability.PLAYBACK}

    def get_qpos(self):
        qpos = super().get_qpos()
        qpos[:, 3:7] = qpos[:, [4, 5, 6, 3]]
        return qpos


#: The checks the broken backend must fail.
EXPECTED = ("capabilities::declared_works[video_capture-matches_mujoco]",
            "capabilities::declared_works[playback-frames_match_mujoco]")
