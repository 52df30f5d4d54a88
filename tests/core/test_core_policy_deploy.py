"""The policy manifest (unisim_core.tools.policy_manifest) and the deploy loop (unisim_core.tools.deploy), on
MuJoCo's quadruped with a linear ONNX policy built without torch: joint geometry equals MuJoCo's
compiled anchors and axes, refusals name what differs (two joints swapped among them), the
observation terms of a known state, the actions and targets of a known linear map, the history,
and a deploy run that imports neither torch nor gymnasium."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import attrs
import numpy as np
import pytest

from unisim_core import InvalidInputError, SceneCfg, create_backend
from unisim_core.contract.quat import quat_apply_inverse, quat_from_yaw
from unisim_core.scenes import scene_path
from unisim_core.tools.deploy import PolicyController
from unisim_core.tools.policy_manifest import (
    ManifestMismatchError,
    ObsTerm,
    PolicyManifest,
    check_manifest,
    file_sha256,
    joint_geometry,
)

mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo's compiled model")
onnx = pytest.importorskip("onnx", reason="the test policy is an ONNX graph")
pytest.importorskip("onnxruntime", reason="the deploy loop runs ONNX through onnxruntime")

QUAD = str(scene_path("quadruped"))
TERMS = (("base_lin_vel_b", 3), ("base_ang_vel_b", 3), ("projected_gravity", 3), ("command", 3), ("dof_pos_rel", 12),
         ("dof_vel", 12), ("last_action", 12))


def make_backend(num_envs: int = 2, sim_dt: float = 0.005):
    return create_backend("mujoco", SceneCfg(QUAD, default_keyframe="home"), num_envs, sim_dt)


def quad_manifest(b, observations=None, policy_file: str = "policy.onnx") -> PolicyManifest:
    """The manifest a policy trained on the quadruped (position servos) would carry, from ``b``'s tables."""
    names = tuple(b.get_actuator_joint_names())
    cols = b.get_joint_dof_pos_indices(list(names))
    default = b.get_default_dof_pos().astype(np.float64)[cols]
    rng = b.get_joint_range().astype(np.float64)[cols]
    anchor, axis = joint_geometry(QUAD, names, "base")
    kp, kd = b.get_actuator_gains()
    terms = observations or tuple(ObsTerm(name=n, size=s) for n, s in TERMS)
    return PolicyManifest(
        policy_file=policy_file, obs_dim=sum(t.width for t in terms), action_dim=len(names), model_file=QUAD,
        model_sha256=file_sha256(QUAD), robot="quadruped", base_body="base", sim_dt=0.005, decimation=4,
        joint_names=names, default_joint_pos=default, joint_range=rng, joint_anchor_b=anchor, joint_axis_b=axis,
        observations=terms, command_ranges=((-1, 1), (-0.5, 0.5), (-1, 1)), action_scale=0.25,
        action_low=(rng[:, 0] - default) / 0.25, action_high=(rng[:, 1] - default) / 0.25, target_low=rng[:, 0],
        target_high=rng[:, 1], actuation="position_servo", kp=kp, kd=kd)


def linear_onnx(path, w: np.ndarray, bias: np.ndarray) -> None:
    """An ONNX graph ``actions = obs @ w.T + bias`` (Gemm), batch dimension free."""
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("Gemm", ["obs", "W", "B"], ["actions"], transB=1)], "linear",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, ["batch", w.shape[1]])],
        [helper.make_tensor_value_info("actions", TensorProto.FLOAT, ["batch", w.shape[0]])],
        [numpy_helper.from_array(w.astype(np.float32), "W"), numpy_helper.from_array(bias.astype(np.float32), "B")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


@pytest.fixture(scope="module")
def backend():
    b = make_backend()
    yield b
    b.close()


def test_joint_geometry_is_mujocos_compiled_anchor_and_axis():
    m = mujoco.MjModel.from_xml_path(QUAD)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)  # qpos0: every body at its MJCF pose
    names = [m.joint(j).name for j in range(1, m.njnt)]
    base = m.body("base").id
    anchor, axis = joint_geometry(QUAD, names, "base")
    q = np.tile(d.xquat[base], (len(names), 1))
    np.testing.assert_allclose(anchor, quat_apply_inverse(q, d.xanchor[1:] - d.xpos[base]), atol=1e-9)
    np.testing.assert_allclose(axis, quat_apply_inverse(q, d.xaxis[1:]), atol=1e-9)
    assert anchor[0, 1] > 0 > anchor[3, 1]  # FL hip on the left, FR hip on the right


def test_manifest_json_round_trip_keeps_infinities(tmp_path, backend):
    m = attrs.evolve(quad_manifest(backend), actuation="actuator_model", actuator_configs=(
        {"class": "IdealPDCfg", "joint_names": [".*"], "stiffness": 20.0, "damping": 0.5, "effort_limit": np.inf,
         "drive": "position", "delay": [0, 0]},))
    m.save(tmp_path / "m.json")
    text = (tmp_path / "m.json").read_text()
    assert '"effort_limit": "inf"' in text and "Infinity" not in text  # plain JSON for any reader
    assert PolicyManifest.load(tmp_path / "m.json") == m
    doc = json.loads(text)
    del doc["joints"]["anchor_b"]
    with pytest.raises(InvalidInputError, match="missing joints.anchor_b"):
        PolicyManifest.from_json(doc)
    with pytest.raises(InvalidInputError, match="obs_dim: expected 48"):
        attrs.evolve(m, obs_dim=47)
    with pytest.raises(InvalidInputError, match="'height_scan' is not one a deploy loop computes"):
        attrs.evolve(m, observations=(*m.observations, ObsTerm(name="height_scan", size=3)), obs_dim=51)


def test_check_accepts_the_training_model_and_refuses_swapped_joints_by_name(backend):
    m = quad_manifest(backend)
    bound = check_manifest(m, backend)
    assert bound.same_model and list(bound.ctrl_cols) == list(range(12))
    names = list(m.joint_names)
    for i, j in ((0, 3), (2, 5), (1, 2)):  # left/right hips, left/right knees (same range), thigh/knee
        swapped = list(names)
        swapped[i], swapped[j] = swapped[j], swapped[i]
        with pytest.raises(ManifestMismatchError) as err:
            check_manifest(attrs.evolve(m, joint_names=swapped), backend)
        pair = sorted((names[i], names[j]))
        assert f"joints {pair[0]!r} and {pair[1]!r} are swapped in joint_names" in str(err.value)
    # a joint order that differs from the backend's actuator order is fine when the records follow the names
    perm = [3, 4, 5, 0, 1, 2, 9, 10, 11, 6, 7, 8]
    fields = ("joint_names", "default_joint_pos", "joint_range", "joint_anchor_b", "joint_axis_b", "action_low",
              "action_high", "target_low", "target_high", "kp", "kd")
    reordered = attrs.evolve(m, **{f: [getattr(m, f)[k] for k in perm] for f in fields})
    assert list(check_manifest(reordered, backend).ctrl_cols) == perm


def test_check_refuses_other_mismatches_by_name(backend):
    m = quad_manifest(backend)
    with pytest.raises(ManifestMismatchError, match=r"\['FL_knee'\] are not joints the backend's actuators drive"):
        check_manifest(attrs.evolve(m, joint_names=("FL_knee", *m.joint_names[1:])), backend)
    with pytest.raises(ManifestMismatchError, match="trained at 0.002 s per physics step, the backend steps 0.005"):
        check_manifest(attrs.evolve(m, sim_dt=0.002), backend)
    with pytest.raises(ManifestMismatchError, match="'FR_hip_joint': servo gains kp 60, kd 2 on the backend, kp 40"):
        check_manifest(attrs.evolve(m, kp=(60.0,) * 3 + (40.0,) + (60.0,) * 8), backend)
    with pytest.raises(ManifestMismatchError, match="base_body: the manifest's base is 'trunk', the backend's 'base'"):
        check_manifest(attrs.evolve(m, base_body="trunk"), backend)
    with pytest.raises(ManifestMismatchError, match="backend drives .* with position/velocity servos"):
        check_manifest(attrs.evolve(m, actuation="actuator_model", actuator_configs=({"class": "IdealPDCfg"},)),
                       backend)


def test_deploy_observation_actions_and_targets_known_answers(tmp_path):
    b = make_backend(2)
    try:
        m = quad_manifest(b)
        rng = np.random.default_rng(0)
        w, bias = rng.normal(size=(12, 48)) * 0.3, rng.normal(size=12)
        linear_onnx(tmp_path / "policy.onnx", w, bias)
        m.save(tmp_path / "policy.json")
        ctl = PolicyController(m, b, manifest_path=tmp_path / "policy.json")
        qpos = np.tile(b.get_default_qpos().astype(np.float64), (2, 1))
        qpos[:, 3:7] = quat_from_yaw(np.array([np.pi / 2, np.pi / 2]))  # yawed 90 deg
        qpos[:, 7:] += 0.1
        qvel = np.zeros((2, b.nv))
        qvel[:, 0], qvel[:, 5], qvel[:, 6:] = 1.0, 0.5, 0.2  # world +x, body yaw rate, joints
        b.set_state(np.arange(2), qpos, qvel)
        command = np.array([0.5, -0.2, 0.3])
        obs = ctl.observe(command)
        expected = np.concatenate([[0, -1, 0], [0, 0, 0.5], [0, 0, -1], command, [0.1] * 12, [0.2] * 12, [0] * 12])
        np.testing.assert_allclose(obs, np.tile(expected, (2, 1)), atol=2e-6)
        action = ctl.act(obs)
        want = np.clip(obs @ w.T.astype(np.float32) + bias.astype(np.float32), ctl.action_low, ctl.action_high)
        np.testing.assert_allclose(action, want, atol=1e-5)
        ctrl = ctl.targets(action)
        np.testing.assert_allclose(ctrl, np.clip(np.asarray(m.default_joint_pos) + 0.25 * action,
                                                 m.target_low, m.target_high), atol=1e-6)
        np.testing.assert_array_equal(ctl.observe(command)[:, 36:], action)  # last_action is the clipped action
    finally:
        b.close()


def test_deploy_history_oldest_first(tmp_path):
    b = make_backend(1)
    try:
        terms = (ObsTerm(name="dof_vel", size=12, history=3), ObsTerm(name="command", size=3, scale=2.0, clip=0.5))
        m = quad_manifest(b, observations=terms)
        ctl = PolicyController(m, b, policy=lambda o: np.zeros((1, 12), np.float32))
        first = ctl.observe([1.0, -0.2, 0.0])
        np.testing.assert_array_equal(first[0, 36:], np.float32([1.0, -0.4, 0.0]))  # clipped to 0.5, scaled by 2
        np.testing.assert_array_equal(first[0, :36], 0.0)  # the history starts filled with the reset state
        v = []
        for _ in range(3):  # the loop, spelled out: one observe per control step
            action = ctl.act(ctl.observe([0.0, 0.0, 0.0]))
            b.step(ctl.targets(action), m.decimation)
            v.append(b.get_dof_vel()[0].astype(np.float32))
        obs = ctl.observe([0.0, 0.0, 0.0])
        assert np.abs(v[0] - v[1]).max() > 1e-3  # the robot moves: the three entries differ
        np.testing.assert_array_equal(obs[0, :36], np.concatenate(v))  # the last three steps, oldest first
    finally:
        b.close()


def test_deploy_loop_imports_neither_torch_nor_gymnasium(tmp_path, backend):
    m = quad_manifest(backend)
    linear_onnx(tmp_path / "policy.onnx", np.zeros((12, 48)), np.zeros(12))
    m.save(tmp_path / "policy.json")
    script = textwrap.dedent(f"""
        import sys
        import numpy as np
        from unisim_core import SceneCfg, create_backend
        from unisim_core.tools.deploy import PolicyController
        from unisim_core.tools.policy_manifest import PolicyManifest

        manifest = PolicyManifest.load({str(tmp_path / 'policy.json')!r})
        backend = create_backend("mujoco", SceneCfg(manifest.model_file, default_keyframe="home"), 2, manifest.sim_dt)
        ctl = PolicyController(manifest, backend, manifest_path={str(tmp_path / 'policy.json')!r})
        for _ in range(5):
            action = ctl.step([0.5, 0.0, 0.0])
        assert action.shape == (2, 12) and not action.any()
        print(sorted(m for m in ("torch", "gymnasium", "unisim_gym") if m in sys.modules))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"
