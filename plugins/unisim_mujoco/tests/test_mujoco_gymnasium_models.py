"""The MJCF models shipped inside the gymnasium wheel load and roll out finitely."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

gym_mujoco = pytest.importorskip("gymnasium.envs.mujoco")
ASSETS = Path(gym_mujoco.__file__).parent / "assets"

# model: (nq, nv, nu, free root)
MODELS = {"ant": (15, 14, 8, True), "humanoid": (24, 23, 17, True), "half_cheetah": (9, 9, 6, False),
          "hopper": (6, 6, 3, False), "walker2d": (9, 9, 6, False)}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_gymnasium_model_rollout(make, name):
    nq, nv, nu, free = MODELS[name]
    sim = make(ASSETS / f"{name}.xml", num_envs=2, sim_dt=0.005, np_dtype=np.float32)
    assert (sim.nq, sim.nv, sim.num_actuators) == (nq, nv, nu)
    rng = np.random.default_rng(0)
    low, high = sim.get_actuator_ctrl_range().T
    for _ in range(50):
        sim.step(rng.uniform(low, high, (2, nu)).astype(np.float32), 1)
    ndof = nq - 7 if free else nq
    for arr, shape in ((sim.get_base_pos(), (2, 3)), (sim.get_base_quat(), (2, 4)),
                       (sim.get_base_lin_vel(), (2, 3)), (sim.get_base_ang_vel(), (2, 3)),
                       (sim.get_dof_pos(), (2, ndof)), (sim.get_dof_vel(), (2, nv - 6 if free else nv))):
        assert arr.shape == shape and arr.dtype == np.float32 and np.isfinite(arr).all()
    np.testing.assert_allclose(np.linalg.norm(sim.get_base_quat(), axis=1), 1.0, rtol=1e-5)
    assert not np.array_equal(sim.get_qpos()[0], sim.get_qpos()[1])  # different random controls
