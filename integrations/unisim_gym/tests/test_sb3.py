"""SB3VecEnv against Stable-Baselines3's own checks, and a short PPO.learn on MuJoCo under VecNormalize/VecMonitor."""

from __future__ import annotations

import numpy as np
import pytest

sb3 = pytest.importorskip("stable_baselines3", reason="needs the sb3 extra: pip install 'unisim-gym[sb3]'")

from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.env_checker import _check_box_obs, _check_obs, _check_unsupported_spaces  # noqa: E402
from stable_baselines3.common.utils import check_for_correct_spaces  # noqa: E402
from stable_baselines3.common.vec_env import VecCheckNan, VecEnv, VecMonitor, VecNormalize  # noqa: E402

from unisim_core import InvalidInputError  # noqa: E402
from unisim_gym import AntCfg, AntTask, SB3VecEnv, UniSimVectorEnv  # noqa: E402

N = 3


def make(steps=3, **kwargs):
    return SB3VecEnv(UniSimVectorEnv(AntTask(AntCfg(max_episode_steps=steps)), "mujoco", N, **kwargs))


def test_sb3_checks_and_terminal_observations():
    """SB3's space and observation checks; a truncated episode hands SB3 its terminal observation and
    TimeLimit.truncated, the returned row already starts the next episode; VecCheckNan finds nothing."""
    env = make()
    try:
        assert isinstance(env, VecEnv) and env.num_envs == N
        assert not _check_unsupported_spaces(env, env.observation_space, env.action_space)  # gymnasium.Env-free
        _check_box_obs(env.observation_space)
        check_for_correct_spaces(env, env.env.single_observation_space, env.env.single_action_space)
        checked = VecCheckNan(env, raise_exception=True)
        env.seed(5)
        obs = checked.reset()
        for row in obs:
            _check_obs(row, env.observation_space, "reset")
        for _ in range(3):
            obs, reward, dones, infos = checked.step(np.zeros((N, 8), np.float32))
            assert reward.dtype == np.float32 and dones.dtype == np.bool_ and len(infos) == N
            for row in obs:
                _check_obs(row, env.observation_space, "step")
        assert dones.all() and all(info["TimeLimit.truncated"] for info in infos)
        assert all(info["terminal_observation"].shape == (27,) and not info["diverged"] for info in infos)
        assert not np.array_equal(infos[0]["terminal_observation"], obs[0])  # obs[0] is the new episode's
    finally:
        env.close()


def test_seed_reaches_reset_as_per_env_seeds():
    a, b = make(), make()
    try:
        a.seed(3)
        b.seed(3)
        np.testing.assert_array_equal(a.reset(), b.reset())
        b.seed(4)
        assert not np.array_equal(a.reset(), b.reset())  # a: unseeded generator goes on; b: a new seed
        a.seed(4)
        np.testing.assert_array_equal(a.reset(), make_and_reset(4))
    finally:
        a.close()
        b.close()


def make_and_reset(seed):
    env = make()
    try:
        env.seed(seed)
        return env.reset()
    finally:
        env.close()


def test_attributes_methods_and_indices():
    env = make()
    try:
        env.reset()
        assert env.get_attr("max_episode_steps") == [3] * N
        with pytest.raises(InvalidInputError, match="public attribute"):
            env.get_attr("_xy")
        env.set_attr("episode_length", 2, indices=[1])  # a per-env array: only row 1 changes
        assert env.env.episode_length.tolist() == [0, 2, 0]
        with pytest.raises(InvalidInputError, match="shared by all 3 envs"):
            env.set_attr("decimation", 2, indices=[0])
        lows = env.env_method("action_bounds", indices=[0, 2])
        assert len(lows) == 2 and lows[0][0].shape == (8,)
        assert env.env_is_wrapped(VecMonitor) == [False] * N
        with pytest.raises(InvalidInputError, match="indices"):
            env.get_attr("num_envs", indices=[3])
    finally:
        env.close()


def test_next_step_env_refused():
    with pytest.raises(InvalidInputError, match="same-step"):
        SB3VecEnv(UniSimVectorEnv(AntTask(), "mujoco", 1, autoreset_mode="next_step"))


def test_short_ppo_learn_under_vecnormalize_and_vecmonitor():
    """PPO.learn(256) on the MuJoCo ant, 3 envs x 64 steps per rollout (two rollouts): VecMonitor records
    the 20-step episodes (or shorter ones that fell), VecNormalize's running statistics saw every
    observation, the policy moved."""
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)  # a tiny MLP: more threads only contend with the engine (30 s instead of 2 s here)
    env = VecNormalize(VecMonitor(make(steps=20, backend_options={"threads": 1})), norm_obs=True, norm_reward=True)
    try:
        model = PPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=2, seed=0, device="cpu",
                    policy_kwargs={"net_arch": [32, 32]})
        before = [p.detach().clone() for p in model.policy.parameters()]
        model.learn(total_timesteps=256)
        assert model.num_timesteps == 64 * N * 2  # two rollouts of n_steps x N cover 256 steps
        lengths = [ep["l"] for ep in model.ep_info_buffer]
        assert lengths and all(1 <= n <= 20 for n in lengths) and 20 in lengths
        assert env.obs_rms.count == pytest.approx(1e-4 + N * (1 + 64 * 2))  # reset + every step
        assert any(not np.allclose(b.numpy(), p.detach().numpy()) for b, p in zip(before, model.policy.parameters()))
    finally:
        env.close()
