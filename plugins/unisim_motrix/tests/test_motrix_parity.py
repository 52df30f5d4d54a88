"""Cross-engine parity against raw MuJoCo (implicitfast, same dt), 1 s of simulated time.

Deviation = max over time and coordinates of |qpos_motrix - qpos_mujoco| (float64 output; the
MotrixSim state itself is float32, ~1e-7 relative). Measured (MotrixSim 0.10.1, MuJoCo 4.0.0):
pendulum 3.6e-7, double pendulum 5.2e-7, free body 3.2e-5 (quaternion; tumbling, asymmetric
inertia), quadruped PD hold 1.4 mm base / 4.4e-3 rad joints against plain MuJoCo (the scene's
near-rigid foot contact, solref 0.01 / solimp 0.99-0.999). With MuJoCo's default foot contact
(solref 0.02, solimp 0.9-0.95) the stance feet creep: 2.7 mm / 2.6e-2 rad (see the README).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from motrix_testutil import scene_path

from unisim_core import SceneCfg
from unisim_motrix import MotrixBackend

mujoco = pytest.importorskip("mujoco")


def _pair(scene, dt, key=None, **mj_opt):
    m = mujoco.MjModel.from_xml_path(scene_path(scene))
    m.opt.timestep = dt
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    for k, v in mj_opt.items():
        setattr(m.opt, k, v)
    d = mujoco.MjData(m)
    b = MotrixBackend(SceneCfg(scene_path(scene), default_keyframe=key), 1, dt, np_dtype=np.float64)
    return m, d, b


def _rollout(m, d, b, q0, v0, ctrl, steps):
    d.qpos[:], d.qvel[:], d.ctrl[:] = q0, v0, ctrl
    b.set_state(np.array([0]), q0[None], v0[None])
    dev = np.zeros(m.nq)
    for _ in range(steps):
        mujoco.mj_step(m, d)
        b.step(ctrl[None], 1)
        dev = np.maximum(dev, np.abs(b.get_qpos()[0] - d.qpos))
    b.close()
    return dev


def test_pendulum_parity():
    m, d, b = _pair("pendulum.xml", 0.001)
    assert _rollout(m, d, b, np.array([0.5]), np.zeros(1), np.zeros(m.nu), 1000).max() < 1e-4


def test_double_pendulum_parity():
    m, d, b = _pair("double_pendulum.xml", 0.001)
    assert _rollout(m, d, b, np.array([0.5, -0.3]), np.zeros(2), np.zeros(m.nu), 1000).max() < 1e-4


def test_free_body_parity():
    m, d, b = _pair("free_body.xml", 0.002)
    q0 = np.array([0, 0, 1, np.cos(0.2), np.sin(0.2), 0, 0])
    v0 = np.array([0.5, 0, 2, 0.3, 1.0, 0.2])
    assert _rollout(m, d, b, q0, v0, np.zeros(m.nu), 500).max() < 1e-4


def _quadruped(path=None):
    path = path or scene_path("quadruped.xml")
    m = mujoco.MjModel.from_xml_path(path)
    m.opt.timestep = 0.002
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    d = mujoco.MjData(m)
    b = MotrixBackend(SceneCfg(path, default_keyframe="home"), 1, 0.002, np_dtype=np.float64)
    q0 = m.key("home").qpos.copy()
    return _rollout(m, d, b, q0, np.zeros(m.nv), q0[7:].copy(), 500)


FOOT_CONTACT = 'priority="1" solref="0.01 1" solimp="0.99 0.999 0.001 0.5 2"'


def test_quadruped_pd_hold_parity():
    """Plain MuJoCo (implicitfast, same dt, no solver flags): 5 mm base, 1e-2 rad joints.
    Measured 1.4 mm / 4.4e-3 rad."""
    dev = _quadruped()
    assert dev[:3].max() < 5e-3 and dev[7:].max() < 1e-2, dev


def test_quadruped_modelling_difference_soft_contact_creep(tmp_path):
    """Why the scene's feet carry a near-rigid contact: with MuJoCo's default foot contact the
    stance load (feet 8 cm outboard of the abduction axes) creeps the feet apart in MuJoCo
    (abduction joints drift towards their PD-compliant angle) while MotrixSim's static friction
    holds them: base still within 5 mm, joints apart by more than 1e-2 rad over 1 s."""
    text = open(scene_path("quadruped.xml")).read()
    assert text.count(FOOT_CONTACT) == 1
    path = os.path.join(tmp_path, "quadruped_default_contact.xml")
    with open(path, "w") as f:
        f.write(text.replace(FOOT_CONTACT, ""))
    dev = _quadruped(path)
    assert dev[:3].max() < 5e-3
    assert 1e-2 < dev[7:].max() < 0.1, dev
