"""Fixtures of the unisim-mjwarp tests: real MuJoCo Warp on warp's CPU device, few worlds.

Kernels compile once per machine (warp's cache); backends are small so a warm run stays short.
"""

from __future__ import annotations

import numpy as np
import pytest
from mjwarp_testutil import QUADRUPED

from unisim_conformance.factory import backend_fixture
from unisim_core import SceneCfg
from unisim_mjwarp import MjwarpBackend

make = backend_fixture(MjwarpBackend, device="cpu", np_dtype=np.float64)


@pytest.fixture(scope="session")
def quadruped():
    """One 4-world quadruped on the CPU for the read-mostly tests (reset it before use)."""
    sim = MjwarpBackend(SceneCfg(str(QUADRUPED)), 4, 0.005, device="cpu", np_dtype=np.float64)
    yield sim
    sim.close()
