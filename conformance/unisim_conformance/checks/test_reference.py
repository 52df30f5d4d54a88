"""Layer - reference: every backend replays MuJoCo trajectories shipped with the kit.

Each trajectory (``unisim_conformance.reference``) starts two envs from recorded states, holds
recorded controls, applies recorded velocity kicks, and is compared after every sample interval
on qpos (free-joint orientation as a rotation angle), qvel, body world positions and orientations
and sensors, within its tier's tolerances (``reference.TIERS``: why each is what it is). Needs no
second engine: parity against a live reference stays available with ``--unisim-reference``.
"""

from __future__ import annotations

import numpy as np
import pytest

from unisim_conformance.reference import list_references, load
from unisim_conformance.reference.replay import deviations, replay

pytestmark = [pytest.mark.reference, pytest.mark.contract("1.0")]


@pytest.mark.parametrize("name", list_references())
def test_trajectory(kit, name, record_property):
    """Replay the MuJoCo reference ``name`` and stay within its tier on every quantity."""
    traj = load(name)
    b = kit.make(traj.scene, 2)
    info = b.model_info
    quat_cols = np.array([a + 3 for a, t in zip(info.joint_qposadr, info.joint_types) if t == "free"], dtype=int)
    devs = deviations(traj, replay(b, traj), quat_cols)
    for d in devs:
        record_property(f"{d.quantity}_max_error", d.max_error)
    bad = [d.describe() for d in devs if not d.ok]
    assert not bad, (f"reference trajectory {name!r} (tier {traj.tier.name!r}: {traj.tier.why}):\n  "
                     + "\n  ".join(bad))
