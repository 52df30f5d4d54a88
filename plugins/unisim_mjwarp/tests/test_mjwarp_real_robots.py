"""Real robots (MuJoCo Menagerie corpus, ``../shared/corpus/menagerie``) on MuJoCo Warp's CPU device."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest

from unisim_core import SceneCfg
from unisim_core.contract.errors import UnsupportedCapabilityError
from unisim_mjwarp import MjwarpBackend

CORPUS = Path(__file__).resolve().parents[3] / ".." / "shared" / "corpus" / "menagerie"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="the Menagerie corpus (../shared/corpus/menagerie) "
                                "is absent")


def test_buffers_sized_from_the_model_hold_a_standing_quadruped():
    """google_barkour_v0 standing at its keyframe needs up to 124 constraint rows in 60 steps;
    MuJoCo Warp's default (64) overflowed at step 51. Sized from the model it runs, matching MuJoCo."""
    path = str(CORPUS / "google_barkour_v0" / "scene.xml")
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, 0)
    ctrl = np.clip(d.ctrl, m.actuator_ctrlrange[:, 0], m.actuator_ctrlrange[:, 1])
    b = MjwarpBackend(SceneCfg(path, default_keyframe="standing"), 2, float(m.opt.timestep), device="cpu",
                      np_dtype=np.float64)
    try:
        assert b._buffers[1] >= 124
        nefc = 0
        for _ in range(60):
            d.ctrl[:] = ctrl
            mujoco.mj_step(m, d)
            nefc = max(nefc, d.nefc)
        b.step(np.tile(ctrl, (2, 1)), 60)
        assert nefc > 64  # the case the default buffers could not hold
        np.testing.assert_allclose(b.get_qpos(), np.tile(d.qpos, (2, 1)), atol=1e-3)
    finally:
        b.close()


def test_engine_plugins_are_refused_naming_the_element():
    """shadow_dexee's actuators are MuJoCo plugins; the refusal names the vocabulary feature and the actuator."""
    with pytest.raises(UnsupportedCapabilityError) as info:
        MjwarpBackend(SceneCfg(str(CORPUS / "shadow_dexee" / "scene.xml")), 1, 0.002, device="cpu")
    assert info.value.capability == "plugin_actuator"
    assert "actuator 'F0/J0_actuator' of type <plugin> is not supported by mjwarp" in str(info.value)
