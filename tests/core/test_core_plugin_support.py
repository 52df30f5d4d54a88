"""unisim_core.plugin.plugin_support: the helpers backend plugins share (scene refusal, snapshot memory,
installed versions). The warp helpers run in the mjwarp and newton tests, on real warp."""

from __future__ import annotations

import numpy as np
import pytest

from unisim_core import __version__ as core_version
from unisim_core.contract.errors import UnsupportedCapabilityError
from unisim_core.plugin.mjcf_lite import MjcfLiteError
from unisim_core.plugin.plugin_support import SnapshotMemory, installed_versions, load_mjcf_or_refuse

_HINGE = """<mujoco><worldbody><body name="arm"><joint name="j" type="hinge" frictionloss="{f}"/>
<geom type="sphere" size="0.1" mass="1"/></body></worldbody></mujoco>"""


def test_a_feature_outside_the_subset_is_refused_by_name(tmp_path):
    path = tmp_path / "hinge.xml"
    path.write_text(_HINGE.format(f="0.5"))
    with pytest.raises(UnsupportedCapabilityError, match=r"backend 'mine' does not support capability "
                                                         r"'frictionloss'.*hinge\.xml") as info:
        load_mjcf_or_refuse(str(path), "mine")
    assert (info.value.backend, info.value.capability) == ("mine", "frictionloss")
    with pytest.raises(UnsupportedCapabilityError) as info:  # the engine's own reason closes the message
        load_mjcf_or_refuse(str(path), "mine", reasons={"frictionloss": "its joints have no dry friction"})
    assert str(info.value).endswith("is read only when the backend accepts it (unisim_core.plugin.mjcf_lite."
                                    "OPTIONAL_FEATURES); mine: its joints have no dry friction"), str(info.value)
    lite = load_mjcf_or_refuse(str(path), "mine", accept={"frictionloss"})
    assert lite.body_names == ["world", "arm"]
    assert [j["frictionloss"] for j in lite.joints] == [0.5]


def test_a_malformed_file_keeps_the_readers_error(tmp_path):
    path = tmp_path / "broken.xml"
    path.write_text("<mujoco><worldbody>")
    with pytest.raises(MjcfLiteError, match="not well-formed") as info:
        load_mjcf_or_refuse(str(path), "mine")
    assert not isinstance(info.value, UnsupportedCapabilityError)


def test_snapshot_memory_keeps_the_newest_rows_per_env():
    mem = SnapshotMemory(num_envs=2, depth=2)  # room for 4 rows
    for t in range(3):  # 6 rows remembered, the first 2 dropped
        rows = np.array([[t, 0.0], [t, 1.0]])
        mem.remember(rows, (f"t{t}e{i}" for i in range(2)))
    assert len(mem) == 4
    assert mem.recall(np.array([0.0, 0.0])) is None
    assert mem.recall(np.array([1.0, 1.0])) == "t1e1"
    assert mem.recall(np.array([2.0, 0.0])) == "t2e0"
    mem.remember(np.array([[1.0, 0.0]]), ["again"])  # a row taken again is the newest (t1e1 goes next)
    mem.remember(np.array([[9.0, 9.0]]), ["new"])
    assert mem.recall(np.array([1.0, 0.0])) == "again"
    assert mem.recall(np.array([1.0, 1.0])) is None


def test_installed_versions_in_the_order_given():
    out = installed_versions("unisim-contract", "no-such-distribution-for-unisim")
    assert list(out) == ["unisim-contract", "no-such-distribution-for-unisim"]
    assert out == {"unisim-contract": core_version, "no-such-distribution-for-unisim": "not installed"}
