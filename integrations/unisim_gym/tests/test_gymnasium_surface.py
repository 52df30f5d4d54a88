"""The gymnasium surface: registered ids and make_vec, list seeds, get_attr/set_attr/call, next-step
autoreset under gymnasium's vector wrappers, rgb_array rendering and RecordVideo, normalised actions."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers.vector import NormalizeObservation, RecordEpisodeStatistics, RecordVideo

from unisim_core import InvalidInputError
from unisim_core.contract.errors import UnsupportedCapabilityError
from unisim_gym import ANT_ID, QUADRUPED_ID, UniSimVectorEnv, VelocityTrackingCfg, VelocityTrackingTask

N = 3


def make_vec(env_id=ANT_ID, **kwargs):
    return gymnasium.make_vec(env_id, num_envs=N, vectorization_mode="vector_entry_point", **kwargs)


def test_ids_registered_at_import_and_forward_their_arguments():
    assert {ANT_ID, QUADRUPED_ID} <= set(gymnasium.registry)
    env = make_vec(QUADRUPED_ID, backend="motrix", episode_length_s=1.0, seed=2)
    try:
        assert isinstance(env, UniSimVectorEnv) and env.backend.name == "motrix" and env.num_envs == N
        assert env.task.cfg.episode_length_s == 1.0 and env.max_episode_steps == 50
        assert env.spec.id == QUADRUPED_ID and env.spec.kwargs["backend"] == "motrix"
    finally:
        env.close()
    with pytest.raises(TypeError, match="unknown argument.*'speed'"):
        make_vec(QUADRUPED_ID, speed=1.0)


def test_list_seeds_are_deterministic_and_checked():
    env = make_vec(backend="mujoco")
    try:
        a, _ = env.reset(seed=[0, 1, 2])
        b, _ = env.reset(seed=[0, 1, 2])
        c, _ = env.reset(seed=[0, 1, 3])
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, c)
        for bad in ([0, 1], [0, 1, -1], "012"):
            with pytest.raises(InvalidInputError, match="seed"):
                env.reset(seed=bad)
    finally:
        env.close()


def test_get_set_attr_and_call_per_env():
    env = make_vec(QUADRUPED_ID, backend="mujoco")
    try:
        env.reset(seed=0)
        assert env.get_attr("num_envs") == (N,) * N  # the env's own attribute, shared
        cmd = env.get_attr("commands")  # the task's per-env array: one row each
        assert len(cmd) == N and all(c.shape == (3,) for c in cmd)
        env.set_attr("commands", [[0.5, 0.0, 0.0], [0.0, 0.2, 0.0], [0.0, 0.0, 1.0]])
        np.testing.assert_array_equal(env.task.commands[:, :2], [[0.5, 0.0], [0.0, 0.2], [0.0, 0.0]])
        env.set_attr("commands", np.array([0.1, 0.0, 0.0]))  # one value (not a list): every row
        np.testing.assert_array_equal(env.task.commands[:, 0], [0.1] * N)
        with pytest.raises(InvalidInputError, match="shared by all 3 envs"):
            env.set_attr("decimation", [4, 4, 2])
        env.set_attr("decimation", [4, 4, 4])
        low, high = env.call("action_bounds")[0]
        np.testing.assert_allclose(low, env.single_action_space.low, rtol=1e-6)
        with pytest.raises(AttributeError, match="nope"):
            env.get_attr("nope")
    finally:
        env.close()


def test_next_step_autoreset_under_gymnasium_wrappers():
    """Episodes of 2 steps, next-step mode: step 2 returns the last observation (terminal data in the
    return values), step 3 the reset one with reward 0; NormalizeObservation accepts the mode and
    RecordEpisodeStatistics counts 2-step episodes."""
    base = make_vec(QUADRUPED_ID, backend="mujoco", autoreset_mode="next_step", max_episode_steps=2, randomize=False)
    env = NormalizeObservation(RecordEpisodeStatistics(base))
    try:
        assert base.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
        env.reset(seed=0)
        zero = np.zeros((N, 12), np.float32)
        _, _, terminated, truncated, _ = env.step(zero)
        assert not (terminated | truncated).any()
        last = base.task.observe()
        _, reward, terminated, truncated, info = env.step(zero)
        assert truncated.all() and not terminated.any() and "final_obs" not in info
        np.testing.assert_array_equal(info["episode"]["l"], [2] * N)
        np.testing.assert_array_equal(base.episode_length, [2] * N)
        _, reward, terminated, truncated, _ = env.step(np.ones((N, 12), np.float32))  # ignored: reset step
        assert (reward == 0).all() and not (terminated | truncated).any()
        assert (base.episode_length == 0).all() and not np.array_equal(base.task.observe(), last)
        np.testing.assert_array_equal(base.task.last_action, 0.0)  # the reset step's action was not applied
    finally:
        env.close()


@pytest.mark.parametrize("backend, env_id, kwargs", [("mujoco", ANT_ID, {"reset_noise_scale": 0.0}),
                                                     ("sapien", QUADRUPED_ID, {})])
def test_rgb_array_render_and_record_video_under_all_three_wrappers(tmp_path, backend, env_id, kwargs):
    """Every engine declares VIDEO_CAPTURE (MuJoCo's renderer draws the contract's state): render()
    gives one (H, W, 3) uint8 frame per env (the batch's composed view); the env under
    RecordVideo(NormalizeObservation(RecordEpisodeStatistics)) in next-step mode records a 3-step
    episode to mp4 and counts it: UniSim/Ant-v0 on MuJoCo, the quadruped on SAPIEN (an engine
    built from mjcf_lite, which refuses Ant's rk4 integrator)."""
    pytest.importorskip("moviepy", reason="RecordVideo needs moviepy: pip install 'unisim-gym[video]'")
    base = make_vec(env_id, backend=backend, render_mode="rgb_array", render_width=96, render_height=64,
                    autoreset_mode="next_step", max_episode_steps=3, **kwargs)
    zero = np.zeros((N, base.single_action_space.shape[0]), np.float32)
    env = RecordVideo(NormalizeObservation(RecordEpisodeStatistics(base)), str(tmp_path),
                      episode_trigger=lambda e: e == 0, record_first_only=True)
    try:
        frames = base.render()
        assert len(frames) == N and frames[0].shape == (64, 96, 3) and frames[0].dtype == np.uint8
        assert frames[0].std() > 0  # not a blank image
        env.reset(seed=0)
        for _ in range(3):
            _, _, _, truncated, info = env.step(zero)
        assert truncated.all() and info["episode"]["l"].tolist() == [3] * N
        assert env.env.obs_rms.count == pytest.approx(1e-4 + 4 * N)  # NormalizeObservation saw reset + 3 steps
        env.step(zero)  # the reset step ends the recording of episode 0
        env.step(zero)
    finally:
        env.close()
    videos = list(tmp_path.glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 0


def test_render_frames_of_a_known_state_equal_mujocos_on_other_engines():
    """render() on MotrixSim and SAPIEN draws what MuJoCo draws for the same state (a turned, raised
    quadruped with bent legs, written through the contract): the same pixels."""
    frames = {}
    for backend in ("mujoco", "motrix", "sapien"):
        env = make_vec(QUADRUPED_ID, backend=backend, render_mode="rgb_array", render_width=96, render_height=64)
        try:
            env.reset(seed=0)
            sim = env.backend
            qpos = np.tile(sim.get_default_qpos(), (N, 1))
            qpos[:, 2] += 0.3
            qpos[:, 3:7] = [np.cos(0.3), 0.0, np.sin(0.3) * 0.6, np.sin(0.3) * 0.8]
            qpos[:, 7:] = np.linspace(-0.5, 0.5, sim.nq - 7)
            sim.set_state(np.arange(N), qpos, np.zeros((N, sim.nv)))
            frames[backend] = env.render()[0]
        finally:
            env.close()
    for backend in ("motrix", "sapien"):
        np.testing.assert_array_equal(frames[backend], frames["mujoco"], err_msg=backend)


def test_render_refused_without_video_capture():
    with pytest.raises(UnsupportedCapabilityError, match="'fake'.*'video_capture'.*render_mode='rgb_array'"):
        make_vec(backend="fake", render_mode="rgb_array")
    with pytest.raises(InvalidInputError, match="render_mode"):
        make_vec(backend="mujoco", render_mode="human")
    with pytest.raises(InvalidInputError, match="autoreset_mode"):
        make_vec(backend="mujoco", autoreset_mode="disabled")


def test_normalized_action_space_maps_onto_the_task_box():
    env = UniSimVectorEnv(VelocityTrackingTask(VelocityTrackingCfg(randomize=False)), "mujoco", N,
                          normalize_actions=True)
    try:
        assert (env.single_action_space.low == -1).all() and (env.single_action_space.high == 1).all()
        ctrl_range = env.backend.get_actuator_ctrl_range()
        env.reset(seed=0)
        env.step(np.full((N, 12), -1.0, np.float32))
        np.testing.assert_allclose(env.task._ctrl[0], ctrl_range[:, 0], atol=1e-5)
        env.step(np.ones((N, 12), np.float32))
        np.testing.assert_allclose(env.task._ctrl[0], ctrl_range[:, 1], atol=1e-5)
    finally:
        env.close()


def test_velocity_task_observation_bounds():
    """Gravity in the base frame is a unit vector, the command lies in its ranges, the last action
    in the action box; the rest is unbounded."""
    env = UniSimVectorEnv(VelocityTrackingTask(), "mujoco", N)
    try:
        low, high = env.single_observation_space.low, env.single_observation_space.high
        np.testing.assert_array_equal(low[6:9], -1.0)
        np.testing.assert_array_equal(high[9:12], np.float32([0.8, 0.4, 1.0]))
        np.testing.assert_array_equal(low[36:], env.single_action_space.low)
        assert np.isinf(low[:6]).all() and np.isinf(high[12:36]).all()
        obs, _ = env.reset(seed=0)
        for _ in range(3):
            assert env.single_observation_space.contains(obs[0])
            obs, *_ = env.step(env.action_space.sample())
    finally:
        env.close()
