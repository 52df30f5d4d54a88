"""unisim-genesis on the real engine (Genesis' CPU backend): options, refusals that name the scene
feature, conventions at the boundary, sensors against their definitions, and a PD stand whose
answer MuJoCo gives."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from genesis_testutil import QUADRUPED, require_genesis

require_genesis()

from unisim_core import InvalidInputError, SceneCfg, UnsupportedCapabilityError, list_backends  # noqa: E402
from unisim_core import quat as Q  # noqa: E402
from unisim_genesis import GenesisBackend  # noqa: E402

HOME = np.array([0.0, 0.9, -1.8] * 4)


def _reset(sim, qpos=None, qvel=None):
    n = sim.num_envs
    q = np.tile(sim.model_info.keyframes["home"], (n, 1)) if qpos is None else qpos
    sim.set_state(np.arange(n), q, np.zeros((n, sim.nv)) if qvel is None else qvel)
    return q


def test_listed_without_importing_genesis():
    """The registry lists the plugin from its entry point; importing the package imports no engine."""
    record = next(r for r in list_backends() if r.name == "genesis")
    assert record.status == "ok", record.reason
    code = "import sys, unisim_genesis; bad = {'genesis', 'torch'} & set(sys.modules); assert not bad, bad"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_listed_as_missing_dependency_without_genesis():
    """With genesis unimportable, ``unisim backends`` still lists the plugin, honestly."""
    code = ("import sys\n"
            "class Block:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'genesis': raise ModuleNotFoundError(name)\n"
            "sys.meta_path.insert(0, Block())\n"
            "from unisim_core import list_backends\n"
            "r = next(r for r in list_backends() if r.name == 'genesis')\n"
            "print(r.status, r.reason)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.startswith("missing_dependency required module 'genesis' is not installed"), out


@pytest.mark.parametrize(("options", "needle"), [
    ({"device": "gpu"}, "device: expected None, 'cpu', 'cuda' or 'cuda:N', got 'gpu'"),
    ({"precision": "16"}, "precision: expected None or one of ['32', '64'], got '16'"),
    ({"constraint_solver": "pgs"}, "constraint_solver: expected None or one of ['cg', 'newton'], got 'pgs'"),
    ({"iterations": 0}, "iterations: expected an int >= 1 or None, got 0"),
    ({"log_level": "loud"}, "log_level"),
])
def test_bad_options_name_the_option(options, needle):
    with pytest.raises(InvalidInputError) as info:
        GenesisBackend(SceneCfg(str(QUADRUPED)), 1, 0.002, **options)
    assert needle in str(info.value)


def test_one_device_and_precision_per_process(quadruped):
    """gs.init is process-wide: another precision than the running one is refused, naming both."""
    with pytest.raises(InvalidInputError, match="already runs on device 'cpu' with precision '64'.*precision '32'"):
        GenesisBackend(SceneCfg(str(QUADRUPED)), 1, 0.002, device="cpu", precision="32")


@pytest.mark.parametrize(("xml", "feature"), [
    ('<option integrator="implicit"/><worldbody><body><joint name="j" type="hinge"/>'
     '<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/></body></worldbody>', "integrator"),
    ('<worldbody><body><joint name="j" type="hinge"/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>'
     '</body></worldbody><actuator><position joint="j" kp="5" gear="2"/></actuator>', "actuator_gear"),
    ('<worldbody><body><joint name="j" type="hinge"/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>'
     '</body></worldbody><actuator><motor joint="j"/><motor joint="j"/></actuator>', "shared_joint_actuators"),
])
def test_scene_features_refused_by_name(tmp_path, quadruped, xml, feature):
    """What Genesis (or the adapter's tables) cannot represent is refused before anything is built."""
    path = tmp_path / "scene.xml"
    path.write_text(f'<mujoco><compiler angle="radian"/>{xml}</mujoco>')
    with pytest.raises(UnsupportedCapabilityError) as info:
        GenesisBackend(SceneCfg(str(path)), 1, 0.002, device="cpu")
    assert info.value.capability == feature


def test_included_integrator_is_read(tmp_path):
    """Menagerie sets <option integrator> in the robot's file that scene.xml includes: it is read there (an
    included implicit is refused like a direct one: Genesis has no implicit integrator)."""
    body = ('<worldbody><body name="b"><joint name="j" type="hinge"/>'
            '<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/></body></worldbody>')
    (tmp_path / "robot.xml").write_text(f'<mujoco><option integrator="implicit"/>{body}</mujoco>')
    (tmp_path / "scene.xml").write_text('<mujoco><include file="robot.xml"/></mujoco>')
    with pytest.raises(UnsupportedCapabilityError) as info:
        GenesisBackend(SceneCfg(str(tmp_path / "scene.xml")), 1, 0.002, device="cpu")
    assert info.value.capability == "integrator"


def test_loaded_model_matches_the_file(quadruped):
    """The audit compared Genesis' tables with the file; spot-check what it read (armature 0.01, not
    Genesis' default 0.1; kp 60 / kv 2 as act gain/bias; force range +-33.5 N m)."""
    ent = quadruped.genesis_entity
    dofs = quadruped._act_dofs
    assert np.allclose(ent.get_dofs_armature().cpu().numpy()[..., dofs], 0.01)
    assert np.allclose(ent.get_dofs_act_gain().cpu().numpy()[..., dofs], 60.0)
    lo, hi = (t.cpu().numpy()[..., dofs] for t in ent.get_dofs_force_range())
    assert np.allclose(lo, -33.5) and np.allclose(hi, 33.5)


def test_free_root_conventions_round_trip(quadruped):
    """A 90 deg yaw and a spin about the body x axis read back in MuJoCo's layout: qpos wxyz, qvel
    angular part in the body frame, get_base_ang_vel in the world frame (body x -> world y)."""
    q = np.tile(quadruped.model_info.keyframes["home"], (3, 1))
    q[:, 3:7] = Q.quat_from_yaw(np.pi / 2)
    v = np.zeros((3, quadruped.nv))
    v[:, 0] = 0.5  # world x, m/s
    v[:, 3] = 1.0  # body x, rad/s
    _reset(quadruped, q, v)
    assert np.allclose(quadruped.get_qpos(), q, atol=1e-12)
    assert np.allclose(quadruped.get_qvel(), v, atol=1e-12)
    assert np.allclose(quadruped.get_base_ang_vel(), [[0.0, 1.0, 0.0]] * 3, atol=1e-12)
    assert np.allclose(quadruped.get_base_lin_vel(), [[0.5, 0.0, 0.0]] * 3, atol=1e-12)
    assert np.allclose(quadruped.get_base_quat(), q[:, 3:7], atol=1e-12)


def test_set_state_changes_only_the_listed_envs(quadruped):
    _reset(quadruped)
    quadruped.step(np.tile(HOME, (3, 1)), 5)
    before = quadruped.get_qpos()
    q = before[[1]].copy()
    q[0, 2] += 0.1
    quadruped.set_state(np.array([1]), q, np.zeros((1, quadruped.nv)))
    after = quadruped.get_qpos()
    assert np.array_equal(after[[0, 2]], before[[0, 2]])
    assert np.allclose(after[1], q[0])


def test_imu_sensors_equal_their_definitions(quadruped):
    """imu sits at the base origin: framepos/framequat are the base pose, gyro and velocimeter the
    base velocities in the base frame; at rest the accelerometer reads +g along the body z."""
    q = _reset(quadruped)
    v = np.zeros((3, quadruped.nv))
    v[:, 0:6] = [0.3, -0.2, 0.1, 0.5, -0.4, 0.2]
    quadruped.set_state(np.arange(3), q, v)
    names = ["imu_pos", "imu_quat", "imu_gyro", "imu_vel"]
    pos, quat, gyro, vel = (quadruped.get_sensor_data(n) for n in names)
    assert np.allclose(pos, quadruped.get_base_pos()) and np.allclose(quat, quadruped.get_base_quat())
    assert np.allclose(gyro, v[:, 3:6], atol=1e-12)
    assert np.allclose(vel, Q.quat_apply_inverse(quat, v[:, 0:3]), atol=1e-12)


def test_pd_hold_stands_like_mujoco(quadruped):
    """PD hold of ``home`` for 1 s: MuJoCo settles the base at z ~= 0.265-0.269 m with < 1 deg tilt
    (scene header); Genesis must stand within 1 cm of that, upright (< 3 deg), all envs alike."""
    _reset(quadruped)
    quadruped.step(np.tile(HOME, (3, 1)), 500)
    z = quadruped.get_base_pos()[:, 2]
    assert np.all(np.abs(z - 0.267) < 0.01), z
    up = Q.quat_apply(quadruped.get_base_quat(), np.array([[0.0, 0.0, 1.0]] * 3))[:, 2]
    assert np.all(up > np.cos(np.radians(3.0))), up
    # nearly still (the stance still rocks by a few cm/s^2): the accelerometer reads about +g, up the imu z
    acc = quadruped.get_sensor_data("imu_acc")
    assert np.all(np.abs(np.linalg.norm(acc, axis=1) - 9.81) < 0.1) and np.all(acc[:, 2] > 9.7), acc
    assert np.ptp(z) < 1e-9
