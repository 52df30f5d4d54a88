"""``unisim check``: options before or after the backend name, the rest goes to pytest; and the scene
registries of core and kit agree on the type they return."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from unisim_core.scenes import scene_path
from unisim_core.tools import cli
from unisim_core.tools.cli import build_parser


@pytest.mark.parametrize("argv", [
    ["check", "fake", "--reference", "mujoco", "--option", "np_dtype=float64", "-m", "surface", "-q"],
    ["check", "--option", "np_dtype=float64", "fake", "-m", "surface", "--reference", "mujoco", "-q"],
    ["check", "--reference", "mujoco", "--option", "np_dtype=float64", "fake", "--", "-m", "surface", "-q"],
])
def test_check_options_before_or_after_the_name(argv):
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    assert (args.name, args.option, args.reference) == ("fake", ["np_dtype=float64"], "mujoco")
    assert [a for a in extra if a != "--"] == ["-m", "surface", "-q"]


def test_check_runs_the_kit_with_options_given_after_the_name(tmp_path, monkeypatch, capfd):
    monkeypatch.chdir(tmp_path)  # no project conftest: the kit as a user runs it
    rc = cli.main(["check", "fake", "--option", "np_dtype=float64", "--reference", "fake", "-m", "surface",
                   "-p", "no:cacheprovider"])
    out = capfd.readouterr().out
    assert rc == 0, out
    assert "unisim-conformance: backend fake options {'np_dtype': 'float64'}" in out
    assert "unisim-conformance: parity reference fake" in out
    assert " passed" in out and re.search(r"\b[1-9]\d* failed", out) is None


def test_check_bad_option_after_the_name_fails_the_run(tmp_path, monkeypatch, capfd):
    monkeypatch.chdir(tmp_path)
    rc = cli.main(["check", "fake", "--option", "np_dtype=int8", "-m", "surface", "-x", "-p", "no:cacheprovider"])
    out = capfd.readouterr()
    assert rc != 0
    assert "np_dtype: expected float32 or float64, got int8" in out.out + out.err


def test_other_subcommands_reject_unknown_arguments(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["backends", "--bogus"])
    assert info.value.code == 2 and "unrecognized arguments: --bogus" in capsys.readouterr().err


def test_core_and_kit_scene_path_return_the_same_type():
    kit = pytest.importorskip("unisim_conformance", reason="the kit is an optional distribution")
    core_path, kit_path = scene_path("quadruped"), kit.scene_path("pendulum")
    assert type(core_path) is type(kit_path)
    assert isinstance(core_path, Path) and core_path.is_file() and kit_path.is_file()
    assert kit.scene_path("quadruped") == core_path
