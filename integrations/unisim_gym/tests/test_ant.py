"""UniSim/Ant-v0 and v1 against gymnasium's own Ant-v5 on MuJoCo, step by step from the same state and actions.

Both step the same ``ant.xml`` with MuJoCo (RK4, 0.01 s, frame skip 5), so the physics is the same
arithmetic: observations are compared for exact equality after the float32 cast the vector env
makes (gymnasium's are float64). Rewards: the control and survival terms and the termination agree
(within float32 rounding, 1e-6: the env returns float32). The forward term is the torso's x
displacement over the step / 0.05 s; gymnasium reads ``data.xpos`` after ``mj_step``, which MuJoCo
leaves at an intermediate RK4 stage's kinematics rather than the final state, so its ``reward_forward``
is compared with the displacement computed from gymnasium's own ``qpos`` (the true one) instead.
With the contact terms (``UniSim/Ant-v1``), ``cfrc_ext`` is compared with MuJoCo's at the state the
step reached: gymnasium's data after one more ``mj_forward`` + ``mj_rnePostConstraint`` (its own
comes from what ``mj_step`` left: the last RK4 stage of the last substep).
"""

from __future__ import annotations

import copy

import gymnasium
import numpy as np
import pytest

import unisim_mujoco  # noqa: F401 - before gymnasium's Ant imports mujoco: it picks EGL on a headless machine
from unisim_core import Capability
from unisim_core.contract.errors import UnsupportedCapabilityError
from unisim_gym import ANT_CONTACT_ID, ANT_ID, AntCfg, AntTask, UniSimVectorEnv

N = 2  # gymnasium envs, one per row of the vector env
STEPS = 60


def _gym_ants(seeds, contact_terms=False):
    kwargs = {} if contact_terms else {"include_cfrc_ext_in_observation": False, "contact_cost_weight": 0.0}
    envs = [gymnasium.make("Ant-v5", **kwargs) for _ in seeds]
    states = []
    for g, s in zip(envs, seeds):
        g.reset(seed=s)
        u = g.unwrapped
        qpos, qvel = u.data.qpos.copy(), u.data.qvel.copy()
        qpos[3:7] /= np.linalg.norm(qpos[3:7])  # the contract's unit quaternion, given to both
        u.set_state(qpos, qvel)
        states.append((qpos, qvel))
    return envs, np.array([q for q, _ in states]), np.array([v for _, v in states])


@pytest.fixture
def pair():
    gyms, qpos, qvel = _gym_ants([3, 4])
    env = UniSimVectorEnv(AntTask(), "mujoco", N, autoreset_mode="next_step")
    env.reset(seed=0)
    env.backend.set_state(np.arange(N), qpos, qvel)
    yield gyms, env
    env.close()
    for g in gyms:
        g.close()


def test_step_by_step_agreement_with_gymnasium_ant_v5(pair):
    """Random actions in [-1, 1] until an episode ends (both sides must end it at the same step)."""
    gyms, env = pair
    np.testing.assert_array_equal(env.task.observe(),
                                  np.array([g.unwrapped._get_obs() for g in gyms], dtype=np.float32))
    rng = np.random.default_rng(0)
    live, compared = [True] * N, 0
    for t in range(STEPS):
        action = rng.uniform(-1, 1, (N, 8)).astype(np.float32)
        x_before = np.array([g.unwrapped.data.qpos[0] for g in gyms])
        obs, reward, terminated, truncated, info = env.step(action)
        for i, g in enumerate(gyms):
            if not live[i]:
                continue
            g_obs, g_reward, g_term, _, g_info = g.step(action[i])
            np.testing.assert_array_equal(obs[i], g_obs.astype(np.float32), err_msg=f"step {t}, env {i}")
            assert terminated[i] == g_term, f"step {t}, env {i}"
            terms = info["reward_terms"]
            np.testing.assert_allclose(terms["reward_ctrl"][i], g_info["reward_ctrl"], rtol=1e-6)
            assert terms["reward_survive"][i] == g_info["reward_survive"]
            true_forward = (g.unwrapped.data.qpos[0] - x_before[i]) / g.unwrapped.dt
            np.testing.assert_allclose(terms["reward_forward"][i], true_forward, rtol=1e-5, atol=1e-6)
            expected = g_reward - g_info["reward_forward"] + true_forward
            np.testing.assert_allclose(reward[i], expected, rtol=1e-5, atol=1e-5)
            compared += 1
            live[i] = not g_term
        if not any(live):
            break
    assert compared >= 40, compared


def test_unhealthy_height_terminates_like_ant_v5(pair):
    """A root above healthy_z_range's 1.0 m: both terminate at once, with no survival reward."""
    gyms, env = pair
    qpos, qvel = gyms[0].unwrapped.data.qpos.copy(), gyms[0].unwrapped.data.qvel.copy()
    qpos[2] = 1.3
    gyms[0].unwrapped.set_state(qpos, qvel)
    env.backend.set_state(np.array([0]), qpos[None], qvel[None])
    action = np.zeros((N, 8), np.float32)
    obs, reward, terminated, _, info = env.step(action)
    g_obs, g_reward, g_term, _, g_info = gyms[0].step(action[0])
    assert g_term and terminated.tolist() == [True, False]
    np.testing.assert_array_equal(obs[0], g_obs.astype(np.float32))
    assert info["reward_terms"]["reward_survive"][0] == g_info["reward_survive"] == 0.0
    env.step(action)  # next-step autoreset: env 0 starts a new episode
    assert env.episode_length.tolist() == [0, 2]


def test_reset_distribution_is_ant_v5s():
    """qpos0 + U(-0.1, 0.1) per coordinate (quaternion then normalised), qvel 0.1 * N(0, 1)."""
    env = UniSimVectorEnv(AntTask(), "mujoco", 256)
    try:
        env.reset(seed=1)
        qpos, qvel, qpos0 = env.backend.get_qpos(), env.backend.get_qvel(), env.task.qpos0
        joints = qpos[:, 7:] - qpos0[7:]
        assert np.abs(joints).max() <= 0.1 and np.abs(joints).max() > 0.09
        assert abs(float(joints.mean())) < 0.01  # uniform: mean 0, sd 0.058 / sqrt(2048)
        np.testing.assert_allclose(np.linalg.norm(qpos[:, 3:7], axis=1), 1.0, atol=1e-6)
        assert np.abs(qpos[:, 2] - 0.75).max() <= 0.1
        assert 0.09 < float(qvel.std()) < 0.11 and abs(float(qvel.mean())) < 0.01  # 3584 draws of N(0, 0.01)
    finally:
        env.close()


def test_spaces_and_registry():
    env = gymnasium.make_vec(ANT_ID, num_envs=2, vectorization_mode="vector_entry_point", backend="mujoco",
                             reset_noise_scale=0.0)
    try:
        assert env.single_observation_space.shape == (27,) and env.single_action_space.shape == (8,)
        np.testing.assert_array_equal(env.single_action_space.low, -1.0)
        low, high = env.single_observation_space.low, env.single_observation_space.high
        assert (low[1:5] == -1).all() and (high[1:5] == 1).all() and np.isinf(low[[0, 5]]).all()
        assert env.max_episode_steps == 1000 and env.task.dt == pytest.approx(0.05)
        obs, _ = env.reset(seed=0)
        np.testing.assert_allclose(obs[:, 0], 0.75)  # qpos0 exactly without noise
    finally:
        env.close()


def test_contact_terms_refused_by_name():
    """A backend without contact_torques (MuJoCo with it taken away) refuses Ant-v5's contact
    terms when the env is built, naming the capability."""
    from unisim_mujoco import MujocoBackend

    class NoContactTorques(MujocoBackend):
        CAPABILITIES = MujocoBackend.CAPABILITIES - {Capability.CONTACT_TORQUES}

    with pytest.raises(UnsupportedCapabilityError, match="contact_torques.*AntCfg.contact_forces=True"):
        UniSimVectorEnv(AntTask(AntCfg(contact_forces=True)), NoContactTorques, 1)
    with pytest.raises(TypeError, match="unknown argument.*include_cfrc_ext_in_observation"):
        gymnasium.make_vec(ANT_ID, num_envs=1, vectorization_mode="vector_entry_point",
                           include_cfrc_ext_in_observation=True)
    with pytest.raises(ValueError, match="healthy_z_range"):
        AntCfg(healthy_z_range=(1.0, 0.2))


def test_contact_terms_match_gymnasium_ant_v5():
    """UniSim/Ant-v1 (Ant-v5's defaults: cfrc_ext[1:] in a 105-value observation, the contact cost)
    against two default Ant-v5 envs, the same seeded states and 60 random actions (float32 reads,
    the vector env's default). Known answer: MuJoCo's cfrc_ext at the state the step reached, i.e.
    gymnasium's data after one more mj_forward + mj_rnePostConstraint on a copy; UniSim's within
    1e-6 of its largest value (measured 5.6e-8 with float32 reads, 7e-16 with float64) and in the
    observation after the float32 cast; the reward equals gymnasium's control, forward (the true
    one, see above) and survival terms minus 5e-4 * sum(clip(cfrc_ext, -1, 1)^2) of that cfrc_ext.
    The qpos/qvel part of the observation stays equal bit for bit. gymnasium's own contact cost
    (the last RK4 stage's) is only compared in aggregate: per step it is a different state."""
    import mujoco

    gyms, qpos, qvel = _gym_ants([3, 4], contact_terms=True)
    env = gymnasium.make_vec(ANT_CONTACT_ID, num_envs=N, vectorization_mode="vector_entry_point", backend="mujoco",
                             autoreset_mode="next_step")
    try:
        assert env.single_observation_space.shape == (105,)
        env.reset(seed=0)
        env.backend.set_state(np.arange(N), qpos, qvel)
        obs = env.task.observe()  # the torso's position before the first step (the forward term)
        np.testing.assert_array_equal(obs[:, 27:], 0.0)  # reset envs: no contact force has acted yet
        rng = np.random.default_rng(0)
        live, compared, ours, theirs = [True] * N, 0, [], []
        for t in range(STEPS):
            action = rng.uniform(-1, 1, (N, 8)).astype(np.float32)
            x_before = np.array([g.unwrapped.data.qpos[0] for g in gyms])
            obs, reward, terminated, _, info = env.step(action)
            for i, g in enumerate(gyms):
                if not live[i]:
                    continue
                g_obs, g_reward, g_term, _, g_info = g.step(action[i])
                u = g.unwrapped
                d = copy.copy(u.data)
                mujoco.mj_forward(u.model, d)
                mujoco.mj_rnePostConstraint(u.model, d)
                want = d.cfrc_ext
                got = env.task.cfrc_ext[i]
                np.testing.assert_allclose(got, want, rtol=0, atol=1e-6 * np.abs(want).max(), err_msg=f"step {t}")
                np.testing.assert_array_equal(obs[i][:27], g_obs[:27].astype(np.float32), err_msg=f"step {t}")
                np.testing.assert_allclose(obs[i][27:], want[1:].ravel(), rtol=0, atol=1e-6 * np.abs(want).max())
                cost = 5e-4 * np.sum(np.square(np.clip(want, -1.0, 1.0)))
                terms = info["reward_terms"]
                np.testing.assert_allclose(terms["reward_contact"][i], -cost, rtol=1e-5, atol=1e-9)
                true_forward = (u.data.qpos[0] - x_before[i]) / u.dt
                expected = g_info["reward_ctrl"] + true_forward + g_info["reward_survive"] - cost
                np.testing.assert_allclose(reward[i], expected, rtol=1e-5, atol=1e-5)
                assert terminated[i] == g_term, f"step {t}, env {i}"
                ours.append(cost)
                theirs.append(-g_info["reward_contact"])
                compared += 1
                live[i] = not g_term
            if not any(live):
                break
        assert compared >= 40, compared
        assert np.count_nonzero(ours) >= 20  # the ant lands after ~0.5 s: the cost is not trivially 0
        # gymnasium's own cost is the last RK4 stage's: close in aggregate (measured in docs/gym.md)
        assert abs(np.mean(ours) - np.mean(theirs)) <= 0.25 * np.mean(ours), (np.mean(ours), np.mean(theirs))
    finally:
        env.close()
        for g in gyms:
            g.close()
