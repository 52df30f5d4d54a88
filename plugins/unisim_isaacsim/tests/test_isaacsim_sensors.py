"""The worker's MJCF sensors (``unisim_isaacsim._sensors``) against MuJoCo's sensordata: MuJoCo's own
link states (poses, origin velocities, COM accelerations) fed in, MuJoCo's sensors expected."""

from __future__ import annotations

import numpy as np
import pytest

from unisim_core.plugin.mjcf_lite import load_mjcf
from unisim_core.scenes import scene_path
from unisim_isaacsim._sensors import SiteSensors

mujoco = pytest.importorskip("mujoco")


def _mujoco_tables(m, d):
    """What Isaac Lab's ArticulationData reports, computed by MuJoCo for the same state (world frame)."""
    nb = m.nbody
    pos, quat, com = d.xpos.copy(), d.xquat.copy(), d.xipos.copy()
    lin, ang, acc, alpha = (np.zeros((nb, 3)) for _ in range(4))
    res = np.zeros(6)
    for b in range(nb):
        mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_XBODY, b, res, 0)
        ang[b], lin[b] = res[:3], res[3:]
        mujoco.mj_objectAcceleration(m, d, mujoco.mjtObj.mjOBJ_BODY, b, res, 0)
        alpha[b], acc[b] = res[:3], res[3:] + m.opt.gravity  # MuJoCo's includes -g; PhysX's does not
    return {k: v[None] for k, v in dict(pos=pos, quat=quat, lin_vel=lin, ang_vel=ang, com=com, com_acc=acc,
                                        ang_acc=alpha).items()}


@pytest.mark.parametrize("name, steps", [("sensor_probe", 0), ("sensor_probe", 37), ("quadruped", 25)])
def test_sensors_equal_mujocos(name, steps):
    """A spinning, falling flyer with an offset COM and a tilted site, a swinging pendulum, and the
    quadruped kicked and stepped under random ctrl: every sensor equals MuJoCo's sensordata to 1e-9
    (frames, signs, the accelerometer's Coriolis and centripetal terms and its -g)."""
    from unisim_conformance import scene_path as kit_scene

    path = str(kit_scene(name) if name == "sensor_probe" else scene_path(name))
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(3)
    d.qvel[:] = rng.normal(size=m.nv)
    for _ in range(steps):
        d.ctrl[:] = rng.uniform(-1, 1, size=m.nu)
        mujoco.mj_step(m, d)
    mujoco.mj_forward(m, d)
    mujoco.mj_rnePostConstraint(m, d)
    lite = load_mjcf(path)
    got = SiteSensors(lite).read(qpos=d.qpos[None], qvel=d.qvel[None], gravity=m.opt.gravity, **_mujoco_tables(m, d))
    assert got.shape == (1, m.nsensordata)
    np.testing.assert_allclose(got[0], d.sensordata, rtol=1e-9, atol=1e-9)
    assert np.abs(d.sensordata).max() > 1.0  # a real state, not zeros
