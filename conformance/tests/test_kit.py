"""The kit's own tests: it passes the fake, catches each classic bug, and stays inert."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from broken_backends import EXPECTED

from unisim_conformance import list_scenes, scene_path

HERE = Path(__file__).parent


def test_fake_passes_every_selected_check(run_kit):
    r = run_kit("--unisim-backend=fake")
    assert r.rc == 0, r.out[-4000:]
    outcomes = r.outcomes()
    assert not {k for k, v in outcomes.items() if v in ("failed", "error")}
    assert outcomes["conventions::yaw_quat_wxyz[get_base_quat]"] == "passed"
    assert outcomes["capabilities::declared_works[site_jacobian-jacp]"] == "passed"
    assert "sensors" in r.report["capabilities"]


@pytest.mark.parametrize("cls", sorted(EXPECTED))
def test_broken_backend_fails_named_check(assert_fails_check, cls):
    assert_fails_check(f"broken_backends:{cls}", *EXPECTED[cls])


def test_capability_skip_reason(run_kit):
    r = run_kit("--unisim-backend=fake", "-m", "physics")
    assert r.outcomes()["physics::box_friction_threshold[below]"] == "skipped"
    assert "does not declare capability 'contacts'" in r.reason("physics::box_friction_threshold[below]")


def test_inert_without_kit_options(tmp_path, run_kit):
    (tmp_path / "test_plain.py").write_text("def test_one():\n    assert True\n")
    r = run_kit(str(tmp_path), "--co", report=False, pyargs=False)
    assert r.rc == 0, r.out
    assert "1 test collected" in r.out and "unisim" not in r.out.lower()
    # the checks package itself collects nothing when the kit is not activated
    r = run_kit(report=False)
    assert r.rc == 5, r.out  # "no tests collected"
    assert "no tests ran" in r.out


def test_markers_registered_only_when_active(run_kit):
    r = run_kit("--markers", report=False, pyargs=False)
    assert "UniSim conformance layer" not in r.out
    r = run_kit("--unisim-backend=fake", "--markers", report=False, pyargs=False)
    assert "conventions: UniSim conformance layer" in r.out


DECLARED = """\
from broken_backends import ForceWrongSign
from unisim_core.plugin.fake import FakeBackend


class DeclaredForceWrongSign(ForceWrongSign):
    KNOWN_KIT_DEVIATIONS = {**ForceWrongSign.KNOWN_KIT_DEVIATIONS,
                            "physics::body_force_acceleration[staged_step]": "wrong sign (known bug #1)",
                            "physics::no_such_check": "typo"}


class ClaimsFreeFallBroken(FakeBackend):
    KNOWN_KIT_DEVIATIONS = {**FakeBackend.KNOWN_KIT_DEVIATIONS, "physics::free_fall": "claimed broken"}
"""


def test_declared_deviations_are_strict_xfails_and_unknown_ids_are_reported(tmp_path, run_kit):
    (tmp_path / "declared.py").write_text(DECLARED)
    r = run_kit("--unisim-backend=declared:DeclaredForceWrongSign", "-m", "physics", env_path=tmp_path)
    assert r.rc == 0, r.out[-3000:]
    assert r.outcomes()["physics::body_force_acceleration[staged_step]"] == "xfailed"
    assert "known bug #1" in r.reason("physics::body_force_acceleration[staged_step]")
    assert "physics::no_such_check: matches no collected check" in r.out
    assert r.report["unknown_expected_failures"] == ["physics::no_such_check"]  # the fake's others match
    # strict: an expected failure that passes fails the run
    r = run_kit("--unisim-backend=declared:ClaimsFreeFallBroken", "-m", "physics", env_path=tmp_path)
    assert r.rc == 1, r.out[-3000:]
    assert r.outcomes()["physics::free_fall[z]"] == "failed"
    assert "XPASS(strict)" in r.out


def test_removed_ways_to_declare_expected_failures_stop_the_run_naming_the_class_attribute(tmp_path, run_kit):
    r = run_kit("--unisim-backend=fake", "--unisim-xfail=xfail.txt", report=False)
    assert r.rc == 4 and "--unisim-xfail was removed" in r.out and "KNOWN_KIT_DEVIATIONS" in r.out, r.out[-3000:]
    (tmp_path / "conftest.py").write_text(textwrap.dedent("""\
        import pytest

        @pytest.fixture
        def unisim_expected_failures():
            return {}

        def pytest_unisim_expected_failures(config):
            return {}
    """))
    r = run_kit("--unisim-backend=fake", cwd=tmp_path, report=False)
    assert r.rc == 4, r.out[-3000:]
    assert "fixture 'unisim_expected_failures' in" in r.out and "hook pytest_unisim_expected_failures in" in r.out
    assert "declared on the backend class only: KNOWN_KIT_DEVIATIONS" in r.out


def test_option_passthrough(run_kit):
    r = run_kit("--unisim-backend=fake", "--unisim-option", "np_dtype='float64'", "--unisim-option", "seed=3",
                "-m", "surface")
    assert r.rc == 0, r.out[-3000:]
    assert r.report["options"] == {"np_dtype": "'float64'", "seed": "3"}
    r = run_kit("--unisim-backend=fake", "--unisim-option", "no_such_option=1", "-m", "surface")
    assert r.rc != 0 and "no_such_option" in r.out


def test_factory_fixture_mode(tmp_path, run_kit):
    (tmp_path / "conftest.py").write_text(textwrap.dedent("""\
        import pytest
        from unisim_core.plugin.fake import FakeBackend

        @pytest.fixture
        def unisim_backend_factory():
            return lambda scene, num_envs, sim_dt: Declared(scene, num_envs, sim_dt, np_dtype="float64")

        class Declared(FakeBackend):
            KNOWN_KIT_DEVIATIONS = {"conventions::hinge_body_orientation": "declared on the class"}
    """))
    r = run_kit("-m", "conventions", cwd=tmp_path)
    assert r.rc == 1, r.out[-3000:]  # strict xfail of a passing check fails the run
    outcomes = r.outcomes()
    assert outcomes["conventions::yaw_quat_wxyz[get_base_quat]"] == "passed"
    assert outcomes["conventions::hinge_body_orientation[get_dof_pos]"] == "failed" and "XPASS(strict)" in r.out


def test_scene_registry():
    assert {"pendulum", "free_body", "quadruped", "fixed_arm"} <= set(list_scenes())
    assert scene_path("quadruped").is_file()
    with pytest.raises(KeyError, match="known"):
        scene_path("nope")


def test_example_third_party_backend_from_its_directory(run_kit):
    """examples/third_party_backend: the conftest's factory fixture drives the kit."""
    example = HERE.parent.parent / "examples" / "third_party_backend"
    if not example.is_dir():
        pytest.skip("examples/third_party_backend not present (installed kit)")
    r = run_kit("-m", "conventions or surface", cwd=example, env_path=example)
    assert r.rc == 0, r.out[-3000:]
    assert r.outcomes()["conventions::yaw_quat_wxyz[get_base_quat]"] == "passed"
    assert r.report["capabilities"] and "push" not in r.report["capabilities"]


def test_reliability_layer_on_a_float64_fake(run_kit):
    """float64 getters bound values only by the float range: no finite value lies beyond it (the
    check says so); the "reset" divergence policy is exercised through the option mode."""
    r = run_kit("--unisim-backend=fake", "--unisim-option", "np_dtype='float64'", "-m", "reliability")
    assert r.rc == 0, r.out[-3000:]
    outcomes = r.outcomes()
    assert outcomes["reliability::divergence_reset_policy_reports_without_raising"] == "passed"
    assert outcomes["reliability::values_beyond_the_engine_bound_are_rejected"] == "skipped"
    assert "no finite value lies beyond it" in r.reason("reliability::values_beyond_the_engine_bound_are_rejected")
