"""Deliberately broken contact sensing (subclasses of the MuJoCo backend), each with one classic bug.

Referenced by ``test_kit_contacts.py`` as ``broken_contact_backends:Name``; each must fail the
named ``contacts`` check (``EXPECTED``), and each broken contact torque exactly the torque checks
of ``EXPECTED_TORQUES``. MuJoCo is the base: the fake backend has no contacts.
"""

from __future__ import annotations

import numpy as np
from edited_scene import construct_edited

from unisim_mujoco import MujocoBackend


def _wrap(fill, fn):
    def wrapped(out):
        fill(out)
        fn(out)
    return wrapped


class ReactionForce(MujocoBackend):
    """Reports the force the body exerts on the others (the reaction), not the one it receives."""

    name = "broken_contact_reaction"

    def _bind_contact_forces(self, body_ids, against_ids):
        return _wrap(super()._bind_contact_forces(body_ids, against_ids), lambda out: np.negative(out, out=out))


class WeightNotContact(MujocoBackend):
    """Reports contact force plus the body's weight support (m g up) whether or not it touches."""

    name = "broken_contact_weight"

    def _bind_contact_forces(self, body_ids, against_ids):
        fill = super()._bind_contact_forces(body_ids, against_ids)
        mass = np.asarray(self.model.body_mass)[body_ids]

        def wrapped(out):
            fill(out)
            touching = np.linalg.norm(out, axis=-1) > 0
            out[..., 2] += np.where(touching, 0.0, mass * 9.81)
        return wrapped


class MostLoadedOnly(MujocoBackend):
    """Reports only the most loaded of the bound bodies in each env (the others read 0)."""

    name = "broken_contact_most_loaded_only"

    def _bind_contact_forces(self, body_ids, against_ids):
        def keep_max(out):
            norms = np.linalg.norm(out, axis=-1)
            keep = norms == norms.max(axis=1, keepdims=True)
            out[~keep] = 0.0
        return _wrap(super()._bind_contact_forces(body_ids, against_ids), keep_max)


class NormalOnly(MujocoBackend):
    """Drops the friction (tangential) components: only the vertical part is reported."""

    name = "broken_contact_normal_only"

    def _bind_contact_forces(self, body_ids, against_ids):
        def vertical(out):
            out[..., :2] = 0.0
        return _wrap(super()._bind_contact_forces(body_ids, against_ids), vertical)


class FilterIgnored(MujocoBackend):
    """Ignores ``against``: every contact of the body counts."""

    name = "broken_contact_filter_ignored"

    def _bind_contact_forces(self, body_ids, against_ids):
        return super()._bind_contact_forces(body_ids, None)


class StaleAfterReset(MujocoBackend):
    """Keeps serving the last read after set_state (no invalidation of reset envs)."""

    name = "broken_contact_stale"

    def _contacts_reset(self, env_ids):
        pass


class TimersPerSubstep(MujocoBackend):
    """Advances air/contact timers by one substep per step call, whatever nsteps is."""

    name = "broken_contact_timers"

    def _contacts_stepped(self, nsteps):
        super()._contacts_stepped(1)


class TorquePointAtBodyOrigin(MujocoBackend):
    """Takes every contact of a body at the body's origin (the moment of its net force there)."""

    name = "broken_contact_torque_origin"

    def _bind_contact_forces(self, body_ids, against_ids):
        fill = super()._bind_contact_forces(body_ids, against_ids)

        def wrapped(out):
            fill(out)
            if out.shape[-1] == 6:
                out[..., 3:] = np.cross(self._body_pos_w(body_ids).astype(np.float64), out[..., :3])
        return wrapped


class TorqueCrossSwapped(MujocoBackend):
    """Sums f x p instead of p x f (the moment's sign flipped)."""

    name = "broken_contact_torque_sign"

    def _bind_contact_forces(self, body_ids, against_ids):
        def flip(out):
            if out.shape[-1] == 6:
                np.negative(out[..., 3:], out=out[..., 3:])
        return _wrap(super()._bind_contact_forces(body_ids, against_ids), flip)


class TorqueAboutBodyOrigin(MujocoBackend):
    """Reports the moment about each body's own origin where the contract wants the world origin."""

    name = "broken_contact_torque_frame"

    def _bind_contact_forces(self, body_ids, against_ids):
        fill = super()._bind_contact_forces(body_ids, against_ids)

        def wrapped(out):
            fill(out)
            if out.shape[-1] == 6:
                out[..., 3:] -= np.cross(self._body_pos_w(body_ids).astype(np.float64), out[..., :3])
        return wrapped


#: class -> (layer marker, check id it must fail)
EXPECTED = {
    "ReactionForce": ("contacts", "contacts::resting_box_weight"),
    "WeightNotContact": ("contacts", "contacts::free_fall_reads_zero"),
    "MostLoadedOnly": ("contacts", "contacts::standing_quadruped_weight"),
    "NormalOnly": ("contacts", "contacts::friction_force_within_cone"),
    "FilterIgnored": ("contacts", "contacts::filtered_pair_equal_and_opposite"),
    "StaleAfterReset": ("contacts", "contacts::lifted_body_reads_off_at_once"),
    "TimersPerSubstep": ("contacts", "contacts::air_time_of_a_drop"),
    "ContactsDropped": ("dynamics", "dynamics::many_contacts_hold"),
}

#: class -> the torque checks (``-m contacts -k torque``) that must fail, and no other
EXPECTED_TORQUES = {
    # the box's contacts at its COM: no lever, 0 where 0.45 / -0.2 N m are due; the feet at the knees
    "TorquePointAtBodyOrigin": {"contacts::pushed_box_torque", "contacts::yaw_torque_balanced",
                                "contacts::standing_quadruped_torque_balance"},
    # -M: the yaw reads +0.2; the pushed box at the origin has M = 0 about it, so only the twist and the
    # drifted quadruped (its COM off the origin) show it
    "TorqueCrossSwapped": {"contacts::yaw_torque_balanced", "contacts::standing_quadruped_torque_balance"},
    # about the body origin read as about the world origin: off by x_com x F (0.45 N m for the push)
    "TorqueAboutBodyOrigin": {"contacts::pushed_box_torque", "contacts::standing_quadruped_torque_balance"},
}


class ContactsDropped(MujocoBackend):
    """Collides only the first 18 boxes of a box_grid (the rest have contype/conaffinity 0): what
    an engine does that drops the contacts beyond a full buffer without a word (#39)."""

    name = "broken_contacts_dropped"

    def __init__(self, scene, num_envs, sim_dt, **options) -> None:
        def drop(tree):
            for geom in tree.iter("geom"):
                name = geom.get("name", "")
                if name.startswith("box") and name.endswith("_geom") and int(name[3:-5]) >= 18:
                    geom.set("contype", "0")
                    geom.set("conaffinity", "0")

        construct_edited(super().__init__, scene, drop, num_envs, sim_dt, **options)
