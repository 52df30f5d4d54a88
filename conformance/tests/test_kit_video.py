"""The kit's video checks prove sameness: frames drawn from a misreported state (xyzw root quaternion)
fail both pixel comparisons against MuJoCo's frames of the same poses, in one kit run."""

from __future__ import annotations

import pytest

pytest.importorskip("mujoco", reason="frames are drawn by unisim-mujoco's renderer (extra: mujoco)")

from broken_video_backends import EXPECTED  # noqa: E402


def test_misreported_pose_fails_frame_sameness(run_kit):
    r = run_kit("--unisim-backend=broken_video_backends:VideoQuatXyzw", "-m", "capabilities", "-k",
                "test_declared_works and (video_capture or playback)")
    assert r.rc == 1, r.out[-3000:]
    assert r.failed() == set(EXPECTED), r.out[-3000:]
