"""TorchVecEnv: tensors on the backend's device; zero-copy DLPack state where the backend declares
DEVICE_ARRAYS (MuJoCo Warp, here on warp's CPU device); RslRlVecEnv takes a device."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs the rslrl extra: pip install 'unisim-gym[rslrl]'")

from unisim_core import Capability, InvalidInputError  # noqa: E402
from unisim_gym import AntTask, RslRlVecEnv, TorchVecEnv, UniSimVectorEnv  # noqa: E402

N = 2


def test_tensors_on_the_cpu_without_device_arrays():
    """MuJoCo has no DEVICE_ARRAYS: device "cpu", observations share the env's returned array, state
    holds copies equal to the getters."""
    env = TorchVecEnv(UniSimVectorEnv(AntTask(), "mujoco", N))
    try:
        assert env.device == torch.device("cpu") and not env.zero_copy
        obs, _ = env.reset(seed=0)
        assert obs.dtype == torch.float32 and obs.shape == (N, 27)
        obs, reward, terminated, truncated, _ = env.step(torch.zeros(N, 8))
        assert reward.dtype == torch.float32 and terminated.dtype == truncated.dtype == torch.bool
        np.testing.assert_array_equal(obs.numpy()[:, 0], env.env.backend.get_qpos()[:, 2])
        state = env.state
        np.testing.assert_array_equal(state["qvel"].numpy(), env.env.backend.get_qvel())
        assert state["body_quat_w"].shape == (N, env.env.backend.num_bodies, 4)
    finally:
        env.close()


@pytest.fixture(scope="module")
def mjwarp_env():
    pytest.importorskip("unisim_mjwarp", reason="needs unisim-mjwarp")
    env = UniSimVectorEnv(AntTask(), "mjwarp", N)
    yield env
    env.close()


def test_zero_copy_state_views_on_mjwarp(mjwarp_env):
    """The state tensors are DLPack views of MuJoCo Warp's own buffers: same memory, and live (after
    a step they hold the new state without another call)."""
    backend = mjwarp_env.backend
    assert Capability.DEVICE_ARRAYS in backend.capabilities
    env = TorchVecEnv(mjwarp_env)
    assert env.zero_copy and env.device == torch.device(backend.get_device_arrays().device)
    env.reset(seed=0)
    qpos = env.state["qpos"]
    assert qpos.data_ptr() == backend.get_device_arrays().qpos.ptr  # the engine's buffer itself
    before = qpos.clone()
    env.step(torch.full((N, 8), 0.5))
    assert not torch.equal(before, qpos)
    np.testing.assert_array_equal(qpos.numpy(), backend.get_qpos().astype(qpos.numpy().dtype))
    pos = env.state["body_pos_w"]
    ids = np.arange(backend.num_bodies)
    np.testing.assert_allclose(pos.numpy(), backend.get_body_pos_w(ids), atol=1e-6)


def test_rsl_rl_adapter_takes_a_device():
    env = RslRlVecEnv(UniSimVectorEnv(AntTask(), "mujoco", N), seed=0, device="cpu")
    try:
        assert env.device == torch.device("cpu") and env.get_observations()["policy"].device.type == "cpu"
        obs, rew, dones, extras = env.step(torch.zeros(N, 8))
        assert obs.device == env.device and rew.device.type == "cpu" and extras["time_outs"].dtype == torch.bool
        assert set(extras["log"]) == {"/reward/reward_forward", "/reward/reward_ctrl", "/reward/reward_survive"}
    finally:
        env.close()
    with pytest.raises(InvalidInputError, match="same-step"):
        RslRlVecEnv(UniSimVectorEnv(AntTask(), "mujoco", 1, autoreset_mode="next_step"))
