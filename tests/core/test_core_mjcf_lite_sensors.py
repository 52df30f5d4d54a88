"""``magnetometer`` and ``actuatorpos`` sensors (accept-gated: ``<type>_sensor``), ``<option magnetic>`` and
each sensor's ``cutoff`` in ``mjcf_lite``, against MuJoCo's compiled tables."""

from __future__ import annotations

import numpy as np
import pytest
from core_helpers import write_scene

from unisim_core.plugin.mjcf_lite import MjcfLiteError, load_mjcf

SCENE = """<option magnetic="0.1 -0.4 0.2"/><worldbody><body name="a" pos="0 0 1"><joint name="j" axis="0 1 0"/>
  <geom size="0.1" mass="1"/><site name="s"/></body></worldbody>
<actuator><motor name="m" joint="j" gear="3"/></actuator>
<sensor><magnetometer name="mag" site="s"/><actuatorpos name="len" actuator="m"/>
  <gyro name="gyro" site="s" cutoff="2.5"/></sensor>"""


def test_sensors_and_magnetic_field_are_mujocos(tmp_path):
    mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo's compiler")
    path = write_scene(tmp_path, SCENE)
    lite = load_mjcf(path, accept={"magnetometer_sensor", "actuatorpos_sensor"})
    m = mujoco.MjModel.from_xml_path(str(path))
    np.testing.assert_array_equal(lite.magnetic, m.opt.magnetic)
    assert [s["type"] for s in lite.sensors] == ["magnetometer", "actuatorpos", "gyro"]
    assert [s["obj"] for s in lite.sensors] == m.sensor_objid.tolist() == [0, 0, 0]
    assert [s["cutoff"] for s in lite.sensors] == m.sensor_cutoff.tolist() == [0.0, 0.0, 2.5]
    assert lite.model_info().sensor_dims.tolist() == m.sensor_dim.tolist() == [3, 1, 3]


@pytest.mark.parametrize(("tag", "accept"), [("magnetometer", {"actuatorpos_sensor"}),
                                             ("actuatorpos", {"magnetometer_sensor"})])
def test_gated_sensors_are_refused_unless_accepted(tmp_path, tag, accept):
    with pytest.raises(MjcfLiteError) as info:
        load_mjcf(write_scene(tmp_path, SCENE), accept=accept)
    assert info.value.feature == f"{tag}_sensor"
