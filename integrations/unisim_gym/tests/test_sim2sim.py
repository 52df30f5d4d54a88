"""Sim-to-sim (#41): the shipped policy exported to ONNX runs in the deploy loop on MuJoCo and
MotrixSim with the torch policy's actions (1e-5) on the training task's own observations (bit for
bit); its manifest with two joints swapped is refused naming them; ``evaluate_sim2sim`` is
deterministic, passes MotrixSim and fails an engine whose front legs' controls are crossed;
``unisim eval`` prints the table and writes the JSON, plot and side-by-side video."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from unisim_core import InvalidInputError, InvalidTypeError, SceneCfg, create_backend
from unisim_core.tools.cli import main
from unisim_core.tools.deploy import PolicyController
from unisim_core.tools.policy_manifest import ManifestMismatchError, PolicyManifest
from unisim_gym import (
    AntTask,
    ObsTermCfg,
    UniSimVectorEnv,
    VelocityTrackingCfg,
    VelocityTrackingTask,
    evaluate_sim2sim,
    export_policy,
    load_policy_file,
    manifest_for_task,
)
from unisim_gym._sim2sim import run_episodes, task_factory
from unisim_mujoco import MujocoBackend

pytest.importorskip("onnxruntime", reason="the deploy loop runs ONNX through onnxruntime")
torch = pytest.importorskip("torch", reason="the shipped policy is TorchScript")

POLICY = Path(__file__).resolve().parents[3] / "examples" / "locomotion" / "policy.pt"


class SwappedFrontLegs(MujocoBackend):
    """MuJoCo with the front legs' controls crossed (FL <-> FR): the classic joint-order bug, as an engine."""

    def step(self, ctrl, nsteps=1):
        return super().step(np.ascontiguousarray(np.asarray(ctrl)[:, [3, 4, 5, 0, 1, 2, 6, 7, 8, 9, 10, 11]]), nsteps)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    path = tmp_path_factory.mktemp("export") / "policy.onnx"
    manifest = export_policy(POLICY, path)
    return path.with_suffix(".json"), manifest


@pytest.fixture(scope="module")
def torch_policy():
    return load_policy_file(POLICY)  # TorchScript through torch


def test_export_writes_onnx_and_the_manifest(exported):
    manifest_path, m = exported
    assert PolicyManifest.load(manifest_path) == m
    assert (m.obs_dim, m.action_dim, m.sim_dt, m.decimation, m.action_scale) == (48, 12, 0.005, 4, 0.25)
    assert [t.name for t in m.observations] == ["base_lin_vel_b", "base_ang_vel_b", "projected_gravity", "command",
                                                "dof_pos_rel", "dof_vel", "last_action"]
    assert m.joint_names[:3] == ("FL_hip_joint", "FL_thigh_joint", "FL_calf_joint")
    assert m.actuation == "position_servo" and m.kp == (60.0,) * 12 and m.kd == (2.0,) * 12
    np.testing.assert_allclose(m.default_joint_pos, [0.0, 0.9, -1.8] * 4, atol=1e-6)
    assert m.export_max_abs_diff < 1e-5


@pytest.mark.parametrize("backend", ["mujoco", "motrix"])
def test_deploy_loop_gives_the_torch_policys_actions(exported, torch_policy, backend):
    manifest_path, m = exported
    # lockstep with the training side: the env steps, the controller reads the same state
    env = UniSimVectorEnv(VelocityTrackingTask(VelocityTrackingCfg(randomize=False)), backend, 4, seed=1)
    try:
        obs, _ = env.reset(seed=1)
        ctl = PolicyController(m, env.backend, manifest_path=manifest_path)
        for _ in range(40):
            mine = ctl.observe(env.task.commands)
            np.testing.assert_array_equal(mine, obs)  # the training task's observation, bit for bit
            action = ctl.act(mine)
            np.testing.assert_allclose(action, np.clip(torch_policy(obs), ctl.action_low, ctl.action_high), atol=1e-5)
            obs, _, terminated, truncated, _ = env.step(action)
            if (terminated | truncated).any():
                ctl.reset(np.flatnonzero(terminated | truncated))
    finally:
        env.close()
    # the deploy loop on its own: a fresh backend put in the default pose, a forward command
    b = create_backend(backend, SceneCfg(m.model_file, default_keyframe="home"), 2, m.sim_dt)
    try:
        b.set_state(np.arange(2), np.tile(b.get_default_qpos(), (2, 1)), np.zeros((2, b.nv), b.np_dtype))
        ctl = PolicyController(m, b, manifest_path=manifest_path)
        for _ in range(50):
            obs = ctl.observe([0.6, 0.0, 0.0])  # read the state, build the observation
            action = ctl.act(obs)  # ONNX
            np.testing.assert_allclose(action, np.clip(torch_policy(obs), ctl.action_low, ctl.action_high), atol=1e-5)
            b.step(ctl.targets(action), m.decimation)  # joint targets to the servos
        assert (b.get_base_pos()[:, 2] > 0.2).all() and (b.get_base_lin_vel()[:, 0] > 0.2).all()  # walking forward
    finally:
        b.close()


def test_manifest_with_swapped_joints_is_refused_naming_them(exported):
    manifest_path, m = exported
    doc = json.loads(manifest_path.read_text())
    names = doc["joints"]["names"]
    names[0], names[3] = names[3], names[0]  # FL_hip <-> FR_hip: same range and default, other side
    b = create_backend("motrix", SceneCfg(m.model_file, default_keyframe="home"), 1, m.sim_dt)
    try:
        with pytest.raises(ManifestMismatchError, match="joints 'FL_hip_joint' and 'FR_hip_joint' are swapped"):
            PolicyController(PolicyManifest.from_json(doc), b, manifest_path=manifest_path)
    finally:
        b.close()


def test_export_refuses_what_the_deploy_loop_cannot_compute():
    with pytest.raises(InvalidTypeError, match="got AntTask"):
        manifest_for_task(AntTask())
    cfg = VelocityTrackingCfg(observations=(ObsTermCfg(name="dof_pos_rel"), ObsTermCfg(name="height_scan")))
    with pytest.raises(InvalidInputError, match=r"terms \['height_scan'\] are not computed by the deploy loop"):
        manifest_for_task(cfg)


def test_task_specs():
    assert isinstance(task_factory("unisim_gym:AntTask", 1.0)(), AntTask)  # no episode_s parameter: called bare
    assert task_factory("quadruped", 2.5)().cfg.command_resample_s == 2.5  # one command per episode
    with pytest.raises(InvalidInputError, match="expected one of \\['go1', 'quadruped'\\] or MODULE:FUNCTION"):
        task_factory("walker", 1.0)
    with pytest.raises(InvalidInputError, match="distinct backend names"):
        evaluate_sim2sim(lambda o: o, ["mujoco", "mujoco"])


def test_evaluate_sim2sim_is_deterministic_passes_motrix_and_fails_crossed_legs(torch_policy):
    broken = f"{__name__}:SwappedFrontLegs"
    report = evaluate_sim2sim(torch_policy, ["mujoco", "motrix", broken], num_envs=6, episode_s=1.0, seed=0)
    verdict = {v.backend: v for v in report.verdicts}
    assert verdict["mujoco"].verdict == "reference" and verdict["motrix"].verdict == "PASS"
    assert verdict[broken].verdict == "FAIL" and "falls +" in verdict[broken].detail
    assert not report.passed
    again = run_episodes(torch_policy, "mujoco", task_factory("quadruped", 1.0), num_envs=6, episode_s=1.0, seed=0)
    for name, values in report.runs[0].metrics.items():
        np.testing.assert_array_equal(again.metrics[name], values)  # the same seed, the same episodes


def test_unisim_eval_cli(tmp_path, capsys):
    out = {k: str(tmp_path / f"eval.{k}") for k in ("json", "png", "gif")}
    rc = main(["eval", "--policy", str(POLICY), "--backends", "mujoco,motrix", "--num-envs", "2", "--episode-s", "0.2",
               "--json", out["json"], "--plot", out["png"], "--video", out["gif"]])
    text = capsys.readouterr().out
    # two episodes: Student's t with one degree of freedom (12.7) leaves the interval too wide to PASS
    assert rc == 1, text
    assert "vs mujoco" in text and "motrix: FAIL" in text and "(more episodes narrow it)" in text
    doc = json.loads(Path(out["json"]).read_text())
    assert doc["verdicts"]["motrix"]["verdict"] == "FAIL" and doc["runs"]["mujoco"]["episodes"] == 2
    assert doc["command"].startswith("unisim eval --policy")
    assert Path(out["png"]).read_bytes()[:4] == b"\x89PNG"
    import imageio.v2 as imageio

    frames = imageio.mimread(out["gif"])
    assert len(frames) == 5 and frames[0].shape[:2] == (240, 640)  # 0.2 s at 25 fps; two 320-wide panels
    assert main(["eval", "--policy", str(POLICY), "--backends", "mujoco", "--tolerance", "speed=1"]) == 2
    assert "unknown metrics ['speed']" in capsys.readouterr().err
    assert main(["eval", "--policy", str(tmp_path / "none.pt"), "--backends", "mujoco"]) == 2
    assert "no such file" in capsys.readouterr().err
