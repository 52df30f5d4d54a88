"""``unisim compare``, ``unisim bench``, ``unisim run`` and the standing-quadruped example, on the
real engines (MuJoCo, MotrixSim). Durations are kept short: the whole folder runs in well under 60 s.

Tolerances here are those of ``unisim_core.tools.compare.TIERS``, which mirror the MotrixSim plugin's
parity figures (pendulum 3.6e-7 in qpos over 1 s, far inside the 1e-4 "tight" tier).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from unisim_core.scenes import resolve_scene
from unisim_core.tools import cli
from unisim_core.tools import compare as C
from unisim_core.tools.compare_report import plot_trajectories

REPO = Path(__file__).resolve().parents[2]

pytest.importorskip("unisim_mujoco", reason="unisim_mujoco is not installed")


def _needs_motrix():
    try:
        import unisim_motrix  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"unisim_motrix is not importable: {exc}")


def _needs_kit():
    pytest.importorskip("unisim_conformance", reason="conformance scenes need unisim-conformance")


# ------------------------------------------------------------------ compare: pure logic
def _traj(name, base_pos, dof_pos, quat=None):
    k = base_pos.shape[0]
    quat = np.tile([1.0, 0, 0, 0], (k, base_pos.shape[1], 1)) if quat is None else quat
    qpos = np.concatenate([base_pos, quat, dof_pos], axis=2)
    return C.Trajectory(backend=name, time=np.arange(k) * 0.01, base_pos=base_pos, base_quat=quat,
                        dof_pos=dof_pos, dof_vel=np.zeros_like(dof_pos), qpos=qpos)


def test_verdict_on_synthetic_deviation():
    """A reference and a copy offset by known amounts: the deviations are read back exactly and the
    verdict follows the tier (contact: 5 mm base, 1e-2 rad joints)."""
    k = 11
    base = np.zeros((k, 2, 3))
    dof = np.zeros((k, 2, 4))
    other_base = base.copy()
    other_base[:, 1, 0] = np.linspace(0, 3e-3, k)  # 3 mm at the end, in env 1
    other_dof = dof.copy()
    other_dof[5, 0, 2] = 2e-2  # one spike of 2e-2 rad
    angle = 0.01
    quat = np.tile([np.cos(angle / 2), 0, 0, np.sin(angle / 2)], (k, 2, 1))
    dev = C.deviation_series(_traj("a", base, dof), _traj("b", other_base, other_dof, quat))
    mx = {q: float(s.max()) for q, s in dev.items()}
    assert mx["base_pos"] == pytest.approx(3e-3)
    assert mx["dof_pos"] == pytest.approx(2e-2)
    assert mx["base_quat"] == pytest.approx(angle, rel=1e-6)  # angle between quaternions
    assert dev["dof_pos"].argmax() == 5
    assert C.verdict(mx, C.TIERS["contact"]) == ("FAIL", ["dof_pos 0.02 > 0.01"])
    assert C.verdict(mx, {**C.TIERS["contact"], "dof_pos": 0.05})[0] == "PASS"
    assert C.verdict({**mx, "base_pos": float("nan")}, C.TIERS["contact"])[0] == "FAIL"
    assert C.verdict(mx, {})[0] == "NO VERDICT"


def test_split_backend_items_and_bad_prefix():
    out = C.split_backend_items(["mujoco.integrator=implicitfast", "np_dtype=float32", "motrix.max_iterations=5"],
                                ["mujoco", "motrix"], "--option")
    assert out == {"mujoco": {"integrator": "implicitfast", "np_dtype": "float32"},
                   "motrix": {"np_dtype": "float32", "max_iterations": 5}}
    with pytest.raises(ValueError, match="not one of the compared backends"):
        C.split_backend_items(["isaac.x=1"], ["mujoco", "motrix"], "--option")


def test_resolve_scene_names_and_errors(tmp_path):
    path, name = resolve_scene("quadruped")
    assert name == "quadruped" and path.endswith("quadruped.xml")
    with pytest.raises(FileNotFoundError, match="no_such_scene"):
        resolve_scene("no_such_scene")
    with pytest.raises(FileNotFoundError):
        resolve_scene(str(tmp_path / "missing.xml"))


# ------------------------------------------------------------------ compare: real engines
def test_compare_pendulum_tight_tier_passes(tmp_path, capsys):
    _needs_motrix()
    _needs_kit()
    out = tmp_path / "pendulum.json"
    rc = cli.main(["compare", "--backends", "mujoco,motrix", "--scene", "pendulum", "--steps", "400",
                   "--json", str(out)])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "tier 'tight'" in text and ": PASS" in text
    res = json.loads(out.read_text())
    assert res["verdict"] == "PASS" and res["tier"] == "tight" and res["perturb"] == 0.5
    dev = res["comparisons"]["motrix"]["max_deviation"]
    assert 0 < dev["qpos"] < 1e-4  # the pendulum actually swings (perturb 0.5 rad) and both agree


def test_compare_quadruped_plot_has_both_backends(tmp_path):
    _needs_motrix()
    png = tmp_path / "quadruped.png"
    res = C.compare(["mujoco", "motrix"], "quadruped", steps=100)
    assert list(res.trajectories) == ["mujoco", "motrix"]
    a, b = res.trajectories.values()
    assert a.dof_pos.shape == b.dof_pos.shape == (101, 1, 12)
    assert res.tier == "contact" and set(res.deviations) == {"motrix"}
    assert res.max_deviation("motrix")["base_pos"] < 5e-3  # 0.2 s of standing: within the contact tier
    plot_trajectories(res, str(png))
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    import matplotlib.image as mpimg

    img = mpimg.imread(str(png))[..., :3]
    for color in ("#1f77b4", "#ff7f0e"):  # matplotlib's first two line colours: one per backend
        rgb = np.array([int(color[i:i + 2], 16) / 255 for i in (1, 3, 5)])
        assert (np.abs(img - rgb).max(axis=-1) < 0.02).sum() > 200, color


def test_compare_cli_quadruped_writes_plot_and_reports_unknown_option(tmp_path, capsys):
    _needs_motrix()
    png = tmp_path / "q.png"
    rc = cli.main(["compare", "--scene", "quadruped", "--steps", "50", "--plot", str(png),
                   "--scene-option", "mujoco.noslip_iterations=10"])
    text = capsys.readouterr().out
    assert rc == 0 and png.stat().st_size > 10_000, text
    assert "mjcf.noslip_iterations" in text
    # an unknown backend option fails closed, naming the valid ones
    rc = cli.main(["compare", "--scene", "quadruped", "--steps", "5", "--option", "mujoco.noslip_iteration=10"])
    assert rc == 2
    assert "noslip_iterations" in capsys.readouterr().err


# ------------------------------------------------------------------ bench, run, example
def test_bench_json_has_ratios(tmp_path, capsys):
    _needs_motrix()
    out = tmp_path / "bench.json"
    rc = cli.main(["bench", "--backends", "mujoco,motrix", "--num-envs", "4", "--steps", "5",
                   "--decimation", "2", "--json", str(out)])
    text = capsys.readouterr().out
    assert rc == 0, text
    rows = {r["backend"]: r for r in json.loads(out.read_text())["rows"]}
    assert set(rows) == {"mujoco", "motrix"}
    for r in rows.values():
        assert r["num_envs"] == 4 and r["ratio"] > 0 and r["cold_start_s"] > 0
        assert r["contract_env_steps_per_s"] > 0 and r["raw_env_steps_per_s"] > 0
        # the limit: one env's single-thread cost x N / threads, the threads the backend steps on
        assert r["threads"] >= 1 and r["limit_us_per_call"] > 0
        assert r["of_limit"] == pytest.approx(r["limit_us_per_call"] / r["contract_us_per_call"])
        # three alternating rounds of the three loops, each round's median kept; start-up both ways
        assert {k: len(v) for k, v in r["rounds_us"].items()} == {"contract": 3, "raw": 3, "one_env": 3}
        assert len(r["round_ratios"]) == 3 and r["cpu_ratio"] > 0
        assert r["ratio"] == np.median(r["round_ratios"])  # each round paired: its ratio, then their median
        assert 0 < r["warm_start_s"] and 0 < r["first_start_s"] and 0 < r["cold_start_s"] and r["device"] == "cpu"
    doc = json.loads(out.read_text())
    assert doc["rounds"] == 3 and doc["workload"].startswith("write ctrl") and len(doc["load_avg"]) == 3
    assert "ratio" in text and "first start" in text and "warm start" in text and "cold start" in text
    assert "of limit" in text


def test_bench_measure_runs_every_loop_alike():
    """Each loop runs once to warm up, once to size the rounds, then ``steps`` calls per round; the
    first call of each round is dropped from the medians."""
    from unisim_core.tools import bench as B

    counts = {"a": 0, "b": 0}

    def loop(name):
        def call():
            counts[name] += 1
        return call

    per_round, cpu = {}, {}
    med = B.measure({"a": loop("a"), "b": loop("b")}, 0.0, rounds=3, steps=4, per_round=per_round, cpu=cpu)
    assert counts == {"a": 2 + 3 * 4, "b": 2 + 3 * 4}
    assert set(med) == set(cpu) == {"a", "b"} and {k: len(v) for k, v in per_round.items()} == {"a": 3, "b": 3}


def test_bench_measure_alternates_short_blocks(monkeypatch):
    """Within a round the loops alternate in blocks (at least 3 calls, the order reversed every block),
    so that a drift in the machine's speed hits them alike; the first call of each block is dropped."""
    from unisim_core.tools import bench as B

    monkeypatch.setattr(B, "BLOCK_S", 0.0)  # the smallest blocks: 3 calls
    order, clock = [], [0.0]

    def loop(name, cost):
        def call():
            order.append(name)
            clock[0] += cost
        return call

    monkeypatch.setattr(B.time, "perf_counter", lambda: clock[0])
    per_round = {}
    med = B.measure({"a": loop("a", 1.0), "b": loop("b", 2.0)}, 0.0, rounds=1, steps=7, per_round=per_round)
    assert "".join(order[4:]) == "aaabbb" "bbbaaa" "ab"  # after warm-up and sizing: blocks of 3, 3, 1
    assert med == {"a": 1.0, "b": 2.0} and per_round == {"a": [1.0], "b": [2.0]}


def test_bench_without_raw_loop_and_with_a_broken_backend(capsys):
    """The fake backend has no raw-engine loop: its row says so and has no ratio; a backend that
    cannot be built gives error rows and the others still run."""
    from unisim_core.tools import bench as B

    scene, _ = resolve_scene("quadruped")
    rows = B.run_bench(["no_such_backend", "fake"], [2], scene, nsteps=1, steps=3, rounds=1)
    assert [r["backend"] for r in rows] == ["no_such_backend", "fake"]
    assert "error" in rows[0] and "no_such_backend" in rows[0]["error"]
    fake = rows[1]
    assert fake["ratio"] is None and fake["of_limit"] is None and "unisim_raw_stepper" in fake["note"]
    assert fake["contract_env_steps_per_s"] > 0 and fake["warm_start_s"] > 0
    text = B.format_rows(rows)
    assert "error" in text and "fake" in text


def test_bench_row_of_a_backend_refusing_the_scene_names_the_feature():
    """The example backend (fixed base only) refuses the quadruped by its MJCF feature: one
    ``refused`` row naming it, not an error, and the exit status stays 0."""
    pytest.importorskip("unisim_example_backend", reason="pip install ./examples/third_party_backend")
    from unisim_core.tools import bench as B

    scene, _ = resolve_scene("quadruped")
    rows = B.run_bench(["example"], [1, 4], scene, nsteps=1, steps=3, rounds=1)
    assert len(rows) == 1 and set(rows[0]) == {"backend", "refused", "detail"}
    assert rows[0]["refused"] == "floating_base_joints" and "example" in rows[0]["detail"]
    assert "refuses the scene: floating_base_joints" in B.format_rows(rows)


def _summary(text: str) -> dict[str, str]:
    rows = [line.split("  ", 1) for line in text.splitlines()[2:]]
    return {key.strip(): value.strip() for key, value in rows}


def test_run_prints_summary_of_a_standing_quadruped(capsys):
    rc = cli.main(["run", "--steps", "50", "--num-envs", "4"])
    text = capsys.readouterr().out
    assert rc == 0, text
    rows = _summary(text)
    assert {"cold start (construct → first step)", "env-steps/s (control steps)"} <= set(rows), text
    assert rows["envs with non-finite state"] == "0"
    low, high = (float(x) for x in rows["final base height range"].removesuffix(" m").strip("[]").split(","))
    # 1 s of PD hold of "home" (defaults: 50 steps x 4 x 5 ms): the quadruped scene documents a stance
    # height of 0.2848 m without sag and a settled base at 0.268-0.269 m; a robot that fell rests its
    # 0.05 m base box on the floor, one that sank through it or flew off leaves [0.25, 0.285].
    assert 0.25 <= low <= high <= 0.285, rows["final base height range"]


def test_standing_quadruped_example_on_mujoco(capsys):
    spec = importlib.util.spec_from_file_location("standing_quadruped", REPO / "examples" / "standing_quadruped.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--backend", "mujoco", "--backend", "fake", "--steps", "10", "--num-envs", "4"]) == 0
    text = capsys.readouterr().out
    assert "mujoco: mean reward" in text and "fake: skipped" in text


# ------------------------------------------------------------------ compare: keyframes and torque motors (#41)
GO1 = REPO.parent / "shared" / "corpus" / "menagerie" / "unitree_go1" / "scene.xml"


def test_compare_finds_the_keyframe_through_include_and_refuses_an_unknown_one(capsys):
    """Before #41 the keyframe check read only the named file: a Menagerie scene.xml (whose keyframes
    live in the included robot file) silently started from qpos0 (Go1's base at 0.445 m, not 0.27)."""
    _needs_motrix()
    if not GO1.is_file():
        pytest.skip(f"the Menagerie corpus is not at {GO1.parent.parent} (../shared/corpus beside the repository)")
    res = C.compare(["mujoco", "motrix"], str(GO1), steps=2)
    assert res.trajectories["mujoco"].base_pos[0, 0, 2] == pytest.approx(0.27)  # 'home' by default
    with pytest.raises(ValueError, match=r"--keyframe: .*scene\.xml has no keyframe 'stand' .* its keyframes: "
                                         r"\['home'\]"):
        C.compare(["mujoco", "motrix"], str(GO1), keyframe="stand")
    assert cli.main(["compare", "--backends", "mujoco,motrix", "--scene", str(GO1), "--keyframe", "stand"]) == 2
    assert "its keyframes: ['home']" in capsys.readouterr().err


def test_a_torque_driven_model_is_held_by_pd_or_gets_no_verdict(tmp_path):
    """The shipped quadruped with its 12 position servos turned into torque motors (ctrlrange the
    servos' +-33.5 N m force range). Zero torque lets it fall (no verdict, saying why); with
    --hold-gains 60,2 the same PD law (unisim_core.tools.actuators) holds it on both engines: the base
    stays above 0.2 m and the engines agree within the contact tier."""
    _needs_motrix()
    import re

    text = re.sub(r'<position kp="60" kv="2" ctrlrange="[^"]*" ctrllimited="true" forcerange="([^"]*)" '
                  r'forcelimited="true"/>', r'<motor ctrlrange="\1" ctrllimited="true"/>',
                  Path(resolve_scene("quadruped")[0]).read_text()).replace("<position ", "<motor ")
    scene = tmp_path / "quadruped_motors.xml"
    scene.write_text(text)
    passive = C.compare(["mujoco", "motrix"], str(scene), steps=200, tier="contact")
    assert passive.verdict == "NO VERDICT" and "torque motors" in passive.verdicts["motrix"][1][0]
    assert passive.trajectories["mujoco"].base_pos[-1, 0, 2] < 0.2  # collapsed
    held = C.compare(["mujoco", "motrix"], str(scene), steps=200, tier="contact", hold_gains=(60.0, 2.0))
    assert held.trajectories["mujoco"].base_pos[-1, 0, 2] > 0.2 and held.verdict == "PASS", held.verdicts
    with pytest.raises(ValueError, match="--hold-gains: expected KP,KD"):
        C.compare(["mujoco", "motrix"], str(scene), steps=2, hold_gains=(60.0, -1.0))
