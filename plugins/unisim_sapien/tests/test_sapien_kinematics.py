"""The shared site Jacobian on PhysX's link poses, against PhysX's own link velocities."""

from __future__ import annotations

import numpy as np

from unisim_conformance import scene_path
from unisim_core import SceneCfg, create_backend
from unisim_core.contract import quat as Q


def test_site_jacobian_times_qvel_is_the_site_velocity_physx_reports():
    """Quadruped (free root, 12 hinges), 2 envs in random joint poses and velocities: ``jacp @ qvel`` is the
    foot site's world velocity and ``jacr @ qvel`` its link's angular velocity, as PhysX reports them for the
    link (COM velocity moved to the site, v + w x r), within float32 (1e-5 m/s)."""
    b = create_backend("sapien", SceneCfg(str(scene_path("quadruped")), default_keyframe="home"), 2, 0.002)
    rng = np.random.default_rng(0)
    qpos = b.get_qpos().astype(np.float64)
    qpos[:, 7:] += rng.normal(0.0, 0.3, qpos[:, 7:].shape)
    qvel = rng.normal(0.0, 1.0, (2, b.nv))
    b.set_state(np.arange(2), qpos, qvel)
    qvel = b.get_qvel().astype(np.float64)  # as PhysX holds it (float32)
    for name in ("FL_foot", "RR_foot"):
        site = int(b.get_site_ids([name])[0])
        body = np.array([b.model_info.site_body[site]])
        jacp, jacr = b.get_site_jacobian_w(site, np.arange(b.nv))
        quat = b.get_body_quat_w(body)[:, 0]
        v, w = b.get_body_lin_vel_w(body)[:, 0], b.get_body_ang_vel_w(body)[:, 0]
        arm = Q.quat_apply(quat.astype(np.float64), np.broadcast_to(b.model_info.site_pos[site], (2, 3)))
        site_v = v + np.cross(w, arm)
        assert np.abs(site_v).max() > 1.0  # a fast-moving foot: the comparison means something
        np.testing.assert_allclose(np.einsum("nij,nj->ni", jacp, qvel), site_v, atol=1e-5)
        np.testing.assert_allclose(np.einsum("nij,nj->ni", jacr, qvel), w, atol=1e-5)
