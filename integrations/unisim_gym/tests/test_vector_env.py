"""UniSimVectorEnv on real engines: gymnasium's own checks, same-step autoreset, spaces, divergence."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_space_limit, data_equivalence
from gymnasium.utils.passive_env_checker import check_obs, data_shares_objects, env_reset_passive_checker
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers.vector import RecordEpisodeStatistics

from unisim_core import InvalidInputError
from unisim_core.contract.errors import DivergenceError
from unisim_gym import UniSimVectorEnv, VelocityTrackingCfg, VelocityTrackingTask
from unisim_mujoco import MujocoBackend

N = 4


def make(backend="mujoco", num_envs=N, seed=0, **cfg):
    return UniSimVectorEnv(VelocityTrackingTask(VelocityTrackingCfg(**cfg)), backend, num_envs, seed=seed)


@pytest.fixture
def env():
    e = make()
    yield e
    e.close()


def rollout(env, actions):
    out = [env.reset(seed=7)]
    out += [env.step(a) for a in actions]
    return out


def test_gymnasium_checks(env):
    """gymnasium's passive checks on reset and step, its space-limit check, and the batch layout.

    The space check's two advisories are expected by design: the action box is the actuators' ctrl
    range (not symmetric), the observation box unbounded."""
    with pytest.warns(UserWarning, match="symmetric and normalized"):
        check_space_limit(env.single_action_space, "action")
    with pytest.warns(UserWarning, match="infinity"):
        check_space_limit(env.single_observation_space, "observation")
    assert env.action_space.shape == (N, 12) and env.observation_space.shape == (N, 48)
    obs, info = env_reset_passive_checker(env, seed=1)
    assert isinstance(info, dict) and obs.dtype == np.float32
    env.action_space.seed(0)
    for _ in range(3):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        check_obs(obs, env.observation_space, "step")
        assert reward.shape == (N,) and reward.dtype == np.float32
        assert terminated.dtype == truncated.dtype == np.bool_ and terminated.shape == truncated.shape == (N,)
        assert isinstance(info, dict)


def test_reset_and_step_determinism():
    """gymnasium's determinism checks, batched: same seed and actions give identical data."""
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, (5, N, 12)).astype(np.float32)
    a, b = make(), make()
    try:
        assert data_equivalence(rollout(a, actions), rollout(b, actions), exact=True)
        other, _ = a.reset(seed=8)
        first, _ = a.reset(seed=7)
        assert not np.array_equal(other, first)  # the seed reaches commands and reset noise
    finally:
        a.close()
        b.close()


def test_returned_data_not_reused(env):
    obs1, _ = env.reset(seed=0)
    obs2, *_ = env.step(np.zeros((N, 12), np.float32))
    assert not data_shares_objects(obs1, obs2)


def test_action_space_from_ctrl_range(env):
    """The action box maps exactly onto the actuators' ctrl ranges; zero is the keyframe."""
    task, lo, hi = env.task, env.single_action_space.low, env.single_action_space.high
    ctrl_range = env.backend.get_actuator_ctrl_range()
    np.testing.assert_allclose(task.ctrl_from_action(np.tile(lo, (N, 1)))[0], ctrl_range[:, 0], atol=1e-5)
    np.testing.assert_allclose(task.ctrl_from_action(np.tile(hi, (N, 1)))[0], ctrl_range[:, 1], atol=1e-5)
    home = env.backend.get_keyframe_qpos("home")[7:]
    np.testing.assert_allclose(task.ctrl_from_action(np.zeros((N, 12)))[0], home, atol=1e-6)


def test_observation_at_reset_known_answer():
    """Without reset noise the robot stands still in the keyframe pose: gravity (0, 0, -1) in the base
    frame, zero velocities, joint offsets and last action; the command lies in its ranges."""
    e = make(joint_pos_noise=0.0, root_vel_noise=0.0, randomize=False)
    try:
        obs, _ = e.reset(seed=3)
        np.testing.assert_allclose(obs[:, 6:9], np.tile([0.0, 0.0, -1.0], (N, 1)), atol=1e-6)
        np.testing.assert_allclose(obs[:, 0:6], 0.0, atol=1e-6)
        np.testing.assert_allclose(obs[:, 12:], 0.0, atol=1e-6)
        cfg = e.task.cfg
        for col, (low, high) in zip(range(9, 12), (cfg.lin_vel_x, cfg.lin_vel_y, cfg.ang_vel_z)):
            assert np.all((obs[:, col] >= low) & (obs[:, col] <= high))
    finally:
        e.close()


def test_same_step_autoreset_and_truncation():
    """Episodes of 3 control steps: the 3rd step truncates every env, returns the next episode's first
    observation and the ended one's last in info["final_obs"]; gymnasium's episode statistics agree."""
    e = RecordEpisodeStatistics(make(episode_length_s=0.06, randomize=False))
    try:
        assert e.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
        e.reset(seed=0)
        zero = np.zeros((N, 12), np.float32)
        for _ in range(2):
            _, _, terminated, truncated, info = e.step(zero)
            assert not (terminated | truncated).any() and "final_obs" not in info
        obs, _, terminated, truncated, info = e.step(zero)
        assert truncated.all() and not terminated.any()
        assert info["_final_obs"].all() and all(o.shape == (48,) for o in info["final_obs"])
        assert not info["final_info"]["diverged"].any()
        np.testing.assert_array_equal(info["episode"]["l"], [3] * N)
        np.testing.assert_array_equal(obs[:, 36:], 0.0)  # a new episode: no last action yet
        assert (e.unwrapped.episode_length == 0).all()
    finally:
        e.close()


def test_tilt_terminates(env):
    """An upside-down base ends its episode (terminated, termination penalty), the others go on."""
    env.reset(seed=0)
    b = env.backend
    qpos, qvel = b.get_qpos()[:1].astype(np.float64), b.get_qvel()[:1].astype(np.float64)
    qpos[0, 2], qpos[0, 3:7] = 0.5, [0.0, 1.0, 0.0, 0.0]  # 180 degrees about x, well above the floor
    b.set_state(np.array([0]), qpos, qvel)
    _, _, terminated, truncated, info = env.step(np.zeros((N, 12), np.float32))
    np.testing.assert_array_equal(terminated, [True, False, False, False])
    assert info["reward_terms"]["termination"][0] == env.task.weights["termination"]
    assert env.episode_length[0] == 0 and (env.episode_length[1:] == 1).all()


def test_backend_by_class_or_name_same_start():
    """The backend is one argument (a class or a name); the reset observation is engine-independent."""
    a, b = make(MujocoBackend), make("motrix")
    try:
        np.testing.assert_allclose(a.reset(seed=4)[0], b.reset(seed=4)[0], atol=1e-5)
    finally:
        a.close()
        b.close()


@pytest.mark.parametrize(("field", "value"), [
    ("lin_vel_x", (1.0, -1.0)), ("decimation", 2.5), ("push_force", -1.0), ("friction_scale", (0.5, float("nan"))),
    ("reward_weights", {"speed": 1})])
def test_cfg_rejects_bad_values_naming_the_field(field, value):
    with pytest.raises(ValueError, match=field if field != "reward_weights" else "unknown terms"):
        VelocityTrackingCfg(**{field: value})


def test_bad_actions_rejected_before_stepping(env):
    env.reset(seed=0)
    for bad in (np.zeros((N, 11), np.float32), np.full((N, 12), np.nan, np.float32)):
        with pytest.raises(InvalidInputError, match="actions"):
            env.step(bad)
    assert (env.episode_length == 0).all()


def test_randomization_through_the_contract(env):
    """MuJoCo declares friction and mass reset terms and PUSH: each episode draws its own friction
    scale (floor and feet together) and base mass within the configured ranges."""
    assert env.task.dr_terms == ("geom_friction:reset", "body_mass:reset", "push:push_robots")
    env.reset(seed=0)
    b, cfg = env.backend, env.task.cfg
    floor, foot = b.get_geom_id("floor"), b.get_geom_id("FL_foot_geom")
    mu = b.get_model_field("geom_friction")[:, [floor, foot], 0]
    np.testing.assert_allclose(mu[:, 0], mu[:, 1])  # nominal 1.0 on both
    triple = b.get_model_field("geom_friction")[:, foot]  # sliding, torsional, rolling scaled by one factor
    np.testing.assert_allclose(triple / triple[:, :1], np.broadcast_to(triple[:1] / triple[:1, :1], triple.shape))
    assert np.all((mu >= cfg.friction_scale[0]) & (mu <= cfg.friction_scale[1])) and np.ptp(mu[:, 0]) > 0
    added = b.get_model_field("body_mass")[:, b.base_body_id] - b.get_body_mass()[b.base_body_id]
    assert np.all((added >= cfg.base_mass_add[0] - 1e-5) & (added <= cfg.base_mass_add[1] + 1e-5))


def _diverge(env, i: int) -> None:
    """Give env ``i`` a root speed at the engine's bound: MuJoCo's next step diverges."""
    b = env.backend
    qpos, qvel = b.get_qpos()[[i]].astype(np.float64), b.get_qvel()[[i]].astype(np.float64)
    qvel[0, 0] = b.MAX_ABS_VALUE
    b.set_state(np.array([i]), qpos, qvel)


def test_diverged_env_ends_its_episode_not_the_run(env):
    """The env asks for divergence="reset": the diverged env is terminated with a zero reward,
    flagged in final_info and restarted; the others and the run go on."""
    assert env.backend.options.divergence == "reset"
    env.reset(seed=0)
    zero = np.zeros((N, 12), np.float32)
    env.step(zero)
    _diverge(env, 1)
    obs, reward, terminated, _, info = env.step(zero)
    np.testing.assert_array_equal(terminated, [False, True, False, False])
    assert info["final_info"]["diverged"].tolist() == [False, True, False, False] and reward[1] == 0.0
    np.testing.assert_array_equal(info["final_obs"][1], 0.0)
    assert np.isfinite(obs).all() and env.episode_length.tolist() == [2, 0, 2, 2]
    env.step(zero)  # the run goes on
    assert env.backend.get_divergence_counts().tolist() == [0, 1, 0, 0]


def test_divergence_raise_policy_stops_the_run():
    e = UniSimVectorEnv(VelocityTrackingTask(), "mujoco", N, backend_options={"divergence": "raise"})
    try:
        e.reset(seed=0)
        _diverge(e, 2)
        with pytest.raises(DivergenceError) as info:
            e.step(np.zeros((N, 12), np.float32))
        assert info.value.env_ids == (2,)
    finally:
        e.close()
