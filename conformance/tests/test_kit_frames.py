"""Kit rules 3: one property per check id, non-root link velocities, fresh arrays in np_dtype, and
failures reported as new rules or regressions against the rules a backend declares."""

from __future__ import annotations

from pathlib import Path

import pytest
from broken_frame_backends import EXPECTED

from unisim_conformance import _rules


def _assert_properties(r, cls):
    layer, fail, passing = EXPECTED[cls]
    outcomes = r.outcomes()
    assert r.rc == 1, r.out[-3000:]
    assert {c: outcomes.get(c) for c in fail} == dict.fromkeys(fail, "failed"), r.out[-3000:]
    assert {c: outcomes.get(c) for c in passing} == dict.fromkeys(passing, "passed"), r.out[-3000:]


def _select(cls):
    layer, fail, passing = EXPECTED[cls]
    names = sorted({c.split("::")[1].split("[")[0] for c in fail + passing})
    return f"--unisim-backend=broken_frame_backends:{cls}", "-m", layer, "-k", " or ".join(f"test_{n}" for n in names)


@pytest.mark.parametrize("cls", sorted(set(EXPECTED) - {"LinkComVelocity"}))
def test_broken_backend_fails_only_its_properties(run_kit, cls):
    """Each broken backend fails the ids of its bug and passes the other properties of the same scenario."""
    _assert_properties(run_kit(*_select(cls)), cls)


def test_link_com_velocity_fails_only_linear_link_velocities_as_a_new_rule(run_kit):
    """Child links reporting COM velocity fail lin_w and lin_b only (root and angular velocities pass);
    the backend declares KIT_RULES = 2, so the failures of this rules-3 check are named new rules in
    the terminal summary, in each failure's own section and in the JSON report."""
    r = run_kit(*_select("LinkComVelocity"))
    _assert_properties(r, "LinkComVelocity")
    assert "dynamics::link_velocity_at_frame_origin[lin_w]: NEW RULE (kit rules 3, backend declares 2)" in r.out
    assert "NEW RULE: this check is in kit rules 3, newer than the backend's (KIT_RULES = 2)" in r.out
    rules = {c["check"]: c["rules"] for c in r.report["checks"]}
    assert rules["dynamics::link_velocity_at_frame_origin[lin_w]"] == 3
    assert rules["dynamics::body_velocity_at_frame_origin[root_lin_w]"] == 2
    assert (r.report["kit_rules"], r.report["backend_kit_rules"], r.report["backend_declares_kit_rules"]) == (
        _rules.KIT_RULES, 2, True)


def test_old_failures_are_regressions_and_split_ids_are_named(run_kit, tmp_path):
    """A rules-1 check failing on a backend that declares rules 3 (the fake's) is a regression; an
    expected failure naming a split id is reported with the ids it was split into."""
    (tmp_path / "declared.py").write_text(
        "from broken_backends import QuatXyzw\n\n\nclass Declared(QuatXyzw):\n"
        "    KNOWN_KIT_DEVIATIONS = {'conventions::yaw_quat_wxyz': 'declared before the split'}\n")
    r = run_kit("--unisim-backend=declared:Declared", "-m", "conventions", "-k", "test_yaw_quat_wxyz",
                env_path=tmp_path)
    assert r.rc == 1, r.out[-3000:]
    assert "kit rules 1, within the backend's (KIT_RULES = 3): a regression, not a new rule" in r.out
    assert "NEW RULE (kit rules" not in r.out
    assert r.report["split_expected_failures"]["conventions::yaw_quat_wxyz"] == list(
        _rules.split_into("conventions::yaw_quat_wxyz"))
    assert "conventions::yaw_quat_wxyz[get_base_quat]" in r.out


def test_split_ids_name_existing_checks(run_kit):
    """Every new id of the split table is a collected check (the table cannot drift from the checks)."""
    r = run_kit("--unisim-backend=fake", "--co", report=False)
    ids = set()
    for line in r.out.splitlines():
        path, sep, name = line.strip().partition("::test_")
        if sep:
            ids.add(f"{Path(path).stem[5:]}::{name}")
    assert len(ids) > 200, r.out[-2000:]
    missing = sorted(new for news in _rules.SPLIT.values() for new in news if new not in ids)
    assert not missing, missing


def test_tolerances_follow_the_measured_engine_precision(run_kit):
    """A float32 engine under np_dtype=float64 returns float64 arrays of float32 values: the kit measures
    float32 precision at its probe and the eps-scaled conventions checks pass at float32 tolerances
    (at float64's, 8 eps = 1.8e-15, the float32-rounded 90 degree yaw would fail by 1e-8)."""
    r = run_kit("--unisim-backend=broken_frame_backends:Float32Engine", "--unisim-option", "np_dtype='float64'",
                "-m", "conventions", "-k", "test_yaw_quat_wxyz or test_ang_vel_frames")
    assert r.rc == 0, r.out[-3000:]
    assert set(r.outcomes().values()) == {"passed"} and len(r.outcomes()) == 8
