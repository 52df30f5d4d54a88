"""unisim_core.contacts: the binding's bookkeeping (zero after resets, threshold, timers) and
ContactSums, on the fake backend with a scripted contact source (a test double for an engine's
contact list: every answer below follows from the script)."""

from __future__ import annotations

import numpy as np
import pytest

from unisim_core import Capability, InvalidInputError, SceneCfg, UnsupportedCapabilityError
from unisim_core.contacts import ContactSums, mujoco_contact_forces
from unisim_core.fake import FakeBackend
from unisim_core.scenes import scene_path


class ScriptedContacts(FakeBackend):
    """The fake with ``contact_forces``: body b reads ``script[env, b]`` (world frame, N)."""

    name = "scripted_contacts"
    CAPABILITIES = FakeBackend.CAPABILITIES | {Capability.CONTACTS, Capability.CONTACT_FORCES}

    def _bind_contact_forces(self, body_ids, against_ids):
        def fill(out):
            out[...] = self.script[:, body_ids]
        return fill


def _backend(n=2):
    b = ScriptedContacts(SceneCfg(str(scene_path("quadruped"))), n, 0.01)
    b.script = np.zeros((n, b.num_bodies, 3))
    return b


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
