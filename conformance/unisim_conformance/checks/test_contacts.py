"""Layer ``contacts`` - net contact forces per body (capability ``contact_forces``) and their torques
about each body's centre of mass (capability ``contact_torques``) against closed forms.

``bind_contact_forces`` reports the force contacts exert on each body, world frame, N, at the state
of the last step (see ``unisim_core.contract.contacts``); with ``torques=True``, ``read_torque()`` reports
the torque of those forces about the body's COM, N m. Every check has a closed-form answer from
Newton's and Euler's laws on the kit's box scenes (g = 9.81, box m = 1 kg, half-size 0.1 m,
mu = 0.5) and the quadruped (12.6 kg). Tolerances are relative to the weight involved (the
torques: to m g times the lever) and explained per check: soft contacts (MuJoCo's solref) settle
over ~0.1 s, and a PD-held robot still rocks after a second.
"""

from __future__ import annotations

import numpy as np
import pytest

from unisim_core import Capability, InvalidInputError, InvalidTypeError, UnknownNameError, UnsupportedCapabilityError
from unisim_core.contract.quat import quat_apply

from .._support import home_ctrl

pytestmark = [pytest.mark.contacts, pytest.mark.contract("1.0"), pytest.mark.requires(Capability.CONTACT_FORCES)]

G = 9.81
MU = 0.5
HALF = 0.1  # box half-size, m: the lever of the box's contact torques
FEET = ("FL_calf", "FR_calf", "RL_calf", "RR_calf")
TORQUES = pytest.mark.requires(Capability.CONTACT_TORQUES)


def _settled_box(kit, num_envs=2, seconds=0.1):
    b = kit.make("box_on_plane", num_envs)
    b.step(np.zeros((num_envs, b.num_actuators)), int(round(seconds / b.sim_dt)))
    return b


def _lift(b, env_ids, z=1.0):
    q, v = b.get_qpos().astype(np.float64), np.zeros((len(env_ids), b.nv))
    q = q[env_ids]
    q[:, 2] = z
    q[:, 3:7] = [1.0, 0.0, 0.0, 0.0]
    b.set_state(np.asarray(env_ids), q, v)


def test_resting_box_weight(kit, record_property):
    """box_on_plane after 0.1 s at rest: F = (0, 0, m g) = (0, 0, 9.81) N on the box. Tolerance
    1 % of m g on each component: soft contacts settle to their equilibrium penetration within
    ~0.1 s (MuJoCo: 9.795 N at 0.1 s, 0.15 % low); rigid solvers are exact."""
    b = _settled_box(kit)
    f = b.bind_contact_forces(["box"]).read()
    assert f.shape == (2, 1, 3) and f.dtype == np.dtype(kit.dtype), f"read(): {f.shape} {f.dtype}"
    f = f.astype(np.float64)
    record_property("resting_box_fz_N", float(f[0, 0, 2]))
    np.testing.assert_allclose(f[:, 0], np.tile([0.0, 0.0, G], (2, 1)), atol=0.01 * G,
                               err_msg="net contact force on a resting 1 kg box: (0, 0, m g) N, world frame")


def test_free_fall_reads_zero(kit):
    """The box released 0.9 m above the floor: no contact for 0.1 s (it falls 5 cm), so every read
    is exactly 0 and ``in_contact`` is False (a zero force is not a small one: tolerance 0)."""
    b = kit.make("box_on_plane", 2)
    c = b.bind_contact_forces(["box"], threshold=0.0)
    _lift(b, [0, 1])
    for _ in range(5):
        b.step(np.zeros((2, b.num_actuators)), 10)
        f = c.read()
        assert np.all(f == 0.0), f"box in free fall: contact force {f[:, 0].tolist()} N, expected exactly 0"
        assert not c.in_contact().any(), "box in free fall reported in contact"


def test_standing_quadruped_weight(kit, record_property):
    """quadruped at ``home`` held by its PD servos: the feet carry the whole weight, M g = 12.6 *
    9.81 = 123.6 N, each foot a positive share, and nothing else touches the floor: the sum over
    all bodies (internal contacts cancel, action = reaction) equals the sum over the feet. The robot
    lands 2 cm and sways (sum F = M g + M a_com), so the sum is averaged over 0.2-0.5 s, read every
    10 substeps. Tolerance 3 % of M g
    vertically (MuJoCo: +1.3 %), 10 % horizontally (the base sways along x: MuJoCo's mean is
    +7.5 N = 6 % over this window, and -0.7 N over 0.4-1.0 s)."""
    b = kit.make("quadruped", 1)
    q0 = np.asarray(b.get_keyframe_qpos("home"), dtype=np.float64)[None]
    b.set_state(np.array([0]), q0, np.zeros((1, b.nv)))
    feet = b.bind_contact_forces(list(FEET))
    everything = b.bind_contact_forces([n for n in b.model_info.body_names[1:] if n])
    ctrl, k = home_ctrl(b), 10
    b.step(ctrl, int(round(0.2 / b.sim_dt)))
    samples = []
    for _ in range(int(round(0.3 / (k * b.sim_dt)))):
        b.step(ctrl, k)
        samples.append(feet.read().astype(np.float64)[0])
    f = np.mean(samples, axis=0)
    weight = float(np.sum(b.get_body_mass())) * G
    total = f.sum(axis=0)
    record_property("quadruped_feet_sum_N", total.tolist())
    record_property("quadruped_weight_N", weight)
    assert np.all(f[:, 2] > 0.05 * weight / 4), f"each foot must carry a positive share: mean f_z = {f[:, 2]} N"
    assert abs(total[2] - weight) <= 0.03 * weight, \
        f"mean vertical sum over the feet {total[2]:.2f} N vs M g = {weight:.2f} N (3 %)"
    assert np.hypot(total[0], total[1]) <= 0.1 * weight, f"mean horizontal sum over the feet {total[:2]} N (10 % M g)"
    np.testing.assert_allclose(everything.read().astype(np.float64)[0].sum(axis=0), samples[-1].sum(axis=0),
                               atol=1e-4 * weight, err_msg="only the feet touch the floor: the sum over all "
                                                           "bodies must equal the sum over the feet")


@pytest.mark.requires(Capability.BODY_FORCE, Capability.BODY_TORQUE)
def test_friction_force_within_cone(kit, record_property):
    """box_on_plane pushed along +x for 0.15 s after settling 0.05 s, in steps of 2 substeps, read
    after every other step of the last 0.075 s. The push acts at the bottom face (F at the COM plus the
    torque (0, -0.1 F, 0)), so it does not rock the box. Below the limit (4.5 N < mu m g = 4.905 N)
    static friction balances it: mean F = (-4.5, 0, m g). Above it (5.3 N) the box slides and
    friction saturates: |F_t| = mu F_n in the mean. Every sample stays inside the cone,
    |F_t| <= mu F_n. Tolerances: 5 % of mu m g (0.25 N) on the static means (MuJoCo: exact to
    1e-3 N); 2 % of mu F_n + 0.01 N on the cone and on the sliding ratio (pyramidal and linearized
    cones are exact along their axes, and the push is along one). A sliding box chatters
    vertically on soft contacts (MuJoCo's samples touch F_n = 0), so its normal force is not
    compared with m g."""
    out = {}
    tol = 0.05 * MU * G
    k = 2
    for push in (4.5, 5.3):
        b = _settled_box(kit, 1, 0.05)
        box = b.get_body_ids(["box"])
        c = b.bind_contact_forces(["box"])
        n = int(round(0.15 / (k * b.sim_dt)))
        samples = []
        for i in range(n):
            b.apply_body_force(box, np.array([[[push, 0.0, 0.0]]]), np.array([[[0.0, -0.1 * push, 0.0]]]))
            b.step(np.zeros((1, b.num_actuators)), k)
            if i >= n // 2 and i % 2:
                samples.append(c.read().astype(np.float64)[0, 0])
        s = np.asarray(samples)
        tangential = np.hypot(s[:, 0], s[:, 1])
        worst = int(np.argmax(tangential - MU * s[:, 2]))
        assert tangential[worst] <= 1.02 * MU * s[worst, 2] + 0.01, \
            f"push {push} N: |F_t| {tangential[worst]:.4f} N exceeds mu F_n = {MU * s[worst, 2]:.4f} N"
        out[push] = s.mean(axis=0)
        assert abs(out[push][1]) <= tol, f"push {push} N along x: mean lateral friction {out[push][1]:.4f} N"
    record_property("friction_below_limit_mean_N", out[4.5].tolist())
    record_property("friction_above_limit_mean_N", out[5.3].tolist())
    np.testing.assert_allclose(out[4.5], [-4.5, 0.0, G], atol=tol,
                               err_msg="below the limit static friction balances the push: mean F = (-4.5, 0, m g)")
    ratio = -out[5.3][0] / out[5.3][2]
    assert abs(ratio - MU) <= 0.02 * MU, f"sliding: mean -F_x / F_n = {ratio:.4f}, expected mu = {MU}"


@pytest.mark.requires(Capability.CONTACT_FILTERS)
def test_filtered_pair_equal_and_opposite(kit, record_property):
    """box_stack (bottom 2 kg on the floor, top 1 kg on bottom) after 0.15 s: the force on top from
    bottom is (0, 0, m_top g) = 9.81 N, the force on bottom from top is its opposite (Newton's
    third law, tolerance 1e-4 m_top g: the same contacts read from both sides), bottom against
    the world carries both, 29.43 N, and bottom's net force is m_bottom g = 19.62 N (1 % each,
    soft-contact settling as for the resting box)."""
    b = kit.make("box_stack", 2)
    top_vs_bottom = b.bind_contact_forces(["top"], against=["bottom"])
    bottom_vs_top = b.bind_contact_forces(["bottom"], against=["top"])
    bottom_vs_world = b.bind_contact_forces(["bottom"], against=["world"])
    both = b.bind_contact_forces(["bottom", "top"])
    b.step(np.zeros((2, b.num_actuators)), int(round(0.15 / b.sim_dt)))
    ft = top_vs_bottom.read().astype(np.float64)[:, 0]
    fb = bottom_vs_top.read().astype(np.float64)[:, 0]
    record_property("stack_top_from_bottom_N", ft[0].tolist())
    record_property("stack_bottom_from_top_N", fb[0].tolist())
    np.testing.assert_allclose(ft, np.tile([0, 0, G], (2, 1)), atol=0.01 * G, err_msg="force on top from bottom")
    np.testing.assert_allclose(fb, -ft, atol=1e-4 * G, err_msg="force on bottom from top: equal and opposite")
    np.testing.assert_allclose(bottom_vs_world.read().astype(np.float64)[:, 0], np.tile([0, 0, 3 * G], (2, 1)),
                               atol=0.01 * 3 * G, err_msg="force on bottom from the floor: (m_bottom + m_top) g")
    net = both.read().astype(np.float64)
    np.testing.assert_allclose(net[:, 0], np.tile([0, 0, 2 * G], (2, 1)), atol=0.01 * 3 * G,
                               err_msg="net contact force on bottom: m_bottom g (floor minus top)")
    np.testing.assert_allclose(net[:, 1], ft, atol=1e-4 * G, err_msg="top's only contact is bottom: net == filtered")


def test_lifted_body_reads_off_at_once(kit):
    """set_state lifting the resting box of env 0 to z = 1 m: the next read of env 0 is exactly 0
    and not in contact (no stale value of the resting contact), its timers restart (contact time
    0, air time dt after one step); env 1, not reset, reads what it read before, bit for bit."""
    b = _settled_box(kit)
    c = b.bind_contact_forces(["box"], track_air_time=True)
    before = c.read().copy()
    assert c.in_contact().all(), f"resting box not in contact: {before[:, 0].tolist()} N"
    _lift(b, [0])
    f = c.read()
    assert np.all(f[0] == 0.0), f"env 0 lifted by set_state still reads {f[0, 0].tolist()} N"
    assert np.array_equal(f[1], before[1]), "env 1 was not reset: its contact force must not change"
    assert c.in_contact().tolist() == [[False], [True]], "contact state right after the lift"
    assert c.contact_time[0, 0] == 0.0 and c.air_time[0, 0] == 0.0, "timers of the reset env restart at 0"
    b.step(np.zeros((2, b.num_actuators)), 1)
    assert np.all(c.read()[0] == 0.0), "env 0 in the air one step after the lift"
    assert c.air_time[0, 0] == pytest.approx(b.sim_dt), f"air time after one step: {c.air_time[0, 0]}"
    assert c.contact_time[1, 0] > 0.0 and c.air_time[1, 0] == 0.0, "env 1 stays in contact"


def test_air_time_of_a_drop(kit, record_property):
    """The box released from rest h = 0.05 m above its resting height lands after
    t = sqrt(2 h / g) = 0.1010 s: ``first_contact`` fires once, and ``last_air_time`` then holds
    the flight time. Steps of 5 substeps (0.01 s) sample the contact state; tolerance one such
    step plus 2 substeps (soft-contact penetration before the force passes the 1 N threshold)."""
    b = kit.make("box_on_plane", 1)
    c = b.bind_contact_forces(["box"], track_air_time=True)
    _lift(b, [0], 0.1 + 0.05)
    k, firsts, landed_air = 5, 0, None
    for _ in range(int(round(0.15 / (k * b.sim_dt)))):
        b.step(np.zeros((1, b.num_actuators)), k)
        if c.first_contact()[0, 0]:
            firsts += 1
            landed_air = float(c.last_air_time[0, 0])
    expected = float(np.sqrt(2 * 0.05 / G))
    record_property("drop_air_time_s", landed_air)
    assert firsts == 1, f"first_contact fired {firsts} times during one landing"
    assert abs(landed_air - expected) <= (k + 2) * b.sim_dt, \
        f"last_air_time {landed_air:.4f} s, expected sqrt(2 h/g) = {expected:.4f} s"
    assert c.air_time[0, 0] == 0.0 and c.contact_time[0, 0] > 0.0, "the box is resting after landing"


def test_binding_rejects_bad_input(kit):
    """Unknown bodies, the world as a sensed body, duplicates, a negative threshold: named errors."""
    b = kit.make("box_on_plane", 1)
    with pytest.raises(UnknownNameError, match="bodies"):
        b.bind_contact_forces(["no_such_body"])
    if Capability.CONTACT_FILTERS in kit.caps:
        with pytest.raises(UnknownNameError, match="against"):
            b.bind_contact_forces(["box"], against=["no_such_body"])
    with pytest.raises(InvalidInputError, match="bodies"):
        b.bind_contact_forces(["box", "box"])
    with pytest.raises(InvalidInputError, match="world"):
        b.bind_contact_forces([b.model_info.body_names[0]])
    with pytest.raises(InvalidInputError, match="threshold"):
        b.bind_contact_forces(["box"], threshold=-1.0)
    with pytest.raises(InvalidInputError, match=r"bodies: expected body ids in \[1, 2\), got \[2\]"):
        b.bind_contact_forces([2])
    with pytest.raises(InvalidInputError, match="bodies.*world"):
        b.bind_contact_forces([0])
    with pytest.raises(InvalidInputError, match="bodies: expected distinct"):
        b.bind_contact_forces(np.array([1, 1]))
    with pytest.raises(InvalidTypeError, match="bodies: expected all body names.*or all integer body ids"):
        b.bind_contact_forces(["box", 1])
    with pytest.raises(InvalidTypeError, match="torques"):
        b.bind_contact_forces(["box"], torques=1)


def test_bodies_by_integer_id(kit):
    """Bodies bound by integer id (``get_body_ids``' ids, or ``range(1, num_bodies)`` for models
    with unnamed bodies) read exactly what the same bodies bound by name read, in the order given."""
    b = kit.make("quadruped", 1)
    q0 = np.asarray(b.get_keyframe_qpos("home"), dtype=np.float64)[None]
    b.set_state(np.array([0]), q0, np.zeros((1, b.nv)))
    by_name = b.bind_contact_forces(list(FEET[::-1]))
    by_id = b.bind_contact_forces(b.get_body_ids(list(FEET[::-1])))
    by_range = b.bind_contact_forces(range(1, b.num_bodies))
    b.step(home_ctrl(b), 50)
    assert by_id.body_names == FEET[::-1], f"names of bodies bound by id: {by_id.body_names}"
    np.testing.assert_array_equal(by_id.read(), by_name.read(), err_msg="bound by id vs by name")
    ids = b.get_body_ids(list(FEET[::-1])) - 1
    np.testing.assert_array_equal(by_range.read()[:, ids], by_name.read(), err_msg="range(1, num_bodies)")


# ---------------------------------------------------------------------------------- torques
def _com_w(b, ids):
    """``(num_envs, n, 3)`` world COM of ``ids``: frame position + frame rotation of the body's ipos."""
    ipos = b.get_body_ipos().astype(np.float64)[ids]
    return b.get_body_pos_w(ids).astype(np.float64) + quat_apply(b.get_body_quat_w(ids).astype(np.float64), ipos)


def _pushed_box_torque(kit, force, torque, seconds=0.15, k=2):
    """box_on_plane settled 0.05 s, then the wrench (force at the COM, torque) staged before every
    step of ``k`` substeps for ``seconds``; the mean contact force and torque over every other read
    of the last half, and the box's displacement."""
    b = _settled_box(kit, 1, 0.05)
    box = b.get_body_ids(["box"])
    c = b.bind_contact_forces(["box"], torques=True)
    start = b.get_base_pos().astype(np.float64)[0]
    n = int(round(seconds / (k * b.sim_dt)))
    forces, torques = [], []
    for i in range(n):
        b.apply_body_force(box, np.array([[force]], dtype=np.float64), np.array([[torque]], dtype=np.float64))
        b.step(np.zeros((1, b.num_actuators)), k)
        if i >= n // 2 and i % 2:
            forces.append(c.read().astype(np.float64)[0, 0])
            torques.append(c.read_torque().astype(np.float64)[0, 0])
    moved = b.get_base_pos().astype(np.float64)[0] - start
    return np.mean(forces, axis=0), np.mean(torques, axis=0), moved


@TORQUES
def test_resting_box_torque(kit, record_property):
    """box_on_plane after 0.1 s at rest: the floor's forces balance the weight, which acts at the
    COM, so their torque about the COM is (0, 0, 0), in both envs (contact points in the contract's
    world frame: an engine that spaces its envs apart must not leak the spacing into the moment).
    Tolerance 1 % of m g x 0.1 m (0.0098 N m, the torque of a 1 % shift of the support point over
    the half-size; MuJoCo: 1.7e-7 N m)."""
    b = _settled_box(kit)
    c = b.bind_contact_forces(["box"], torques=True)
    t = c.read_torque()
    assert t.shape == (2, 1, 3) and t.dtype == np.dtype(kit.dtype), f"read_torque(): {t.shape} {t.dtype}"
    t = t.astype(np.float64)
    record_property("resting_box_torque_Nm", t[0, 0].tolist())
    np.testing.assert_allclose(t[:, 0], 0.0, atol=0.01 * G * HALF,
                               err_msg="contact torque about a resting box's COM: (0, 0, 0) N m")


@TORQUES
@pytest.mark.requires(Capability.BODY_FORCE, Capability.BODY_TORQUE)
def test_pushed_box_torque(kit, record_property):
    """box_on_plane pushed along +x at its bottom face below the friction limit (as
    ``friction_force_within_cone``: F = (4.5, 0, 0) N at the COM plus (0, -0.45, 0) N m), for
    0.15 s in steps of 2 substeps, read every other step of the last half: static equilibrium,
    so the contacts' torque about the COM cancels the applied one, mean (0, +0.45, 0) N m (friction
    -4.5 N acting 0.1 m below the COM, and the normal forces centred under it). Tolerance 2 % of
    m g x 0.1 m (0.0196 N m; MuJoCo: exact to 1e-6 N m, the box creeps 0.4 mm). A contact point
    taken at the body's origin reads 0; a moment of the reaction reads -0.45."""
    f, t, moved = _pushed_box_torque(kit, [4.5, 0.0, 0.0], [0.0, -0.45, 0.0])
    record_property("pushed_box_torque_Nm", t.tolist())
    assert np.hypot(moved[0], moved[1]) < 0.01, f"box moved {moved[:2]} m under a push below the limit"
    np.testing.assert_allclose(t, [0.0, 0.45, 0.0], atol=0.02 * G * HALF,
                               err_msg="static equilibrium: mean contact torque about the COM = (0, +0.45, 0) N m")


@TORQUES
@pytest.mark.requires(Capability.BODY_TORQUE)
def test_yaw_torque_balanced(kit, record_property):
    """box_on_plane with an applied yaw torque (0, 0, 0.2) N m, below the limit of its corner
    friction (mu m g x 0.1 sqrt(2) = 0.69 N m): static friction at the contact points twists back,
    mean contact torque about the COM (0, 0, -0.2) N m (same schedule as ``pushed_box_torque``).
    Tolerance 2 % of m g x 0.1 m (0.0196 N m; MuJoCo: exact to 2e-7 N m). An engine that reports
    each contact pair's force at one point has no twist and reads 0."""
    f, t, moved = _pushed_box_torque(kit, [0.0, 0.0, 0.0], [0.0, 0.0, 0.2])
    record_property("yaw_box_torque_Nm", t.tolist())
    np.testing.assert_allclose(t, [0.0, 0.0, -0.2], atol=0.02 * G * HALF,
                               err_msg="static equilibrium: mean contact torque about the COM = (0, 0, -0.2) N m")


@TORQUES
def test_standing_quadruped_torque_balance(kit, record_property):
    """quadruped at ``home`` held by its PD servos (as ``standing_quadruped_weight``): gravity acts
    at the robot's COM c and internal torques cancel, so the contact torques of every body about c,
    sum_b tau_b + (x_com_b - c) x F_b, equal the rate of the robot's angular momentum about c, ~0
    for a standing robot. Averaged over 0.2-0.5 s, read every 10 substeps. Tolerance 5 % of
    M g x 0.188 m (the feet's lever along x): 1.16 N m; MuJoCo reads (0, +0.43, 0) N m over this
    window, the base's sway about y (the same sway as the feet's +7.3 N along x)."""
    b = kit.make("quadruped", 1)
    q0 = np.asarray(b.get_keyframe_qpos("home"), dtype=np.float64)[None]
    b.set_state(np.array([0]), q0, np.zeros((1, b.nv)))
    ids = np.arange(1, b.num_bodies)
    c = b.bind_contact_forces(ids, torques=True)
    mass = b.get_body_mass().astype(np.float64)[ids]
    ctrl, k = home_ctrl(b), 10
    b.step(ctrl, int(round(0.2 / b.sim_dt)))
    samples = []
    for _ in range(int(round(0.3 / (k * b.sim_dt)))):
        b.step(ctrl, k)
        f, t = c.read().astype(np.float64)[0], c.read_torque().astype(np.float64)[0]
        x = _com_w(b, ids)[0]
        centre = mass @ x / mass.sum()
        samples.append((t + np.cross(x - centre, f)).sum(axis=0))
    total = np.mean(samples, axis=0)
    lever = 0.1881  # the feet's distance from the base's centre along x (quadruped.xml)
    record_property("quadruped_torque_about_com_Nm", total.tolist())
    assert np.linalg.norm(total) <= 0.05 * float(mass.sum()) * G * lever, \
        f"mean contact torque about the robot's COM {total} N m, expected ~0 (5 % of M g x {lever} m)"


def test_torque_binding_rejects_bad_input(kit):
    """``torques=True`` without ``contact_torques`` raises ``UnsupportedCapabilityError`` naming
    it (nothing bound); ``read_torque()`` on a binding made without torques raises
    ``InvalidInputError`` naming ``torques``."""
    b = kit.make("box_on_plane", 1)
    if Capability.CONTACT_TORQUES not in kit.caps:
        with pytest.raises(UnsupportedCapabilityError, match="contact_torques"):
            b.bind_contact_forces(["box"], torques=True)
    with pytest.raises(InvalidInputError, match="torques"):
        b.bind_contact_forces(["box"]).read_torque()
