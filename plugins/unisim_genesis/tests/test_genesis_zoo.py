"""``unisim zoo`` on Genesis over the CI subset of the Menagerie corpus (the main suite's zoo test runs
every other engine; Genesis is only installed in the heavy stage). Known answers from docs/zoo.md:
kinova_gen3 (meshes, explicit inertials, a scene.xml with an <include>) runs within the contact tier,
robotiq_2f85 is refused by its ``spatial_tendon`` (Genesis has no tendons)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from genesis_testutil import require_genesis

require_genesis()

from unisim_core.tools.cli import main  # noqa: E402

CORPUS = Path(__file__).resolve().parents[4] / "shared" / "corpus" / "menagerie"


def test_zoo_subset_on_genesis(tmp_path):
    robots = [CORPUS / "kinova_gen3", CORPUS / "robotiq_2f85"]
    if not all((r / "scene.xml").is_file() for r in robots):
        pytest.skip(f"the Menagerie corpus is not at {CORPUS} (../shared/corpus/menagerie from the repo root)")
    out = tmp_path / "zoo.json"
    code = main(["zoo", *map(str, robots), "--backends", "mujoco,genesis", "--steps", "20", "--timeout", "600",
                 "--json", str(out)])
    cells = {(c["model"], c["backend"]): c for c in json.loads(out.read_text())["cells"]}
    assert code == 0 and len(cells) == 4
    kinova, gripper = cells[("kinova_gen3", "genesis")], cells[("robotiq_2f85", "genesis")]
    assert kinova["cls"] == "ok", kinova["detail"]
    assert (gripper["cls"], gripper["figure"]) == ("refused", "spatial_tendon"), gripper["detail"]
    assert "Genesis has no tendons" in gripper["detail"]
