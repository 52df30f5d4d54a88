"""unisim_core.tools.policy_eval: Student-t intervals and the paired verdicts of ``unisim eval`` (no engine)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from unisim_core import InvalidInputError
from unisim_core.tools.policy_eval import (
    EngineEpisodes,
    format_report,
    installed_engines,
    judge,
    mean_ci,
    t_quantile_975,
)


def test_t_quantiles_match_closed_forms_and_tables():
    assert t_quantile_975(1) == pytest.approx(math.tan(math.pi * 0.475), abs=1e-3)  # Cauchy
    assert t_quantile_975(2) == pytest.approx(0.95 / math.sqrt(2 * 0.975 * 0.025), abs=1e-3)  # closed form, df 2
    # beyond the table: the expansion against published t tables (df 40, 60, 120) and the normal limit
    for df, t in ((40, 2.0211), (60, 2.0003), (120, 1.9799), (10**6, 1.9600)):
        assert t_quantile_975(df) == pytest.approx(t, abs=2e-4)
    with pytest.raises(InvalidInputError, match="df"):
        t_quantile_975(0)


def test_mean_ci_known_answer():
    mean, half = mean_ci(np.array([1.0, 2.0, 3.0, 4.0, np.nan]))  # NaN ignored: n = 4, sd = 1.291
    assert mean == 2.5
    assert half == pytest.approx(3.182 * np.std([1, 2, 3, 4], ddof=1) / 2.0)
    assert mean_ci(np.array([5.0])) == (5.0, math.inf)
    assert all(math.isnan(v) for v in mean_ci(np.array([np.nan])))


def _run(name, lin, fall=None, error=None):
    lin = np.asarray(lin, float)
    metrics = {"lin_vel_error": lin, "fall": np.zeros_like(lin) if fall is None else np.asarray(fall, float),
               "return": np.ones_like(lin)}
    return EngineEpisodes(backend=name, error=error, metrics={} if error else metrics, control_dt=0.02)


def test_paired_verdicts():
    ref = [0.20, 0.30, 0.25, 0.35, 0.22, 0.28]
    runs = [_run("ref", ref),
            _run("close", np.add(ref, [0.01, 0.02, 0.0, 0.01, 0.02, 0.0])),  # d = 0.01 ± 0.0094
            _run("worse", np.add(ref, 0.3)),  # d = 0.3 exactly
            _run("noisy", np.add(ref, [0.15, -0.15, 0.15, -0.15, 0.15, -0.14])),  # small mean, wide interval
            _run("falls", ref, fall=[1, 1, 1, 1, 1, 1]),
            _run("broken", [], error="EngineError: boom")]
    report = judge(runs, "ref", seed=3)
    v = {x.backend: x for x in report.verdicts}
    assert v["ref"].verdict == "reference"
    assert v["close"].verdict == "PASS"
    d = {x.metric: x for x in v["close"].diffs}["lin_vel_error"]
    assert d.mean == pytest.approx(0.01) and d.half == pytest.approx(2.571 * np.std([.01, .02, 0, .01, .02, 0],
                                                                                    ddof=1) / math.sqrt(6))
    assert d.tolerance == 0.1 and d.ok
    assert v["worse"].verdict == "FAIL" and "differs by more than 0.1" in v["worse"].detail
    assert v["noisy"].verdict == "FAIL" and "more episodes narrow it" in v["noisy"].detail
    assert v["falls"].verdict == "FAIL" and "falls +1" in v["falls"].detail
    assert v["broken"].verdict == "ERROR" and "boom" in v["broken"].detail
    assert not report.passed
    # return has no default tolerance: reported, not judged; a given tolerance judges it
    assert {x.metric: x for x in v["close"].diffs}["return"].ok is None
    assert judge(runs[:2], "ref", {"lin_vel_error": 0.005}).verdicts[1].verdict == "FAIL"
    text = format_report(report)
    assert "vs ref" in text and "PASS" in text and "worse: FAIL" in text and "broken: ERROR: EngineError: boom" in text
    doc = report.to_json()
    assert doc["verdicts"]["close"]["verdict"] == "PASS" and doc["seed"] == 3
    assert doc["runs"]["ref"]["per_episode"]["lin_vel_error"] == ref


def test_judge_refuses_bad_input():
    runs = [_run("a", [0.1, 0.2]), _run("b", [0.1, 0.2, 0.3])]
    with pytest.raises(InvalidInputError, match="unknown metrics \\['speed'\\]"):
        judge(runs[:1], "a", {"speed": 1.0})
    with pytest.raises(InvalidInputError, match="'c' is not one of"):
        judge(runs, "c")
    with pytest.raises(InvalidInputError, match="paired episodes"):
        judge(runs, "a")


def test_installed_engines_leaves_out_non_engines():
    names = installed_engines()
    assert not {"fake", "example", "ray"} & set(names)
    assert names[0] == "mujoco"
