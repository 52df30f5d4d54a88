"""The kit's MJCF force-sensor checks catch the sign bug (a broken MuJoCo subclass reporting the
reaction) in each sensor type: one kit run, each of the three checks fails."""

from __future__ import annotations

import pytest

pytest.importorskip("mujoco", reason="the broken sensor backend subclasses unisim-mujoco (extra: mujoco)")

from broken_sensor_backends import EXPECTED  # noqa: E402


def test_reaction_sensors_fail_each_force_sensor_check(run_kit):
    r = run_kit("--unisim-backend=broken_sensor_backends:SensorReaction", "-m", "dynamics", "-k",
                "test_mjcf_force_sensors")
    assert r.rc == 1, r.out[-3000:]
    assert r.failed() == set(EXPECTED), r.out[-3000:]
