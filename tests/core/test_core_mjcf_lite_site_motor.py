"""Site motors in ``mjcf_lite`` (``accept={"site_transmission"}``): a ``<motor site>`` is read with no
joint (-1), its site and MuJoCo's 6-vector gear; refused by name otherwise, and with a ``refsite``."""

from __future__ import annotations

import numpy as np
import pytest
from core_helpers import write_scene

from unisim_core.plugin.mjcf_lite import MjcfLiteError, load_mjcf

DRONE = """<worldbody><body name="drone" pos="0 0 1"><freejoint/><geom type="box" size="0.1 0.1 0.02" mass="0.5"/>
  <site name="imu"/><site name="rotor" pos="0.05 0 0.02"/></body></worldbody>
<actuator><motor name="thrust" site="rotor" gear="0 0 1 0 0 0" ctrlrange="0 10"/>
  <motor name="yaw" site="rotor" gear="0 0 0 0 0 0.01"/></actuator>"""


def test_site_motor_tables_are_mujocos(tmp_path):
    mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo's compiler")
    path = write_scene(tmp_path, DRONE)
    lite = load_mjcf(path, accept={"site_transmission"})
    m = mujoco.MjModel.from_xml_path(str(path))
    assert [a["site"] for a in lite.actuators] == m.actuator_trnid[:, 0].tolist() == [1, 1]
    np.testing.assert_array_equal([a["gear6"] for a in lite.actuators], m.actuator_gear)
    info = lite.model_info()
    assert info.actuator_joint.tolist() == [-1, -1] and info.actuator_kp.tolist() == [0.0, 0.0]
    np.testing.assert_array_equal(info.actuator_ctrl_range[0], m.actuator_ctrlrange[0])


@pytest.mark.parametrize(("change", "accept"), [("", set()), ('site="rotor"', {"site_transmission"})])
def test_site_motor_is_refused_unless_accepted_and_plain(tmp_path, change, accept):
    text = DRONE.replace('site="rotor" gear="0 0 1', 'site="rotor" refsite="imu" gear="0 0 1') if change else DRONE
    with pytest.raises(MjcfLiteError) as info:
        load_mjcf(write_scene(tmp_path, text), accept=accept)
    assert info.value.feature == "site_transmission"
