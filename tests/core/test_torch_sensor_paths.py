"""The contract pieces an app like UniLab needs (#42), each against a known answer:

- ``torch_views``: state as tensors (zero-copy on a DEVICE_ARRAYS engine), tensor control, a packed
  masked reset that leaves every other env bit-identical;
- ``sensor_timing``: ``"last_substep"`` equals MuJoCo's own ``d.sensordata`` after ``mj_step``;
- ``derived_sensors``: contact "found", frame axes and frame sensors of geoms, derived on an engine
  and compared with MuJoCo's native sensors of the original file;
- the root-layout record's ``qpos_indices``/``qvel_indices``, ``get_joint_range(names)``.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from unisim_core import InvalidInputError, SceneCfg, create_backend
from unisim_core.contract.sensor_timing import SensorClock
from unisim_core.plugin.derived_sensors import DerivedSensors, derive_scene
from unisim_core.scenes import scene_path

torch = pytest.importorskip("torch")
from unisim_core.contract.torch_views import set_state_masked, state_tensors, step_tensor  # noqa: E402

SCENE = """<mujoco>
  <option timestep="0.002"/>
  <default><geom contype="1" conaffinity="1"/><default class="offset"><geom pos="0.05 0 0.02"/></default></default>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="box" pos="0 0 0.1"><freejoint/><geom name="box" type="sphere" size="0.1" mass="1"/>
      <geom name="marker" class="offset" type="sphere" size="0.01" contype="0" conaffinity="0" mass="0.01"/>
    </body>
    <body name="ball" pos="1 0 1"><freejoint/><geom name="ball" type="sphere" size="0.05" mass="0.5"/></body>
  </worldbody>
  <sensor>
    <contact name="box_found" geom1="floor" geom2="box" data="found" num="1" reduce="mindist"/>
    <contact name="ball_found" geom1="floor" geom2="ball" data="found" num="1" reduce="mindist"/>
    <framezaxis name="box_up" objtype="body" objname="box"/>
    <framepos name="marker_pos" objtype="geom" objname="marker"/>
    <gyro name="gyro_box" site="imu"/>
  </sensor>
</mujoco>"""


@pytest.fixture
def scene_file(tmp_path):
    path = tmp_path / "scene.xml"
    path.write_text(SCENE.replace('<freejoint/><geom name="box"',
                                  '<freejoint/><site name="imu" pos="0.02 0 0"/><geom name="box"'))
    return str(path)


def test_root_layout_indices_and_named_joint_range():
    with create_backend("fake", SceneCfg(scene_path("quadruped")), 2, 0.01) as sim:
        layout = sim.get_root_state_layout(sim.model_info.body_names[sim._base_id])
        assert layout.qpos_indices == tuple(range(layout.qpos_start, layout.qpos_start + 7))
        assert layout.qvel_indices == tuple(range(layout.qvel_start, layout.qvel_start + 6))
        names = sim.get_actuator_joint_names()[::-1]
        full = sim.get_joint_range()
        np.testing.assert_array_equal(sim.get_joint_range(names), full[sim.get_joint_dof_pos_indices(names)])


def test_state_tensors_masked_reset_and_tensor_step():
    with create_backend("fake", SceneCfg(scene_path("quadruped"), default_keyframe="home"), 4, 0.01) as sim:
        ids = np.arange(4)
        sim.set_state(ids, np.tile(sim.get_default_qpos(), (4, 1)), np.zeros((4, sim.nv)))
        step_tensor(sim, torch.zeros(4, sim.num_actuators), 3)
        before = sim.get_qpos()
        views = state_tensors(sim, ("qpos", "qvel"))
        np.testing.assert_array_equal(views["qpos"].numpy(), before)
        qpos = torch.tensor(before + 0.01)
        qpos[:, 3:7] = torch.tensor(before[:, 3:7])
        mask = torch.tensor([False, True, False, True])
        written = set_state_masked(sim, mask, qpos, torch.zeros(4, sim.nv))
        after = sim.get_qpos()
        assert written.tolist() == [1, 3]
        np.testing.assert_array_equal(after[[0, 2]], before[[0, 2]])  # untouched rows bit-identical
        np.testing.assert_allclose(after[[1, 3], :3], before[[1, 3], :3] + 0.01, rtol=0, atol=1e-6)
        with pytest.raises(InvalidInputError, match=r"mask: expected a \(4,\) bool array"):
            set_state_masked(sim, np.ones(3, bool), qpos, torch.zeros(4, sim.nv))


def test_state_tensors_are_zero_copy_on_a_device_array_engine():
    pytest.importorskip("unisim_mjwarp")
    with create_backend("mjwarp", SceneCfg(scene_path("quadruped"), default_keyframe="home"), 2, 0.01) as sim:
        views = state_tensors(sim, ("qpos",))
        first = views["qpos"].clone()
        sim.step(np.zeros((2, sim.num_actuators), np.float32), 5)
        assert not torch.equal(views["qpos"], first)  # live: the step shows through without a new call
        np.testing.assert_allclose(views["qpos"].numpy(), sim.get_qpos(), rtol=0, atol=1e-6)


def test_last_substep_timing_equals_mujocos_own_sensordata(scene_file):
    mujoco = pytest.importorskip("mujoco")
    pytest.importorskip("unisim_mujoco")
    m = mujoco.MjModel.from_xml_path(scene_file)
    d = mujoco.MjData(m)
    d.qvel[3:6] = [0.3, -0.2, 1.0]  # the box spins
    mujoco.mj_forward(m, d)
    with create_backend("mujoco", SceneCfg(scene_file), 1, m.opt.timestep, np_dtype=np.float64) as sim:
        sim.set_state(np.array([0]), d.qpos[None].copy(), d.qvel[None].copy())
        clock = SensorClock(sim, "last_substep")
        for nsteps in (4, 1, 3):
            for _ in range(nsteps):
                mujoco.mj_step(m, d)
            clock.step(np.zeros((1, 0)), nsteps)
            adr = m.sensor_adr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SENSOR, "gyro_box")]
            np.testing.assert_allclose(clock.read(("gyro_box",))[0], d.sensordata[adr:adr + 3], rtol=0, atol=1e-9)
        after = SensorClock(sim, "after_step").read(("gyro_box",))[0]
        assert not np.allclose(after, d.sensordata[adr:adr + 3])  # the state's own value is newer


def test_derived_sensors_match_mujocos_native_ones(scene_file):
    pytest.importorskip("mujoco")
    pytest.importorskip("unisim_mujoco")
    copy, specs = derive_scene(scene_file, {"contact_sensor", "framezaxis_sensor", "frame_sensor_objtype"})
    try:
        assert os.path.dirname(copy) == os.path.dirname(scene_file)
        native = create_backend("mujoco", SceneCfg(scene_file), 1, 0.002, np_dtype=np.float64)
        derived = create_backend("mujoco", SceneCfg(copy), 1, 0.002, np_dtype=np.float64)
        with native, derived:
            assert "box_found" not in derived.model_info.sensor_names  # removed from the engine's copy
            reader = DerivedSensors(derived, specs)
            for sim in (native, derived):
                sim.step(np.zeros((1, 0)), 50)  # the box settles on the floor, the ball falls
            names = ("box_found", "ball_found", "box_up")
            np.testing.assert_allclose(reader.read(names), native.get_sensor_data_batch(names), rtol=0, atol=1e-9)
            np.testing.assert_allclose(derived.get_sensor_data("marker_pos"), native.get_sensor_data("marker_pos"),
                                       rtol=0, atol=1e-12)
            assert reader.read(("box_found", "ball_found")).tolist() == [[1.0, 0.0]]

    finally:
        os.unlink(copy)


def test_derived_found_reads_one_for_several_contacts(scene_file, tmp_path):
    """The documented limit: net forces cannot count contacts (a box on a plane: MuJoCo finds 4)."""
    pytest.importorskip("unisim_mujoco")
    box = tmp_path / "box.xml"
    box.write_text(open(scene_file).read().replace('type="sphere" size="0.1" mass="1"',
                                                   'type="box" size="0.1 0.1 0.1" mass="1"'))
    copy, specs = derive_scene(str(box), {"contact_sensor"})
    try:
        with create_backend("mujoco", SceneCfg(str(box)), 1, 0.002) as native, \
                create_backend("mujoco", SceneCfg(copy), 1, 0.002) as derived:
            native.step(np.zeros((1, 0)), 50)
            derived.step(np.zeros((1, 0)), 50)
            assert native.get_sensor_data("box_found")[0, 0] == 4
            assert DerivedSensors(derived, specs).read(("box_found",))[0, 0] == 1
    finally:
        os.unlink(copy)
