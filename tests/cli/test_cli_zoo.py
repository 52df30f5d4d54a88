"""``unisim zoo``: the cell classification (known answers), model discovery, the child process
(timeout, crash) and a run over a fixed subset of the Menagerie corpus on every installed engine.

The corpus is read where it lies, ``../shared/corpus/menagerie`` from the repository root; it is
never copied into the repository.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from unisim_core.contract import registry
from unisim_core.tools import zoo as Z
from unisim_core.tools.cli import main

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus" / "menagerie"
#: The CI subset: a two-link arm with an equality constraint (refused by the mjcf_lite engines) and a
#: 7-dof arm with meshes and explicit inertials (a Menagerie scene.xml with an <include>).
SUBSET = ("dynamixel_2r", "kinova_gen3")
ENGINES = ("mujoco", "motrix", "mjwarp", "newton", "genesis", "sapien")

LAYOUT = {"nq": 2, "nv": 2, "nu": 1, "sensor_names": [], "sensor_dims": [], "joint_types": ["hinge", "hinge"]}


def _arrays(steps: int = 3, envs: int = 1, dof: float = 0.0, base: float = 0.0) -> dict[str, np.ndarray]:
    t = np.arange(steps + 1) * 0.002
    q = np.tile(np.linspace(0, 1, steps + 1)[:, None, None], (1, envs, 2))
    return {"time": t, "base_pos": np.zeros((steps + 1, envs, 3)) + base,
            "base_quat": np.tile([1.0, 0, 0, 0], (steps + 1, envs, 1)), "dof_pos": q + dof,
            "dof_vel": np.zeros((steps + 1, envs, 2)), "qpos": q + dof}


def _ran(collide: bool = False, **layout) -> dict:
    return {"status": "ran", "layout": {**LAYOUT, "can_collide": collide, **layout}, "wall_s": 1.0}


def test_classification_known_answers():
    ref, ref_a = _ran(), _arrays()
    same = Z.classify("m", "motrix", _ran(), _arrays(envs=2), ref, ref_a)
    assert (same.cls, same.figure, same.tier) == ("ok", "qpos 0.0e+00", "tight")
    off = Z.classify("m", "motrix", _ran(), _arrays(envs=2, dof=2e-4), ref, ref_a)  # tight: qpos 1e-4
    assert (off.cls, off.figure) == ("deviates", "qpos 2.0e-04") and off.max_deviation["qpos"] == pytest.approx(2e-4)
    cref = _ran(collide=True)  # contact tier: base_pos 5e-3 m, dof_pos 1e-2 rad
    assert Z.classify("m", "newton", _ran(True), _arrays(dof=5e-3), cref, ref_a).cls == "ok"
    dev = Z.classify("m", "newton", _ran(True), _arrays(dof=2e-2), cref, ref_a)
    assert (dev.cls, dev.figure, dev.tier) == ("deviates", "dof_pos 2.0e-02", "contact")
    base = Z.classify("m", "newton", _ran(True), _arrays(base=6e-3), cref, ref_a)
    assert (base.cls, base.figure) == ("deviates", "base_pos 6.0e-03")
    # the reference engine itself is held to the tight tier even where the model collides
    assert Z.classify("m", "mujoco", _ran(True), _arrays(dof=5e-3), cref, ref_a).cls == "deviates"
    nan = _arrays()
    nan["qpos"][2] = np.nan
    assert Z.classify("m", "motrix", _ran(), nan, ref, ref_a).cls == "deviates"


def test_classification_of_failures_known_answers():
    ref, ref_a = _ran(), _arrays()
    refused = {"status": "refused", "feature": "weld_equality", "message": "equality 'e' ... not supported"}
    assert (Z.classify("m", "newton", refused, {}, ref, ref_a).cls,
            Z.classify("m", "newton", refused, {}, ref, ref_a).figure) == ("refused", "weld_equality")
    diverged = Z.classify("m", "motrix", {"status": "diverged", "message": "non-finite"}, {}, ref, ref_a)
    assert (diverged.cls, diverged.figure) == ("deviates", "diverged")
    crash = Z.classify("m", "motrix", {"status": "error", "type": "process", "message": "crashed: killed by SIGSEGV"},
                       {}, ref, ref_a)
    assert crash.cls == "error" and "SIGSEGV" in crash.detail
    layout = Z.classify("m", "motrix", _ran(nu=0), _arrays(), ref, ref_a)
    assert layout.cls == "error" and "nu 0 (reference 1)" in layout.detail
    orphan = Z.classify("m", "motrix", _ran(), _arrays(), {"status": "error", "message": "boom"}, {})
    assert orphan.cls == "error" and "reference mujoco error: boom" in orphan.detail
    cells = [Z.classify("a", "motrix", _ran(), _arrays(), ref, ref_a), layout,
             Z.classify("a", "newton", refused, {}, ref, ref_a)]
    assert Z.summary(cells) == {"motrix": {"ok": 1, "refused": 0, "deviates": 0, "error": 1},
                                "newton": {"ok": 0, "refused": 1, "deviates": 0, "error": 0}}
    md = Z.to_markdown(cells, {"command": "unisim zoo x", "steps": 3, "num_envs": 2})
    assert "| a | ok qpos 0.0e+00 | refused weld_equality |" in md and "**m × motrix** (error)" in md
    assert "Refresh (this file is the command's `--markdown` output): `unisim zoo x`" in md


def _run_json(path: Path, cells: list, steps: int = 3) -> str:
    path.write_text(json.dumps({**Z.to_json(cells, {"command": f"unisim zoo {path.stem}", "steps": steps,
                                                    "num_envs": 2}), "complete": True}))
    return str(path)


def test_from_json_merges_runs_later_cells_win(tmp_path, monkeypatch, capsys):
    ref, ref_a = _ran(True), _arrays()
    monkeypatch.setattr(Z, "documented_causes", lambda: {("newton", "b"): "contact: 1e-6 with contacts off"})
    old = [Z.classify("a", "newton", {"status": "error", "type": "process", "message": "boom"}, {}, ref, ref_a),
           Z.classify("b", "newton", _ran(True), _arrays(dof=2e-2), ref, ref_a)]
    new = [Z.classify("a", "newton", _ran(True), _arrays(), ref, ref_a),
           Z.classify("a", "sapien", {"status": "refused", "feature": "mesh_inertia"}, {}, ref, ref_a)]
    new[0].ran_at, new[0].commit = "2026-12-02T02:05:00Z", "abc1234"
    first, second = _run_json(tmp_path / "r1.json", old), _run_json(tmp_path / "r2.json", new)
    md = tmp_path / "zoo.md"
    assert main(["zoo", "--from-json", first, second, "--markdown", str(md), "--json", str(tmp_path / "m.json")]) == 0
    text = md.read_text()
    assert "| a | ok base_pos 0.0e+00 | refused mesh_inertia |" in text
    assert "| b | deviates dof_pos 2.0e-02 | - |" in text
    assert "**Cause:** contact: 1e-6 with contacts off." in text and "`unisim zoo r1` (2 cells, complete" in text
    assert ("| newton | 1 | 0 | 1 | 0 | 0 min (max 1 s) | 2026-12-02 02:05 – 2026-12-02 02:05 (1 of 2 cells unstamped) "
            "| `abc1234` |") in text
    merged = json.loads((tmp_path / "m.json").read_text())
    assert merged["summary"]["newton"] == {"ok": 1, "refused": 0, "deviates": 1, "error": 0}
    assert main(["zoo", "--from-json", first, _run_json(tmp_path / "r3.json", new, steps=5)]) == 2
    assert "expected runs of one --steps/--num-envs to merge, got [(3, 2), (5, 2)]" in capsys.readouterr().err
    assert main(["zoo"]) == 2 and "expected DIR... to run, or --from-json" in capsys.readouterr().err


def test_causes_are_each_plugins_own(monkeypatch):
    """The deviating cells' causes come from each plugin's ``unisim_zoo_causes`` hook, keyed by that
    plugin's backend: the core holds no engine's facts."""
    import importlib.util

    causes = Z.documented_causes()
    names = [r.name for r in registry.list_backends() if r.name in ENGINES and r.spec is not None]
    assert names, "no engine plugin installed"
    for name in names:  # the reference engine documents none
        module = f"unisim_{name}._zoo_causes"
        own = importlib.import_module(module).CAUSES if importlib.util.find_spec(module) else {}
        assert {m: c for (b, m), c in causes.items() if b == name} == own
    assert {b for b, _ in causes} <= set(names)


def test_matrix_texts_carry_paths_relative_to_the_models_root(tmp_path):
    """A refusal names the model's file relative to the corpus folder (``robot/scene.xml``), never the
    machine's absolute path, and the run's model table the same; gymnasium's assets as ``gymnasium/``."""
    robot = tmp_path / "corpus" / "robot"
    robot.mkdir(parents=True)
    (robot / "scene.xml").write_text('<mujoco><worldbody><body name="b"><joint name="j"/><geom size="0.1"/>'
                                     '</body></worldbody><tendon><fixed name="t"><joint joint="j" coef="1"/>'
                                     '</fixed></tendon></mujoco>')
    (model,) = Z.discover([str(tmp_path / "corpus")])
    (cell,) = Z.run_zoo([model], ["fake"], steps=2)
    assert (cell.cls, cell.figure) == ("refused", "fixed_tendon")
    assert "robot/scene.xml: <tendon>" in cell.detail and str(tmp_path) not in cell.detail, cell.detail
    assert model.relative(f"{robot}/scene.xml; {robot.resolve()}/a.xml") == "robot/scene.xml; robot/a.xml"
    gym = Z.ZooModel("gymnasium/ant", "/site/gymnasium/assets/ant.xml", "/site/gymnasium/assets", "gymnasium")
    assert gym.relative("/site/gymnasium/assets/ant.xml: x") == "gymnasium/ant.xml: x"


def test_exit_reasons_and_timeout_are_error_cells(tmp_path):
    assert Z._exit_reason(-11) == "crashed: killed by SIGSEGV" and Z._exit_reason(3) == "crashed: exit status 3"
    scene = ROOT / "unisim_core" / "scenes" / "quadruped.xml"
    rep, arrays = Z.spawn_cell("fake", str(scene), 5, 1, timeout=0.05, workdir=str(tmp_path))
    assert rep["status"] == "error" and rep["message"].startswith("timeout: no result after 0.05 s") and not arrays


def test_jobs_run_models_at_once_and_keep_the_order():
    """``jobs=2``: two models in flight, cells back in model order, ``on_cell`` once per cell with a
    running count; MuJoCo against its own one-env reference is bit-identical; a bad ``jobs`` raises."""
    import unisim_conformance

    scenes = Path(unisim_conformance.__file__).parent / "scenes"
    models = [Z.ZooModel(name, str(scenes / f"{name}.xml")) for name in ("pendulum", "double_pendulum", "free_body")]
    seen = []
    cells = Z.run_zoo(models, ["mujoco"], steps=5, jobs=2, on_cell=lambda done, total, c: seen.append((done, total)))
    assert [(c.model, c.cls, c.figure) for c in cells] == [(m.label, "ok", "qpos 0.0e+00") for m in models]
    assert seen == [(1, 3), (2, 3), (3, 3)]
    with pytest.raises(ValueError, match="--jobs: expected a positive integer, got 0"):
        Z.run_zoo(models, ["mujoco"], jobs=0)


def test_robot_entry_follows_the_menagerie_convention(tmp_path):
    robot = '<mujoco><worldbody/></mujoco>'
    a = tmp_path / "a"
    a.mkdir()
    for name in ("scene.xml", "scene_left.xml", "robot.xml"):
        (a / name).write_text(robot)
    assert Path(Z.robot_entry(a)).name == "scene.xml"
    (a / "scene.xml").unlink()
    assert Path(Z.robot_entry(a)).name == "scene_left.xml"
    b = tmp_path / "b"
    b.mkdir()
    (b / "hand.xml").write_text('<mujoco><include file="keys.xml"/></mujoco>')
    (b / "keys.xml").write_text('<mujoco><keyframe/></mujoco>')  # included: not an entry
    assert Path(Z.robot_entry(b)).name == "hand.xml"
    models = Z.discover([str(tmp_path)])
    assert [(m.label, Path(m.path).name) for m in models] == [("a", "scene_left.xml"), ("b", "hand.xml")]
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        Z.discover([str(tmp_path / "nope")])


def test_gymnasium_assets_are_a_source():
    pytest.importorskip("gymnasium", reason="gymnasium ships the MuJoCo assets")
    labels = {m.label for m in Z.discover(["gymnasium"])}
    assert {"gymnasium/ant", "gymnasium/humanoid", "gymnasium/hopper"} <= labels


def test_zoo_on_the_corpus_subset_for_every_installed_engine(tmp_path, capsys):
    """Every installed engine on the fixed subset: MuJoCo is bit-identical to its one-env reference,
    every other cell is ok, refused by a feature name or deviates with a figure: no error cell."""
    if not all((CORPUS / r / "scene.xml").is_file() for r in SUBSET):
        pytest.skip(f"the Menagerie corpus is not at {CORPUS} (../shared/corpus/menagerie from the repo root)")
    status = {r.name: r.status for r in registry.list_backends()}
    engines = [e for e in ENGINES if status.get(e) == "ok"]
    out = tmp_path / "zoo.json"
    code = main(["zoo", *(str(CORPUS / r) for r in SUBSET), "--backends", ",".join(engines), "--steps", "20",
                 "--timeout", "400", "--json", str(out), "--markdown", str(tmp_path / "zoo.md")])
    res = json.loads(out.read_text())
    cells = {(c["model"], c["backend"]): c for c in res["cells"]}
    assert res["complete"] and len(cells) == len(SUBSET) * len(engines), capsys.readouterr().err
    for r in SUBSET:
        assert (cells[(r, "mujoco")]["cls"], cells[(r, "mujoco")]["figure"]) == ("ok", "qpos 0.0e+00")
    errors = [f"{m} x {b}: {c['detail']}" for (m, b), c in cells.items() if c["cls"] == "error"]
    assert not errors and code == 0, errors
    for c in cells.values():
        if c["cls"] == "refused":
            assert c["figure"] and c["figure"] != "?" and c["backend"] in c["detail"]
    assert "| backend | ok | refused | deviates | error |" in (tmp_path / "zoo.md").read_text()


def test_plot_colours_the_matrix_by_class(tmp_path):
    pytest.importorskip("matplotlib", reason="--plot needs unisim-contract[plot]")
    ref, ref_a = _ran(), _arrays()
    cells = [Z.classify("a", "motrix", _ran(), _arrays(), ref, ref_a),
             Z.classify("a", "newton", {"status": "refused", "feature": "mesh"}, {}, ref, ref_a)]
    path = Z.plot_matrix(cells, str(tmp_path / "zoo.png"))
    assert Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


UNNAMED_KEY = """<mujoco><worldbody><body name="base" pos="0 0 1"><freejoint/>
  <inertial pos="0 0 0" mass="1" diaginertia="0.1 0.1 0.1"/>
  <body name="arm"><joint name="hinge" axis="0 1 0"/><inertial pos="0.2 0 0" mass="1" diaginertia="0.01 0.01 0.01"/>
  </body></body></worldbody><keyframe><key {attrs}/></keyframe></mujoco>"""


@pytest.mark.parametrize("backend", ["mujoco", "fake"])
def test_zoo_starts_from_keyframe_0_when_it_has_no_name(tmp_path, backend):
    """Keyframe 0 whatever its name (pal_talos' only key is unnamed; the contract's keyframe tables may
    leave such a key out, MuJoCo's do): the first recorded qpos is the key's, its quaternion normalised
    as MuJoCo compiles it ((0, 0, 0, 2) -> (0, 0, 0, 1)); a key without qpos starts from qpos0."""
    if backend == "mujoco":
        pytest.importorskip("unisim_mujoco")
    path = tmp_path / "unnamed.xml"
    path.write_text(UNNAMED_KEY.format(attrs='qpos="0.1 -0.2 0.5 0 0 0 2 0.7"'))
    rep, arrays = Z.run_cell(backend, str(path), 2, 2)
    assert rep["status"] == "ran" and rep["keyframe"] == "0 (unnamed)", rep
    np.testing.assert_allclose(arrays["qpos"][0], [[0.1, -0.2, 0.5, 0, 0, 0, 1, 0.7]] * 2, atol=1e-7)
    path.write_text(UNNAMED_KEY.format(attrs='time="0"'))
    rep, arrays = Z.run_cell(backend, str(path), 2, 2)
    np.testing.assert_allclose(arrays["qpos"][0], [[0, 0, 1, 1, 0, 0, 0, 0]] * 2, atol=1e-7)
