"""The reliability rules of round three (issue #28) catch each broken backend built for them, and
pass the fake (``test_kit.py::test_fake_passes_every_selected_check``)."""

from __future__ import annotations

import pytest
from broken_reliability_backends import EXPECTED


@pytest.mark.parametrize("cls", sorted(EXPECTED))
def test_broken_backend_fails_its_reliability_check(run_kit, cls):
    layer, check = EXPECTED[cls]
    name, _, param = check.split("::")[1].partition("[")
    select = f"test_{name}" + (f" and {param.rstrip(']')}" if param else "")
    r = run_kit(f"--unisim-backend=broken_reliability_backends:{cls}", "-m", layer, "-k", select)
    assert r.rc == 1, r.out[-3000:]
    assert check in r.failed(), f"{cls}: expected {check} to fail; failed: {sorted(r.failed())}\n{r.out[-3000:]}"
