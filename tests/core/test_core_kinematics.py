"""The shared site Jacobian (``unisim_core.contract.kinematics``) equals MuJoCo's ``mj_jacSite`` to 1e-10 in
float64 on real chains: a fixed arm (hinges), the quadruped's foot (free root + hinges), ball joints,
slides, a body with three joints and welded bodies; and it needs the model tables it reads."""

from __future__ import annotations

import numpy as np
import pytest
from core_helpers import SCENES, make, write_scene

from unisim_core import SceneCfg
from unisim_core.contract.errors import UnsupportedCapabilityError
from unisim_core.contract.kinematics import site_jacobian

mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo's mj_jacSite")
unisim_mujoco = pytest.importorskip("unisim_mujoco", reason="the shared Jacobian is run over MuJoCo's body poses")


class SharedJacobian(unisim_mujoco.MujocoBackend):
    """MuJoCo's body poses, the core's Jacobian."""

    _site_jacobian = site_jacobian


CHAINS = """<worldbody>
  <body name="base" pos="0.1 0.2 0.8" euler="10 20 30"><freejoint/><geom type="box" size="0.2 0.1 0.05" mass="3"/>
    <body name="ball1" pos="0.2 0 0" euler="0 30 0"><joint name="b1" type="ball" pos="0.05 0 0.01"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="1"/>
      <body name="welded" pos="0.3 0 0" euler="40 0 0"><geom type="sphere" size="0.03" mass="0.2"/>
        <body name="multi" pos="0.1 0.05 0"><joint name="h1" axis="0 0 1" pos="0 0.02 0"/>
          <joint name="s1" type="slide" axis="1 1 0"/><joint name="h2" axis="1 0 0.3" pos="0.01 0 0.03"/>
          <geom type="box" size="0.05 0.05 0.05" mass="0.5"/>
          <body name="ball2" pos="0 0 0.1"><joint name="b2" type="ball" pos="0 0.02 0"/>
            <geom type="sphere" size="0.04" mass="0.3"/>
            <site name="tip" pos="0.03 -0.02 0.07" euler="5 6 7"/></body></body></body></body></body>
</worldbody>"""


def _reference(path, qpos, site):
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    out = []
    for q in qpos:
        d.qpos[:] = q
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        jacp, jacr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
        mujoco.mj_jacSite(m, d, jacp, jacr, site)
        out.append((jacp, jacr))
    return np.array([o[0] for o in out]), np.array([o[1] for o in out])


def _random_qpos(b, rng):
    info = b.model_info
    qpos = np.tile(info.qpos0, (b.num_envs, 1)) + rng.normal(0, 0.7, (b.num_envs, info.nq))
    for kind, a in zip(info.joint_types, info.joint_qposadr):
        if kind in ("free", "ball"):
            s = a + (3 if kind == "free" else 0)
            qpos[:, s:s + 4] /= np.linalg.norm(qpos[:, s:s + 4], axis=1, keepdims=True)
    return qpos


@pytest.mark.parametrize("scene,site", [("fixed_arm", "ee"), ("quadruped", "FL_foot"), ("chains", "tip")])
def test_shared_site_jacobian_equals_mj_jacsite(tmp_path, scene, site):
    path = write_scene(tmp_path, CHAINS) if scene == "chains" else SCENES[scene]
    b = SharedJacobian(SceneCfg(model_file=str(path)), 3, 0.002, np_dtype="float64")
    qpos = _random_qpos(b, np.random.default_rng(5))
    b.set_state(np.arange(3), qpos, np.zeros((3, b.nv)))
    sid = int(b.get_site_ids([site])[0])
    jacp, jacr = b.get_site_jacobian_w(sid, np.arange(b.nv))
    ref_p, ref_r = _reference(path, qpos, sid)
    np.testing.assert_allclose(jacp, ref_p, atol=1e-10, err_msg="jacp")
    np.testing.assert_allclose(jacr, ref_r, atol=1e-10, err_msg="jacr")
    cols = np.array([b.nv - 1, 0])
    sub_p, sub_r = b.get_site_jacobian_w(sid, cols)
    np.testing.assert_array_equal(sub_p, jacp[:, :, cols])
    np.testing.assert_array_equal(sub_r, jacr[:, :, cols])


def test_the_fake_uses_it_and_needs_the_tables(tmp_path):
    """The lite-based fake's Jacobian of the arm equals MuJoCo's (the fake's own forward kinematics,
    the lite tables); a ModelInfo without joint anchors is refused naming what is missing."""
    b = make("fixed_arm", 2)
    qpos = _random_qpos(b, np.random.default_rng(2))
    b.set_state(np.arange(2), qpos, np.zeros((2, 4)))
    jacp, jacr = b.get_site_jacobian_w(0, np.arange(4))
    ref_p, ref_r = _reference(SCENES["fixed_arm"], qpos, 0)
    np.testing.assert_allclose(jacp, ref_p, atol=1e-12)
    np.testing.assert_allclose(jacr, ref_r, atol=1e-12)
    import attrs

    b._info = attrs.evolve(b.model_info, joint_pos=None)
    b.__dict__.pop("_site_jacobian_chains", None)
    with pytest.raises(UnsupportedCapabilityError, match="lacks \\['joint_pos'\\]"):
        b.get_site_jacobian_w(0, np.arange(4))
