"""The kit's sameness checks of rules 4 catch what presence checks miss: one kit run per broken backend
(``broken_sameness_backends``), which fails exactly the expected checks among those selected."""

from __future__ import annotations

import pytest
from broken_sameness_backends import EXPECTED

SELECT = {"capabilities": "test_declared_works and (height_scan or site_jacobian)",
          "dynamics": "test_randomized_term_takes_effect"}


@pytest.mark.parametrize("cls", ["ScanAlignmentIgnored", "JacobianFreeRootFrames", "TermsStoredNotApplied"])
def test_broken_backend_fails_the_sameness_checks(run_kit, cls):
    if cls not in EXPECTED:
        pytest.skip("the randomization terms' broken backend subclasses unisim-mujoco (not installed)")
    layer, checks = EXPECTED[cls]
    r = run_kit(f"--unisim-backend=broken_sameness_backends:{cls}", "-m", layer, "-k", SELECT[layer])
    assert r.rc == 1, r.out[-3000:]
    assert r.failed() == set(checks), r.out[-3000:]
