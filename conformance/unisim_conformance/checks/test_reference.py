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
from unisim_conformance.reference.replay import QUANTITIES, deviations, replay

pytestmark = [pytest.mark.reference, pytest.mark.contract("1.0")]


def _replay(kit, name):
    traj = load(name)
    b = kit.make(traj.scene, 2)
    info = b.model_info
    quat_cols = np.array([a + 3 for a, t in zip(info.joint_qposadr, info.joint_types) if t == "free"], dtype=int)
    return {"tier": traj.tier, "devs": {d.quantity: d for d in deviations(traj, replay(b, traj), quat_cols)}}


@pytest.mark.parametrize("quantity", QUANTITIES)
@pytest.mark.parametrize("name", list_references())
def test_trajectory(kit, name, quantity, record_property):
    """Replay the MuJoCo reference ``name`` once and stay within its tier on ``quantity`` (qpos, qvel,
    body_pos, body_angle, sensors: one id each)."""
    r = kit.shared(f"reference.{name}", lambda k: _replay(k, name))
    d = r["devs"].get(quantity)
    if d is None:
        pytest.skip(f"reference {name!r}: no {quantity} compared (the scene has no sensors, or the backend does "
                    f"not declare capability 'sensors')")
    record_property(f"{d.quantity}_max_error", d.max_error)
    assert d.ok, f"reference trajectory {name!r} (tier {r['tier'].name!r}: {r['tier'].why}): {d.describe()}"
