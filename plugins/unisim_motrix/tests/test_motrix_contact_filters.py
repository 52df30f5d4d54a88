"""Contact filters (``bind_contact_forces(..., against=...)``) from MotrixSim's MJCF ``<contact>``
sensors, and mocap bodies, against MuJoCo and closed forms (see ``unisim_motrix._contacts``)."""

from __future__ import annotations

import numpy as np
import pytest
from motrix_testutil import scene_path

from unisim_core import SceneCfg

G = 9.81
STACK_FLIPPED = """<mujoco><option timestep="0.002"/>
  <worldbody><geom name="floor" type="plane" size="5 5 0.1" friction="0.5 0.005 0.0001"/>
    <body name="top" pos="0 0 0.3"><freejoint/><inertial pos="0 0 0" mass="1" diaginertia="0.0067 0.0067 0.0067"/>
      <geom type="box" size="0.1 0.1 0.1" friction="0.5 0.005 0.0001" mass="0"/></body>
    <body name="bottom" pos="0 0 0.1"><freejoint/><inertial pos="0 0 0" mass="2" diaginertia="0.0133 0.0133 0.0133"/>
      <geom type="box" size="0.1 0.1 0.1" friction="0.5 0.005 0.0001" mass="0"/></body>
  </worldbody></mujoco>"""


def _stack_reads(b, push=None):
    """Filtered forces on the stack after 0.3 s (``push``: N along +x on top's bottom face during the
    last 0.2 s, read at its end)."""
    bind = {k: b.bind_contact_forces([body], against=[other]) for k, body, other in
            (("top|bottom", "top", "bottom"), ("bottom|top", "bottom", "top"), ("bottom|world", "bottom", "world"))}
    net = b.bind_contact_forces(["top", "bottom"])
    n, top = b.num_envs, b.get_body_ids(["top"])
    b.step(np.zeros((n, 0)), 50)
    for _ in range(100):
        if push is not None:
            b.apply_body_force(top, np.tile([[[push, 0.0, 0.0]]], (n, 1, 1)), np.tile([[[0.0, -0.1 * push, 0.0]]],
                                                                                        (n, 1, 1)))
        b.step(np.zeros((n, 0)), 1)
    out = {k: c.read().astype(np.float64)[:, 0] for k, c in bind.items()}
    out["net"] = net.read().astype(np.float64)
    return out


@pytest.mark.parametrize("push", [None, 2.0])
def test_stack_filters_match_mujoco(make, push):
    """box_stack at rest and with top pushed 2 N along +x at its bottom face (static friction holds it:
    2 N < mu 9.81 N): every filtered force within 1 % of m_top g of MuJoCo's; top's only contact is
    bottom, so top|bottom equals top's net force to float32 rounding (this checks the sensors' frame
    and sign, which the world's rest, bottom|world, depends on); bottom|top is its opposite, and
    bottom's net force is bottom|world + bottom|top."""
    from unisim_mujoco import MujocoBackend

    mx = _stack_reads(make("box_stack.xml", 2), push)
    with MujocoBackend(SceneCfg(scene_path("box_stack.xml")), 2, 0.002) as ref:
        mj = _stack_reads(ref, push)
    for k in ("top|bottom", "bottom|top", "bottom|world"):
        np.testing.assert_allclose(mx[k], mj[k], atol=0.01 * G, err_msg=f"force {k} vs MuJoCo")
    np.testing.assert_allclose(mx["top|bottom"], mx["net"][:, 0], atol=1e-5 * G)
    np.testing.assert_allclose(mx["bottom|top"], -mx["net"][:, 0], atol=1e-5 * G)
    np.testing.assert_allclose(mx["bottom|world"] + mx["bottom|top"], mx["net"][:, 1], atol=1e-4 * G)
    np.testing.assert_allclose(mx["top|bottom"][:, 2], G, atol=0.01 * G)
    if push is not None:
        np.testing.assert_allclose(mx["top|bottom"][:, 0], -push, atol=0.01 * G)  # friction holds the push


def test_filtered_torques_are_refused(make):
    """A filtered binding with torques: MotrixSim's pair sensors give no moment (see _contacts)."""
    from unisim_core import UnsupportedCapabilityError

    b = make("box_stack.xml", 1)
    with pytest.raises(UnsupportedCapabilityError, match="contact_torques.*against="):
        b.bind_contact_forces(["top"], against=["bottom"], torques=True)
    b.bind_contact_forces(["top"], torques=True)


def test_filter_signs_do_not_depend_on_body_order(make, tmp_path):
    """The same stack with top declared first (body 1 lies above body 2): top|bottom still reads
    +m_top g, bottom|top -m_top g, bottom|world +3 g (the sensor reads the force on the later body)."""
    path = tmp_path / "flipped.xml"
    path.write_text(STACK_FLIPPED)
    from unisim_motrix import MotrixBackend

    with MotrixBackend(SceneCfg(str(path)), 1, 0.002) as b:
        r = _stack_reads(b)
    np.testing.assert_allclose(r["top|bottom"][0], [0, 0, G], atol=0.01 * G)
    np.testing.assert_allclose(r["bottom|top"][0], [0, 0, -G], atol=0.01 * G)
    np.testing.assert_allclose(r["bottom|world"][0], [0, 0, 3 * G], atol=0.01 * 3 * G)


def test_new_filter_rebuilds_the_model_keeping_state_and_overrides(make):
    """Binding a filter that needs new sensors loads the model again with them: every env's qpos and
    qvel (bit for bit) and randomized fields move over, reads stay as they were, contact reads restart
    at 0 until the next step (as after set_physics_state); a second binding of the same pair does not
    rebuild again."""
    from unisim_core import InitRandomizationPlan, RandomizationOp

    b = make("box_stack.xml", 3)
    b.step(np.zeros((3, 0)), 20)
    b.apply_init_randomization(InitRandomizationPlan([RandomizationOp(
        term="body_mass", env_ids=np.array([1]), target_ids=b.get_body_ids(["top"]), values=np.array([[0.5]]),
        operation="add")]))
    net = b.bind_contact_forces(["bottom"])
    before = (b.get_qpos(), b.get_qvel(), b.get_body_pos_w(np.arange(3)), b.get_model_field("body_mass"))
    assert np.abs(net.read()).max() > 1.0
    generation = b._generation
    f = b.bind_contact_forces(["top"], against=["bottom"])
    assert b._generation == generation + 1
    after = (b.get_qpos(), b.get_qvel(), b.get_body_pos_w(np.arange(3)), b.get_model_field("body_mass"))
    for x, y in zip(before, after):
        assert np.array_equal(x, y)
    assert np.all(f.read() == 0.0) and np.all(net.read() == 0.0)
    b.bind_contact_forces(["bottom"], against=["top"])
    assert b._generation == generation + 1
    b.step(np.zeros((3, 0)), 100)
    fz = f.read()[:, 0, 2]
    np.testing.assert_allclose(fz, [G, 1.5 * G, G], rtol=0.01)  # env 1's top weighs 1.5 kg


def test_mocap_body_pushes_and_is_sensed(make, tmp_path):
    """A kinematic (mocap) paddle moved per env into a free box: the box is pushed along +x in env 0
    only, and the filter box|paddle reads the push while box|world reads the floor."""
    path = tmp_path / "paddle.xml"
    path.write_text("""<mujoco><option timestep="0.002"/><worldbody>
      <geom name="floor" type="plane" size="5 5 0.1"/>
      <body name="paddle" mocap="true" pos="-0.5 0 0.1"><geom type="box" size="0.02 0.2 0.08"/></body>
      <body name="box" pos="0 0 0.1"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1"/></body>
      </worldbody></mujoco>""")
    from unisim_motrix import MotrixBackend

    with MotrixBackend(SceneCfg(str(path)), 2, 0.002) as b:
        paddle = b.bind_mocap_pose("paddle")
        push = b.bind_contact_forces(["box"], against=["paddle"])
        floor = b.bind_contact_forces(["box"], against=["world"])
        net = b.bind_contact_forces(["box"])
        b.step(np.zeros((2, 0)), 50)
        np.testing.assert_allclose(floor.read()[:, 0], [[0, 0, G]] * 2, atol=0.01 * G)
        for i in range(100):  # 0.2 s at 1 m/s into the box in env 0
            paddle.set(np.array([[-0.5 + 0.01 * (i + 1), 0, 0.1]]), np.array([[1.0, 0, 0, 0]]), env_ids=np.array([0]))
            b.step(np.zeros((2, 0)), 5)
            if i == 80:
                seen = push.read()[:, 0].copy()
                np.testing.assert_allclose(push.read() + floor.read(), net.read(), atol=1e-4 * G)
        x = b.get_base_pos()[:, 0]
        assert x[0] > 0.2 and abs(x[1]) < 1e-4, x
        assert seen[0, 0] > 1.0 and np.all(seen[1] == 0.0), seen
        np.testing.assert_allclose(floor.read()[1, 0], [0, 0, G], atol=0.01 * G)
