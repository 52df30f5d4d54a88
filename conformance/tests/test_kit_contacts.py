"""The kit's ``contacts`` layer catches each classic contact-sensing bug (broken MuJoCo subclasses)."""

from __future__ import annotations

import pytest

pytest.importorskip("mujoco", reason="the broken contact backends subclass unisim-mujoco (extra: mujoco)")

from broken_contact_backends import EXPECTED, EXPECTED_TORQUES  # noqa: E402


@pytest.mark.parametrize("cls", sorted(EXPECTED))
def test_broken_contact_backend_fails_named_check(assert_fails_check, cls):
    assert_fails_check(f"broken_contact_backends:{cls}", *EXPECTED[cls])


@pytest.mark.parametrize("cls", sorted(EXPECTED_TORQUES))
def test_broken_contact_torques_fail_exactly_their_checks(run_kit, cls):
    """One kit run of the torque checks (5, about 1 s of MuJoCo) per broken backend: exactly the
    expected ones fail, the others pass (the resting box's 0 and the bad-input checks hold for all)."""
    r = run_kit(f"--unisim-backend=broken_contact_backends:{cls}", "-m", "contacts", "-k", "torque")
    outcomes = r.outcomes()
    assert len(outcomes) == 5 and r.failed() == EXPECTED_TORQUES[cls], f"{cls}: {outcomes}\n{r.out[-3000:]}"
