"""Conventions with known answers, subset isolation, model layout vs MuJoCo's."""

from __future__ import annotations

import numpy as np
import pytest
from motrix_testutil import home_state, scene_path

from unisim_core import Capability
from unisim_core.contract.errors import InvalidInputError, UnsupportedCapabilityError

C45 = np.cos(np.pi / 4)


def test_yaw_90_reads_back_wxyz(make):
    """A 90° yaw written in wxyz reads back as [cos45, 0, 0, sin45] (float32 rounding: 1e-6)."""
    b = make("free_body.xml", 3)
    q, v = home_state(b)
    q[:, 3:7] = [C45, 0, 0, C45]
    b.set_state(np.arange(3), q, v)
    np.testing.assert_allclose(b.get_base_quat(), [[C45, 0, 0, C45]] * 3, atol=1e-6)
    np.testing.assert_allclose(b.get_body_quat_w(np.array([1]))[:, 0], [[C45, 0, 0, C45]] * 3, atol=1e-6)
    np.testing.assert_allclose(b.get_sensor_data("box_quat"), [[C45, 0, 0, C45]] * 3, atol=1e-6)


def test_body_frame_angular_velocity_is_rotated_to_world(make):
    """qvel[3:6] is body-frame: with a 90° yaw, body x spin (1,0,0) is world (0,1,0)."""
    b = make("free_body.xml", 2)
    q, v = home_state(b)
    q[:, 3:7] = [C45, 0, 0, C45]
    v[:, 3:6] = [1.0, 0, 0]
    b.set_state(np.arange(2), q, v)
    np.testing.assert_allclose(b.get_qvel()[:, 3:6], [[1, 0, 0]] * 2, atol=1e-6)
    np.testing.assert_allclose(b.get_base_ang_vel(), [[0, 1, 0]] * 2, atol=1e-6)
    np.testing.assert_allclose(b.get_body_ang_vel_w(np.array([1]))[:, 0], [[0, 1, 0]] * 2, atol=1e-6)
    np.testing.assert_allclose(b.get_body_ang_vel_b(np.array([1]))[:, 0], [[1, 0, 0]] * 2, atol=1e-6)


def test_subset_set_state_leaves_others_bit_identical(make):
    b = make("quadruped.xml", 4, keyframe="home")
    q, v = home_state(b)
    b.set_state(np.arange(4), q, v)
    ctrl = np.tile(b.get_default_dof_pos(), (4, 1))
    b.step(ctrl, 3)
    before = (b.get_qpos(), b.get_qvel(), b.get_body_pos_w(np.arange(b.num_bodies)), b.get_sensor_data("imu_pos"))
    q2, v2 = home_state(b, 2)
    q2[:, 0] = [5.0, -5.0]
    v2[:, 6] = 0.3
    b.set_state(np.array([3, 1]), q2, v2)  # unsorted ids: rows follow env_indices order
    after = (b.get_qpos(), b.get_qvel(), b.get_body_pos_w(np.arange(b.num_bodies)), b.get_sensor_data("imu_pos"))
    for x, y in zip(before, after):
        assert np.array_equal(x[[0, 2]], y[[0, 2]])
    assert after[0][3, 0] == 5.0 and after[0][1, 0] == -5.0
    assert after[2][3, 1, 0] == pytest.approx(5.0) and after[3][1, 0] == pytest.approx(-5.0, abs=0.2)
    np.testing.assert_allclose(after[1][[1, 3], 6], 0.3, rtol=1e-6)


def test_float64_option_and_shapes(make):
    b = make("quadruped.xml", 3, np_dtype=np.float64)
    assert b.get_qpos().dtype == np.float64 and b.get_qpos().shape == (3, 19)
    assert b.get_dof_pos().shape == (3, 12) and b.get_base_lin_vel().shape == (3, 3)
    assert b.get_body_state_w(np.array([0, 1]))[1].shape == (3, 2, 4)
    assert np.array_equal(b.get_body_quat_w(np.array([0]))[:, 0], [[1, 0, 0, 0]] * 3)  # the world


@pytest.mark.parametrize("scene", ["quadruped.xml", "fixed_arm.xml", "free_body.xml", "hfield_terrain.xml"])
def test_model_info_matches_mujoco(make, scene):
    mujoco = pytest.importorskip("mujoco")
    m = mujoco.MjModel.from_xml_path(scene_path(scene))
    b = make(scene, 1)
    info = b.model_info
    name = lambda obj, i: mujoco.mj_id2name(m, obj, i) or ""  # noqa: E731
    assert info.body_names[1:] == tuple(name(mujoco.mjtObj.mjOBJ_BODY, i) for i in range(1, m.nbody))
    assert np.array_equal(info.body_parent, m.body_parentid)
    np.testing.assert_allclose(info.body_mass, m.body_mass, rtol=1e-6)
    np.testing.assert_allclose(info.body_inertia, m.body_inertia, rtol=1e-5, atol=1e-9)
    assert info.joint_names == tuple(name(mujoco.mjtObj.mjOBJ_JOINT, i) for i in range(m.njnt))
    assert np.array_equal(info.joint_qposadr, m.jnt_qposadr) and np.array_equal(info.joint_dofadr, m.jnt_dofadr)
    types = {0: "free", 1: "ball", 2: "slide", 3: "hinge"}
    assert info.joint_types == tuple(types[int(t)] for t in m.jnt_type)
    assert info.actuator_names == tuple(name(mujoco.mjtObj.mjOBJ_ACTUATOR, i) for i in range(m.nu))
    assert np.array_equal(info.actuator_joint, np.where(m.actuator_trntype == 0, m.actuator_trnid[:, 0], -1))
    assert info.sensor_names == tuple(name(mujoco.mjtObj.mjOBJ_SENSOR, i) for i in range(m.nsensor))
    assert np.array_equal(info.sensor_dims, m.sensor_dim)
    assert info.site_names == tuple(name(mujoco.mjtObj.mjOBJ_SITE, i) for i in range(m.nsite))
    assert np.array_equal(info.site_body, m.site_bodyid)
    assert info.geom_names == tuple(name(mujoco.mjtObj.mjOBJ_GEOM, i) for i in range(m.ngeom))
    assert np.array_equal(info.geom_body, m.geom_bodyid)
    np.testing.assert_allclose(info.qpos0, m.qpos0, atol=1e-6)
    for k in range(m.nkey):
        np.testing.assert_allclose(info.keyframes[name(mujoco.mjtObj.mjOBJ_KEY, k)], m.key_qpos[k], atol=1e-6)
    np.testing.assert_allclose(info.dof_damping, m.dof_damping, rtol=1e-6)
    np.testing.assert_allclose(info.dof_armature, m.dof_armature, rtol=1e-6)


def test_ball_slide_and_second_free_body_layout(tmp_path):
    """MuJoCo qpos order for slide + ball + hinge + a free body that is not first."""
    mujoco = pytest.importorskip("mujoco")
    from unisim_core import SceneCfg
    from unisim_motrix import MotrixBackend

    xml = tmp_path / "mix.xml"
    xml.write_text("""<mujoco><worldbody>
      <body name="a" pos="0 0 1"><joint name="s" type="slide" axis="1 0 0"/><geom type="sphere" size="0.1"/>
        <body name="b" pos="0 0 -0.5"><joint name="bj" type="ball"/><geom type="sphere" size="0.1"/>
          <body name="c" pos="0 0 -0.5"><joint name="h" type="hinge" axis="0 1 0"/><geom type="sphere" size="0.1"/>
      </body></body></body>
      <body name="f" pos="2 0 1"><freejoint name="fr"/><geom type="sphere" size="0.1"/></body>
    </worldbody></mujoco>""")
    m = mujoco.MjModel.from_xml_path(str(xml))
    with MotrixBackend(SceneCfg(str(xml)), 2, 0.002, base_name="f") as b:
        assert b.model_info.joint_types == ("slide", "ball", "hinge", "free")
        assert np.array_equal(b.model_info.joint_qposadr, m.jnt_qposadr)
        q = np.tile(m.qpos0, (2, 1))
        q[:, 1:5] = [np.cos(0.3), 0, np.sin(0.3), 0]  # ball: 0.6 rad about y, wxyz
        q[:, 9:13] = [C45, 0, 0, C45]
        b.set_state(np.arange(2), q, np.zeros((2, m.nv)))
        np.testing.assert_allclose(b.get_qpos(), q, atol=1e-6)
        np.testing.assert_allclose(b.get_base_quat(), [[C45, 0, 0, C45]] * 2, atol=1e-6)


def test_options_validation(make):
    with pytest.raises(TypeError, match="max_iterations"):
        make("pendulum.xml", 1, max_iteration=3)
    with pytest.raises(InvalidInputError, match="max_iterations"):
        make("pendulum.xml", 1, max_iterations=0)
    b = make("pendulum.xml", 1, max_iterations=7)
    assert b.model.options.max_iterations == 7
    assert b.model.options.timestep == pytest.approx(0.001)
    b = make("pendulum.xml", 1, max_iterations=None)
    assert b.model.options.max_iterations == 100  # engine default kept


def test_undeclared_capabilities_raise(make):
    b = make("pendulum.xml", 1)
    assert Capability.RENDER not in b.capabilities
    with pytest.raises(UnsupportedCapabilityError):
        b.init_renderer()


def test_entry_point_and_lazy_engine_import():
    import subprocess
    import sys

    code = ("import sys, unisim_core; cls = unisim_core.get_backend_class('motrix'); "
            "print(cls.__name__, 'motrixsim' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["MotrixBackend", "False"], out.stderr
