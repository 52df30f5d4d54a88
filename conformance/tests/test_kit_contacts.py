"""The kit's ``contacts`` layer catches each classic contact-sensing bug (broken MuJoCo subclasses)."""

from __future__ import annotations

import pytest

pytest.importorskip("mujoco", reason="the broken contact backends subclass unisim-mujoco (extra: mujoco)")

from broken_contact_backends import EXPECTED  # noqa: E402


@pytest.mark.parametrize("cls", sorted(EXPECTED))
def test_broken_contact_backend_fails_named_check(run_kit, cls):
    layer, check = EXPECTED[cls]
    r = run_kit(f"--unisim-backend=broken_contact_backends:{cls}", "-m", layer, "-k", "test_" + check.split("::")[1])
    assert r.rc == 1, r.out[-3000:]
    assert check in r.failed(), f"{cls}: expected {check} to fail; failed: {sorted(r.failed())}\n{r.out[-3000:]}"
