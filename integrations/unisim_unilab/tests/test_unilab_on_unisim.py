"""UniLab 1.5.2 and UniSim in one environment (.ci/run's UniLab stage installs them):
Go2JoystickFlat switched to UniSim's engines by ``sim_backend`` alone, compared with UniLab's own
backends from the same start state and actions (``unisim_unilab.compare``).

- MuJoCo: the reference is UniLab's own MuJoCo backend (MuJoCo 3.11 through mjbatch-uni), recorded
  in a second environment (it cannot share one with UniSim's MuJoCo 4) and named by
  ``UNISIM_UNILAB_MUJOCO_REF``. Measured identical: every difference is 0.
- MotrixSim: UniLab's own MotrixSim backend, in this environment. Tolerances are ~15x the measured
  differences (joints 1.6e-6 rad, 6.3e-5 rad/s; base 9e-8 m; gyro 7e-6 rad/s; 0.02 % of foot
  contact readings, UniSim's derived from MotrixSim's contact forces).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

unilab = pytest.importorskip("unilab", reason="needs UniLab: pip install -r requirements-unilab.txt")

from unisim_unilab import compare  # noqa: E402
from unisim_unilab._options import unisim_options  # noqa: E402

STEPS, ENVS = 300, 2
MOTRIX_TOL = {"joint_pos": 2e-5, "joint_vel": 1e-3, "base_height": 1e-6, "gyro": 1e-4, "upvector": 1e-5,
              "local_linvel": 2e-5, "contact": 0.005}


@pytest.fixture(scope="module", autouse=True)
def offline_meshes():
    from unisim_unilab.standins import write_standins

    write_standins("go2")


def test_unilab_lists_unisim_engines_and_mujoco_still_imports():
    import mujoco
    from unilab.base import registry

    registry.ensure_registries()
    envs = registry.list_registered_envs()
    for task in ("Go2JoystickFlat", "G1WalkFlat"):
        assert {"unisim-mujoco", "unisim-motrix", "unisim-mjwarp", "unisim-newton", "unisim-sapien"} <= set(
            envs[task]["available_backends"]), task
    assert {"mujoco", "motrix"} <= set(envs["Go2JoystickFlat"]["available_backends"])  # UniLab's own stay
    assert int(mujoco.__version__.split(".")[0]) >= 4
    assert mujoco.MjModel.from_xml_string("<mujoco/>").nq == 0


def test_unilab_knobs_become_the_selected_engines_options():
    knobs = {"motrix_max_iterations": 20, "mjwarp_nconmax": 64, "newton_device": None, "newton_use_cuda_graph": True,
             "cpu_ids": [0], "isaacsim_render_width": 1280, "base_name": "base"}
    assert unisim_options("motrix", knobs) == {"max_iterations": 20, "base_name": "base"}
    assert unisim_options("mjwarp", knobs) == {"nconmax": 64, "base_name": "base"}
    assert unisim_options("newton", knobs) == {"base_name": "base"}  # no CUDA graph on warp's CPU device
    assert unisim_options("mujoco", knobs) == {"base_name": "base"}


def test_an_unknown_sim_backend_is_refused_naming_it():
    from unisim_unilab import engine_of

    with pytest.raises(ValueError, match=r"sim_backend: expected 'unisim-<UniSim backend>'.*got 'mujoco'"):
        engine_of("mujoco")


def test_go2_on_unisim_mujoco_is_identical_to_unilabs_mujoco():
    path = os.environ.get("UNISIM_UNILAB_MUJOCO_REF")
    if not path:
        pytest.fail("UNISIM_UNILAB_MUJOCO_REF: expected the record of UniLab's own MuJoCo backend (.ci/run makes it)")
    ref = dict(np.load(path))
    diffs, _ = compare.replay(ref, "unisim-mujoco")
    assert diffs == dict.fromkeys(diffs, 0.0), diffs


def test_go2_on_unisim_motrix_matches_unilabs_motrix():
    ref = compare.record("go2_joystick_flat/motrix", "motrix", ENVS, STEPS, amplitude=0.3)
    diffs, _ = compare.replay(ref, "unisim-motrix")
    assert {k: v for k, v in diffs.items() if v > MOTRIX_TOL[k]} == {}, diffs
    assert diffs["joint_pos"] > 0  # two MJCF compilers: not bit-identical, and the tolerance is not vacuous
