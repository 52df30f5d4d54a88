"""The kit's gravcomp checks catch a reader that drops ``<body gravcomp>`` (a broken MuJoCo subclass):
one kit run, each of the five checks fails."""

from __future__ import annotations

import pytest

pytest.importorskip("mujoco", reason="the broken gravcomp backend subclasses unisim-mujoco (extra: mujoco)")

from broken_gravcomp_backends import EXPECTED  # noqa: E402


def test_dropped_gravcomp_fails_each_gravcomp_check(run_kit):
    r = run_kit("--unisim-backend=broken_gravcomp_backends:GravcompDropped", "-m", "dynamics", "-k",
                "test_mjcf_gravcomp")
    assert r.rc == 1, r.out[-3000:]
    assert r.failed() == set(EXPECTED), r.out[-3000:]
