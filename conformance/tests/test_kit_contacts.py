"""The kit's ``contacts`` layer catches each classic contact-sensing bug (broken MuJoCo subclasses)."""

from __future__ import annotations

import pytest

pytest.importorskip("mujoco", reason="the broken contact backends subclass unisim-mujoco (extra: mujoco)")

from broken_contact_backends import EXPECTED  # noqa: E402


@pytest.mark.parametrize("cls", sorted(EXPECTED))
def test_broken_contact_backend_fails_named_check(assert_fails_check, cls):
    assert_fails_check(f"broken_contact_backends:{cls}", *EXPECTED[cls])
