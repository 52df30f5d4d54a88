"""Fixtures of the unisim-newton tests: real Newton on warp's CPU device, few worlds.

Kernels compile once per machine (warp's cache); backends are small so a warm run stays short.
"""

from __future__ import annotations

import numpy as np
import pytest
from newton_testutil import QUADRUPED

from unisim_conformance.factory import backend_fixture
from unisim_core import SceneCfg
from unisim_newton import NewtonBackend

make = backend_fixture(NewtonBackend, device="cpu", np_dtype=np.float64)


@pytest.fixture(scope="session")
def quadruped():
    """One 2-world quadruped on the CPU (home keyframe) for the read-mostly tests (reset it before use)."""
    sim = NewtonBackend(SceneCfg(str(QUADRUPED), default_keyframe="home"), 2, 0.002, device="cpu",
                        np_dtype=np.float64)
    yield sim
    sim.close()
