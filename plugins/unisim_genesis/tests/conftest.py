"""Fixtures of the unisim-genesis tests: real Genesis on its CPU backend (float64), few envs.

Genesis is heavy (torch, kernel compilation): it is installed by ``requirements-heavy.txt``,
not the Quick start. Without it these tests skip, naming that file; in CI (which installs it) the
root conftest turns such a skip into a failure. Kernels compile once per machine and scene
(minutes on a CPU), then load from Genesis' cache.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("genesis", reason="Genesis is not installed: pip install -r requirements-heavy.txt "
                                      "(genesis-world and the CPU torch build)")

from genesis_testutil import QUADRUPED  # noqa: E402

from unisim_core import SceneCfg  # noqa: E402
from unisim_genesis import GenesisBackend  # noqa: E402


@pytest.fixture(scope="session")
def quadruped():
    """One 3-env quadruped (CPU, float64), standing in its ``home`` keyframe; tests reset it before use."""
    sim = GenesisBackend(SceneCfg(str(QUADRUPED), default_keyframe="home"), 3, 0.002, device="cpu",
                         np_dtype=np.float64)
    yield sim
    sim.close()
