"""``unisim capabilities``: the backend x capability matrix read from the registry's specs, without
importing an engine."""

from __future__ import annotations

import subprocess
import sys

from unisim_core import Capability
from unisim_core.contract.registry import BackendRecord, BackendSpec
from unisim_core.plugin.fake import FakeBackend
from unisim_core.tools.cli import capability_matrix, main


def test_matrix_rows_follow_the_specs():
    """One row per capability in declaration order, 'yes' where the spec declares it, a closing
    'declared' row n/N; a record without a spec is left out."""
    a = BackendRecord(name="a", distribution="d", version="1", status="ok",
                      spec=BackendSpec(name="a", backend="m:A", capabilities={Capability.SENSORS, Capability.TERRAIN}))
    broken = BackendRecord(name="broken", distribution="d", version="1", status="load_error")
    rows, header = capability_matrix([a, broken])
    assert header == ["capability", "a"]
    assert [r[0] for r in rows] == [c.value for c in Capability] + ["declared"]
    table = {r[0]: r[1] for r in rows}
    assert table["sensors"] == table["terrain"] == "yes" and table["contacts"] == "-"
    assert table["declared"] == f"2/{len(Capability)}"


def test_command_prints_the_fakes_column_and_refuses_unknown_names(capsys):
    assert main(["capabilities", "--backends", "fake"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["capability", "fake"]
    rows = {line.split()[0]: line.split()[1] for line in out[2:]}
    assert {c.value for c in FakeBackend.CAPABILITIES} == {k for k, v in rows.items() if v == "yes"}
    assert main(["capabilities", "--backends", "fake", "--markdown"]) == 0
    md = capsys.readouterr().out.splitlines()
    assert md[0] == "| capability | fake |" and "| `height_scan` | yes |" in md
    assert main(["capabilities", "--backends", "fake,nope"]) == 2
    assert "no backend named ['nope']" in capsys.readouterr().err


def test_no_engine_is_imported():
    code = ("import sys; from unisim_core.tools.cli import main; main(['capabilities']); "
            "print(sorted(m for m in ('mujoco', 'motrixsim', 'warp', 'newton', 'genesis', 'sapien', 'torch') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "[]", out.stdout[-2000:]
