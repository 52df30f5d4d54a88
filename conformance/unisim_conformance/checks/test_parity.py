"""Layer 8 - parity (opt-in, ``--unisim-reference=NAME``): the same scenes, states and
controls on the reference backend; qpos trajectories compared over 1 s with the tolerance
tier each scene declares. Measured deviations go into the assertion message and into
``record_property`` (``--unisim-report`` / junit XML).

Tiers:
- ``exact``: backend and reference are the same class -> bitwise.
- ``tight``: smooth, contact-free scenes: max |dq| <= 1e-4 over 1 s (different integrators
  of the same ODE at dt <= 2 ms agree to O(dt^2)).
- ``contact``: the PD-held quadruped: base position within 5 mm and joints within 1e-2 rad
  over 1 s (contact models differ: soft vs hard; SCENES.md: 2 mm settle difference).
"""

from __future__ import annotations

import numpy as np
import pytest

from unisim_conformance._support import home_ctrl
from unisim_core import Capability

pytestmark = [pytest.mark.parity, pytest.mark.contract("1.0")]

TIERS = {"pendulum": "tight", "double_pendulum": "tight", "free_body": "tight", "quadruped": "contact"}


def _init(scene, b):
    n = b.num_envs
    if scene == "pendulum":
        return np.full((n, 1), 0.5), np.zeros((n, 1))
    if scene == "double_pendulum":
        return np.tile([0.4, -0.3], (n, 1)), np.zeros((n, 2))
    if scene == "free_body":
        return np.tile([0, 0, 1, 1, 0, 0, 0], (n, 1)).astype(float), np.tile([0.5, -0.2, 1.0, 0.2, 0.0, 0.5], (n, 1))
    q = np.tile(np.asarray(b.get_keyframe_qpos("home"), dtype=np.float64), (n, 1))
    return q, np.zeros((n, b.nv))


def _rollout(scene, b):
    q, v = _init(scene, b)
    b.set_state(np.arange(b.num_envs), q, v)
    ctrl = home_ctrl(b) if scene == "quadruped" else np.zeros((b.num_envs, b.num_actuators))
    chunk = max(1, int(round(0.05 / b.sim_dt)))
    traj = [b.get_qpos().astype(np.float64)]
    for _ in range(int(round(1.0 / (chunk * b.sim_dt)))):
        b.step(ctrl, chunk)
        traj.append(b.get_qpos().astype(np.float64))
    return np.stack(traj)


@pytest.mark.parametrize("scene", sorted(TIERS))
def test_trajectory_parity(kit, scene, record_property):
    """Trajectory of ``scene`` against the reference backend within the scene's tier."""
    if not kit.has_reference:
        pytest.skip("parity is opt-in: pass --unisim-reference=NAME")
    if scene == "quadruped" and Capability.CONTACTS not in kit.caps:
        pytest.skip(f"backend {kit.label!r} does not declare capability 'contacts' (quadruped parity needs it)")
    b = kit.make(scene, 1)
    r = kit.make(scene, 1, reference=True)
    if scene == "quadruped" and Capability.CONTACTS not in r.capabilities:
        pytest.skip(f"reference {kit.reference_spec!r} does not declare capability 'contacts'")
    tb, tr = _rollout(scene, b), _rollout(scene, r)
    tier = "exact" if type(b) is type(r) else TIERS[scene]
    d = np.abs(tb - tr)[:, 0]
    if scene in ("free_body", "quadruped"):
        # quaternions: q and -q are the same rotation
        qd = np.minimum(np.abs(tb[:, 0, 3:7] - tr[:, 0, 3:7]), np.abs(tb[:, 0, 3:7] + tr[:, 0, 3:7]))
        d[:, 3:7] = qd
    record_property(f"parity_{scene}_tier", tier)
    record_property(f"parity_{scene}_max_abs_dqpos", float(d.max()))
    if tier == "exact":
        assert float(d.max()) == 0.0, f"{scene}: same backend class but trajectories differ by {d.max():.3g}"
    elif tier == "tight":
        assert float(d.max()) <= 1e-4, f"{scene}: max |dq| over 1 s = {d.max():.3g} > 1e-4 (tight tier)"
    else:
        base = float(d[:, 0:3].max())
        joints = float(d[:, 7:].max())
        record_property("parity_quadruped_base_pos_m", base)
        record_property("parity_quadruped_joint_rad", joints)
        assert base <= 5e-3 and joints <= 1e-2, (
            f"quadruped PD hold over 1 s: base position deviation {base * 1e3:.2f} mm (tier 5 mm), "
            f"joint deviation {joints:.4f} rad (tier 1e-2 rad)")
