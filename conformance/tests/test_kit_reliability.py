"""The reliability rules of round three (issue #28) catch each broken backend built for them, and
pass the fake (``test_kit.py::test_fake_passes_every_selected_check``)."""

from __future__ import annotations

import pytest
from broken_reliability_backends import EXPECTED


@pytest.mark.parametrize("cls", sorted(EXPECTED))
def test_broken_backend_fails_its_reliability_check(assert_fails_check, cls):
    assert_fails_check(f"broken_reliability_backends:{cls}", *EXPECTED[cls])


def test_a_rules_3_reliability_failure_is_a_new_rule_for_a_rules_2_backend(run_kit):
    """model_info_arrays_are_read_only came with kit rules 3: a backend declaring KIT_RULES = 2 that
    fails it is told NEW RULE with the CHANGELOG entry, not a regression."""
    r = run_kit("--unisim-backend=broken_reliability_backends:WritableModelInfoRules2", "-m", "reliability",
                "-k", "test_model_info_arrays_are_read_only")
    assert r.rc == 1, r.out[-3000:]
    check = "reliability::model_info_arrays_are_read_only"
    assert r.failed() == {check}
    assert next(c for c in r.report["checks"] if c["check"] == check)["rules"] == 3
    assert "NEW RULE (kit rules 3, backend declares 2)" in r.out, r.out[-3000:]
