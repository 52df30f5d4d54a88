"""The reliability rules of round three (issue #28) catch each broken backend built for them, and
pass the fake (``test_kit.py::test_fake_passes_every_selected_check``)."""

from __future__ import annotations

import pytest
from broken_reliability_backends import EXPECTED


@pytest.mark.parametrize("cls", sorted(EXPECTED))
def test_broken_backend_fails_its_reliability_check(assert_fails_check, cls):
    assert_fails_check(f"broken_reliability_backends:{cls}", *EXPECTED[cls])
