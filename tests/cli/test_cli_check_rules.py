"""``unisim check`` names, for each failed check, whether its rule is new since the kit rules the
backend declares (``KIT_RULES``) or a regression."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from unisim_core.tools import cli

pytest.importorskip("unisim_conformance", reason="the kit is an optional distribution")
BROKEN = Path(__file__).resolve().parents[2] / "conformance" / "tests"


def test_check_names_new_rules_and_regressions(tmp_path, monkeypatch, capfd):
    if not (BROKEN / "broken_frame_backends.py").is_file():
        pytest.skip("the kit's broken backends ship with the repository only")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(BROKEN), os.environ.get("PYTHONPATH", "")]))
    rc = cli.main(["check", "broken_frame_backends:LinkComVelocity", "-m", "dynamics", "-k",
                   "test_link_velocity_at_frame_origin or test_body_velocity_at_frame_origin",
                   "-p", "no:cacheprovider"])
    out = capfd.readouterr().out
    assert rc == 1, out[-3000:]
    assert "unisim check: kit rules 4; backend declares KIT_RULES = 2; 2 failed (2 new rule(s), " \
           "0 regression(s))" in out
    assert re.search(r"^dynamics::link_velocity_at_frame_origin\[lin_w\]\s+3\s+new rule \(since 2\)", out, re.M), out
