"""unisim_core.contract.contacts: the binding's bookkeeping (zero after resets, threshold, timers) and
ContactSums, on the fake backend with a scripted contact source (a test double for an engine's
contact list: every answer below follows from the script)."""

from __future__ import annotations

import numpy as np
import pytest

from unisim_core import Capability, InvalidInputError, InvalidTypeError, SceneCfg, UnsupportedCapabilityError
from unisim_core.contract.contacts import ContactSums, mujoco_contact_forces
from unisim_core.contract.quat import quat_apply
from unisim_core.plugin.fake import FakeBackend
from unisim_core.scenes import scene_path


class ScriptedContacts(FakeBackend):
    """The fake with ``contact_forces`` and ``contact_torques``: body b reads ``script[env, b, :3]``
    (world frame, N) and, with torques, the moment about the world origin ``script[env, b, 3:]``."""

    name = "scripted_contacts"
    CAPABILITIES = FakeBackend.CAPABILITIES | {Capability.CONTACTS, Capability.CONTACT_FORCES,
                                               Capability.CONTACT_TORQUES}

    def _bind_contact_forces(self, body_ids, against_ids):
        self.fills += 1

        def fill(out):
            self.reads.append(out.shape[-1])
            out[...] = self.script[:, body_ids, :out.shape[-1]]
        return fill


class ForcesOnly(ScriptedContacts):
    name = "scripted_forces_only"
    CAPABILITIES = ScriptedContacts.CAPABILITIES - {Capability.CONTACT_TORQUES}


def _backend(n=2, cls=ScriptedContacts):
    b = cls(SceneCfg(str(scene_path("quadruped"))), n, 0.01)
    b.script = np.zeros((n, b.num_bodies, 6))
    b.fills, b.reads = 0, []
    return b


def _com_w(b, ids):
    ipos = b.get_body_ipos().astype(np.float64)[ids]
    return b.get_body_pos_w(ids).astype(np.float64) + quat_apply(b.get_body_quat_w(ids).astype(np.float64), ipos)


def test_reads_zero_until_the_first_step_and_after_a_reset():
    b = _backend()
    feet = b.get_body_ids(["FL_calf", "FR_calf"])
    b.script[:, feet, 2] = [[10.0, 20.0], [30.0, 40.0]]
    c = b.bind_contact_forces(["FL_calf", "FR_calf"])
    assert np.all(c.read() == 0.0) and c.read().dtype == b.np_dtype  # not stepped since construction
    b.step(np.zeros((2, b.num_actuators)))
    np.testing.assert_array_equal(c.read()[..., 2], [[10.0, 20.0], [30.0, 40.0]])
    b.set_state(np.array([1]), b.get_qpos()[1:], b.get_qvel()[1:])
    np.testing.assert_array_equal(c.read()[..., 2], [[10.0, 20.0], [0.0, 0.0]])
    assert c.in_contact().tolist() == [[True, True], [False, False]]
    b.step(np.zeros((2, b.num_actuators)))
    np.testing.assert_array_equal(c.read()[1, :, 2], [30.0, 40.0])


def test_threshold_and_timers_follow_the_contact_phases():
    """Steps of 3 substeps (0.03 s): 2 in the air, 4 in contact, 1 in the air."""
    b = _backend(1)
    foot = b.get_body_ids(["FL_calf"])[0]
    c = b.bind_contact_forces(["FL_calf"], threshold=5.0, track_air_time=True)
    phases = [0.0, 4.9, 6.0, 6.0, 6.0, 6.0, 0.0]  # 4.9 N is below the threshold: in the air
    firsts = []
    for fz in phases:
        b.script[0, foot, 2] = fz
        b.step(np.zeros((1, b.num_actuators)), 3)
        firsts.append(bool(c.first_contact()[0, 0]))
    assert firsts == [False, False, True, False, False, False, False]
    assert c.air_time[0, 0] == pytest.approx(0.03) and c.contact_time[0, 0] == 0.0
    assert c.last_air_time[0, 0] == pytest.approx(0.06) and c.last_contact_time[0, 0] == pytest.approx(0.12)
    with pytest.raises(ValueError, match="read-only"):
        c.air_time[0, 0] = 1.0
    b.set_state(np.array([0]), b.get_qpos(), b.get_qvel())
    assert c.air_time[0, 0] == c.last_air_time[0, 0] == c.last_contact_time[0, 0] == 0.0


def test_binding_errors_name_the_argument():
    b = _backend(1)
    with pytest.raises(UnsupportedCapabilityError, match="contact_filters"):
        b.bind_contact_forces(["FL_calf"], against=["world"])
    with pytest.raises(InvalidInputError, match="track_air_time=True"):
        b.bind_contact_forces(["FL_calf"]).air_time  # noqa: B018
    with pytest.raises(InvalidInputError, match="bodies"):
        b.bind_contact_forces([])
    with pytest.raises(UnsupportedCapabilityError, match="contact_forces"):
        FakeBackend(SceneCfg(str(scene_path("quadruped"))), 1, 0.01).bind_contact_forces(["FL_calf"])


def test_contact_sums_filter_and_reaction():
    """Contacts (env, body1 -> body2, force on body2): 0->1 (floor under 1), 2->1, 1->2 reversed."""
    sums = ContactSums(np.array([1, 2]), np.array([0]), nbody=3)
    out = np.zeros((2, 2, 3))
    f = np.array([[0, 0, 5.0], [1.0, 0, 0], [0, 2.0, 0]])
    sums.add(out, np.array([0, 0, 1]), np.array([0, 2, 1]), np.array([1, 1, 2]), f)
    np.testing.assert_array_equal(out[0], [[0, 0, 5.0], [0, 0, 0]])  # only the floor counts
    np.testing.assert_array_equal(out[1], [[0, 0, 0], [0, 0, 0]])
    everything = ContactSums(np.array([1, 2]), None, nbody=3)
    out[...] = 0.0
    everything.add(out, np.array([0, 0, 1]), np.array([0, 2, 1]), np.array([1, 1, 2]), f)
    np.testing.assert_array_equal(out[0], [[1.0, 0, 5.0], [-1.0, 0, 0]])
    np.testing.assert_array_equal(out[1], [[0, -2.0, 0], [0, 2.0, 0]])


def test_pyramid_decoding_matches_mujoco():
    """condim 3 pyramid edges f = (3, 1, 2, 2), mu = (0.5, 0.5): normal 8, tangents (1, 0);
    frame rows normal z, tangents x, y -> world (0.5 * (3 - 1), 0.5 * (2 - 2), 8) = (1, 0, 8)."""
    frame = np.array([[0, 0, 1, 1, 0, 0, 0, 1, 0]], dtype=np.float64)
    rows = np.arange(10)[None]
    got = mujoco_contact_forces(frame, rows, np.array([3]), np.array([[0.5, 0.5, 0, 0, 0]]),
                                np.array([3.0, 1.0, 2.0, 2.0]), pyramidal=True)
    np.testing.assert_allclose(got, [[1.0, 0.0, 8.0]])
    got = mujoco_contact_forces(frame, rows, np.array([3]), np.array([[0.5, 0.5, 0, 0, 0]]),
                                np.array([8.0, 1.0, 0.5]), pyramidal=False)
    np.testing.assert_allclose(got, [[1.0, 0.5, 8.0]])


def test_contact_sums_moments_about_the_world_origin():
    """6 columns: the moment p x f of each contact, and -p x f for the reaction (same point)."""
    sums = ContactSums(np.array([1, 2]), None, nbody=3)
    out = np.zeros((1, 2, 6))
    f = np.array([[0, 0, 5.0], [1.0, 0, 0]])
    p = np.array([[1.0, 0, 0], [0, 2.0, 0]])
    sums.add(out, np.array([0, 0]), np.array([0, 2]), np.array([1, 1]), f, p)
    # body 1: (1,0,0)x(0,0,5) = (0,-5,0), (0,2,0)x(1,0,0) = (0,0,-2); body 2: the reaction of the second
    np.testing.assert_array_equal(out[0], [[1.0, 0, 5.0, 0, -5.0, -2.0], [-1.0, 0, 0, 0, 0, 2.0]])
    with pytest.raises(InvalidInputError, match="pos"):
        sums.add(out, np.array([0]), np.array([0]), np.array([1]), f[:1])
    out3 = np.zeros((1, 2, 3))
    sums.add(out3, np.array([0]), np.array([0]), np.array([1]), f[:1])  # 3 columns: no point needed
    np.testing.assert_array_equal(out3[0, 0], [0, 0, 5.0])


def test_torque_about_the_com_from_the_moment_about_the_origin():
    """A force F = (2, 0, 10) N on a calf at 0.05 m below its COM (and 0.03 m along +x): the
    engine reports the moment p x F about the world origin; read_torque gives (p - x_com) x F =
    (0.03, 0, -0.05) x (2, 0, 10) = (0, -0.4, 0) N m, whatever the body's position. One fill
    call per read (6 columns), and the forces read as from a forces-only binding."""
    b = _backend(2)
    ids = b.get_body_ids(["FL_calf", "RR_calf"])
    c = b.bind_contact_forces(["FL_calf", "RR_calf"], torques=True)
    forces_only = b.bind_contact_forces(["FL_calf", "RR_calf"])
    assert b.fills == 2
    b.step(np.zeros((2, b.num_actuators)))
    force = np.array([2.0, 0.0, 10.0])
    b.script[:, ids, :3] = force
    b.script[:, ids, 3:] = np.cross(_com_w(b, ids) + [0.03, 0.0, -0.05], force)  # p x F at the stepped state
    b.reads.clear()
    t = c.read_torque()
    assert t.shape == (2, 2, 3) and t.dtype == b.np_dtype
    np.testing.assert_allclose(t, np.broadcast_to([0.0, -0.4, 0.0], (2, 2, 3)), atol=1e-5)
    np.testing.assert_array_equal(c.read(), forces_only.read())
    c.read_torque()
    assert sorted(b.reads) == [3, 6], b.reads  # one fill per binding and step, torques included
    b.set_state(np.array([1]), b.get_qpos()[1:], b.get_qvel()[1:])
    assert np.all(c.read_torque()[1] == 0.0) and np.all(c.read()[1] == 0.0)  # a reset env reads zero
    np.testing.assert_allclose(c.read_torque()[0], [[0.0, -0.4, 0.0]] * 2, atol=1e-5)


def test_torques_need_the_capability_and_the_binding_flag():
    b = _backend(1, ForcesOnly)
    with pytest.raises(UnsupportedCapabilityError, match="contact_torques"):
        b.bind_contact_forces(["FL_calf"], torques=True)
    assert b.fills == 0  # nothing bound
    with pytest.raises(InvalidInputError, match="torques=True"):
        b.bind_contact_forces(["FL_calf"]).read_torque()
    with pytest.raises(InvalidTypeError, match="torques"):
        _backend(1).bind_contact_forces(["FL_calf"], torques="yes")


def test_bodies_by_integer_id():
    """ints (a list, an int array, a range) bind the same bodies as their names; errors name the
    argument, the expected range and the ids received; nothing is bound on error."""
    b = _backend(1)
    names = ["RR_calf", "FL_calf"]
    ids = b.get_body_ids(names)
    b.script[0, :, 2] = np.arange(b.num_bodies)
    b.step(np.zeros((1, b.num_actuators)))
    for bodies in (ids, ids.tolist(), [np.int64(i) for i in ids]):
        c = b.bind_contact_forces(bodies)
        assert c.body_names == tuple(names)
        np.testing.assert_array_equal(c.read()[0, :, 2], ids)
    everything = b.bind_contact_forces(range(1, b.num_bodies))
    np.testing.assert_array_equal(everything.read()[0, :, 2], np.arange(1, b.num_bodies))
    fills = b.fills
    n = b.num_bodies
    cases = [
        ([n], InvalidInputError, rf"bodies: expected body ids in \[1, {n}\), got \[{n}\]"),
        ([-1, 3], InvalidInputError, rf"bodies: expected body ids in \[1, {n}\), got \[-1\]"),
        ([0], InvalidInputError, "bodies: the world body .* has no contact force"),
        ([3, 3], InvalidInputError, r"bodies: expected distinct bodies, got \[3, 3\]"),
        (["base", 3], InvalidTypeError, r"bodies: expected all body names \(str\) or all integer body ids"),
        ([True], InvalidTypeError, "bodies: expected all body names"),
        ([1.0], InvalidTypeError, "bodies: expected all body names"),
        (np.array([1.0]), InvalidInputError, "bodies: expected a 1-D array of integer body ids"),
        (np.array([[1]]), InvalidInputError, "bodies: expected a 1-D array"),
        (3, InvalidTypeError, "bodies: expected a sequence"),
    ]
    for bodies, err, match in cases:
        with pytest.raises(err, match=match):
            b.bind_contact_forces(bodies)
    assert b.fills == fills


def test_against_ids_are_validated():
    class Filtered(ScriptedContacts):
        CAPABILITIES = ScriptedContacts.CAPABILITIES | {Capability.CONTACT_FILTERS}

    b = _backend(1, Filtered)
    n = b.num_bodies
    c = b.bind_contact_forces([1], against=[0, 0])
    assert c.against_ids.tolist() == [0] and c.against_names == (b.model_info.body_names[0],) * 2
    with pytest.raises(InvalidInputError, match=rf"against: expected body ids in \[0, {n}\), got \[{n}\]"):
        b.bind_contact_forces([1], against=[n])
