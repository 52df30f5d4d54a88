"""Fixtures of the unisim-genesis tests: real Genesis on its CPU backend (float64), few envs.

Genesis is heavy (torch, kernel compilation): it is installed by ``requirements-heavy.txt``,
not the Quick start. Without it each test module skips at collection, naming that file
(``genesis_testutil.require_genesis``; a skip raised in a conftest would be a collection error);
in CI the session guards (``unisim_conformance.guards``) turn such a skip into a failure once the heavy
extra is installed.
Kernels compile once per machine and scene (minutes on a CPU), then load from Genesis' cache.
"""

from __future__ import annotations

import numpy as np
import pytest
from genesis_testutil import QUADRUPED

from unisim_core import SceneCfg


@pytest.fixture(scope="session")
def quadruped():
    """One 3-env quadruped (CPU, float64), standing in its ``home`` keyframe; tests reset it before use."""
    from unisim_genesis import GenesisBackend

    sim = GenesisBackend(SceneCfg(str(QUADRUPED), default_keyframe="home"), 3, 0.002, device="cpu",
                         np_dtype=np.float64)
    yield sim
    sim.close()
