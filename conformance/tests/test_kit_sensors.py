"""The kit's MJCF force-sensor checks catch a sign bug in each sensor type (broken MuJoCo subclasses)."""

from __future__ import annotations

import pytest

pytest.importorskip("mujoco", reason="the broken sensor backends subclass unisim-mujoco (extra: mujoco)")

from broken_sensor_backends import EXPECTED  # noqa: E402


@pytest.mark.parametrize("cls", sorted(EXPECTED))
def test_broken_sensor_backend_fails_named_check(assert_fails_check, cls):
    assert_fails_check(f"broken_sensor_backends:{cls}", *EXPECTED[cls])
