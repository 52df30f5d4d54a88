"""MuJoCo Warp's contact and constraint buffers under Newton's SolverMuJoCo: sized from the model as
unisim-mjwarp sizes them, an overflow is an ``EngineError`` naming the buffer and the option (never a
``wp.printf`` per world and substep while contacts are dropped), an explicit size the initial state
does not fit is refused, and a geom's contact gap is the file's (MuJoCo's 0), not Newton's 0.1 m."""

from __future__ import annotations

import numpy as np
import pytest
from newton_testutil import QUADRUPED

from unisim_core import EngineError, InvalidInputError

mujoco = pytest.importorskip("mujoco", reason="the reference is MuJoCo")

BOX = ('<mujoco><worldbody><geom name="floor" type="plane" size="5 5 0.1"/><body name="box" pos="0 0 {z}">'
       '<freejoint/><inertial pos="0 0 0" mass="1" diaginertia="0.0067 0.0067 0.0067"/>'
       '<geom type="box" size="0.1 0.1 0.1" margin="{margin}" mass="0"/></body></worldbody></mujoco>')


def _box(tmp_path, z: float, margin: float = 0.0) -> str:
    path = tmp_path / "box.xml"
    path.write_text(BOX.format(z=z, margin=margin))
    return str(path)


def test_contact_overflow_names_the_buffer_and_the_option(make, tmp_path, capfd):
    """A box dropped from 2 cm lands on its 4 corners (4 contacts); with room for 1 contact per world the
    step that lands it raises naming NARROWPHASE, nconmax and the sizes in use, and MuJoCo Warp prints nothing."""
    b = make(_box(tmp_path, 0.12), nconmax=1)
    assert b.buffers[0] == 1
    with pytest.raises(EngineError, match=r"\(NARROWPHASE: contacts dropped\) in env\(s\) \[0, 1\].*option\(s\) "
                                          r"nconmax \(now nconmax=1, njmax=\d+ per env; naconmax=2 "):
        b.step(np.zeros((2, 0)), 50)  # 2 cm of free fall takes 0.064 s
    assert "overflow" not in capfd.readouterr().out


def test_explicit_nconmax_below_the_initial_state_is_refused(make, tmp_path):
    """The box resting on the plane already has 4 contacts: nconmax=1 is an error naming the option
    (SolverMuJoCo would raise it to 4 with a warning)."""
    with pytest.raises(InvalidInputError, match=r"nconmax: expected at least 4 .*got 1"):
        make(_box(tmp_path, 0.1), nconmax=1)


def test_buffers_and_contact_gaps_are_mujocos(quadruped):
    """Sized from MuJoCo's compile of the file (unisim-mjwarp's rule) at qpos0, where SolverMuJoCo
    starts, and at the keyframe, the larger of each; every geom's gap is the file's 0 (Newton's rigid_gap
    of 0.1 m made contacts 0.1 m apart take slots: the Go2 standing overflowed 64 a world), so the worlds
    start with MuJoCo's contacts (4 feet on the floor)."""
    from unisim_mjwarp import buffer_sizes

    m = mujoco.MjModel.from_xml_path(str(QUADRUPED))
    d = mujoco.MjData(m)
    at_qpos0 = buffer_sizes(m, d)
    mujoco.mj_resetDataKeyframe(m, d, mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_KEY, "home"))
    assert quadruped.buffers == tuple(max(a, b) for a, b in zip(at_qpos0, buffer_sizes(m, d)))
    assert not quadruped._solver.mj_model.geom_gap.any()
    quadruped.set_state(np.arange(2), np.tile(d.qpos, (2, 1)), np.zeros((2, m.nv)))
    quadruped.step(np.tile(d.ctrl, (2, 1)), 1)
    mujoco.mj_step(m, d)
    assert quadruped._solver.mjw_data.nacon.numpy()[0] == 2 * d.ncon == 8


def test_zeroed_margins_are_one_warning_for_the_scene(make, tmp_path):
    """SolverMuJoCo zeroes geom margins for MuJoCo Warp's CCD (newton #2106), one warning per geom;
    the backend says it once for the scene, with the count and the largest margin."""
    from unisim_newton._scene import NewtonModellingWarning

    with pytest.warns(NewtonModellingWarning, match=r"box.xml: SolverMuJoCo zeroes the margin of 1 geom\(s\) "
                                                    r"\(largest 0.003 m\)") as record:
        make(_box(tmp_path, 0.3, margin=0.003))
    assert not [w for w in record if "authored margin" in str(w.message)]
