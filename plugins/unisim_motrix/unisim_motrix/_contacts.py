"""Contact forces (capabilities ``contact_forces``, ``contact_torques``, ``contact_filters``).

**Net forces.** ``SceneModel.get_link_net_contact_forces`` returns, per link, the net contact force
(world frame, N) of the last step and the net contact moment about the link's centre of mass
(world frame, N m), ``[fx, fy, fz, tx, ty, tz]``, written into a preallocated float32 buffer; the
report is switched on for every backend at construction (``model.reports.contact_forces``; its
cost is within the noise of a step, measured on the quadruped at N=64). The contract's bodies are
MotrixSim's links in order (body b = link b - 1).

Columns 3:6, measured (docs/contacts.md): a 1 kg box at (1, 2) with its COM 3 cm off the link
origin reads (0, 0, 0) at rest (the moment about the link origin would be (0, -0.294, 0), about
the world origin (19.6, -9.8, 0)), (0, +0.45, 0) pushed along +x at its bottom face and
(0, 0, -0.2) against a 0.2 N m yaw torque: the moment of the forces on the link about its COM, as
documented. A binding with torques gets the moment about the world origin the contract's fill
wants, ``tau_com + x_com x F``, with ``x_com`` the core's (``_body_com_w``: link pose and COM
offset, randomized ones included), so the core's conversion back returns MotrixSim's torque.

**Filters** (``against=``): the report has net forces only, so a filtered binding reads MotrixSim's
MJCF ``<contact>`` sensors, one per pair of bodies ``(a, b)``, ``a < b``, ``reduce="netforce"``:
``[found, force, normal, tangent]``, the force in the contact frame (normal, tangent, normal x
tangent). Measured (tests): the normal points from the lower body to the higher one and the force is
the one ``a`` exerts on ``b``, whichever lies above. The sensors are added to the file MotrixSim
loads (:mod:`~unisim_motrix._engine_mjcf`) when a binding first needs them: the engine model is
rebuilt with them and every env's state and per-env overrides move over (:mod:`~unisim_motrix._rebuild`).
The force on ``b`` from the world (body 0, the MJCF ``<worldbody>``'s geoms) is the rest of the net
force: ``net(b) - sum over the other bodies o of F(b from o)``, so a binding against the world adds
one sensor per body that can touch ``b`` (:func:`collidable_bodies`), and one against bodies one
per pair. A filtered binding with torques is refused (``contact_torques``): the sensor's ``netforce``
reports one point per body pair, the unweighted mean of the contact points, and no torque (measured:
box_stack's top pushed 2 N at its bottom face, the pair's moment about the COM from that point is
(-0.021, 0.203, -0.004) N m, the link report's (0.0006, 0.197, 0.0000)); per-contact readings
(``reduce="none"``) give it only up to a fixed number of contacts per pair.
"""

from __future__ import annotations

import numpy as np

from unisim_core import SimBackend  # the engine's backend (its _backend module imports this one)

from ._engine_mjcf import CONTACT_DATA, TEMP_PREFIX
from ._errors import engine_call

__all__ = ["MotrixContactFill", "enable_contact_report", "collidable_bodies", "pair_sensor_name", "pair_forces"]


def enable_contact_report(model) -> None:
    """Switch the contact force report on (read after each step by the fill below)."""
    with engine_call("reports.contact_forces"):
        model.reports.contact_forces = True


def collidable_bodies(m) -> np.ndarray:
    """``(nbody,)`` bool: the bodies of ``mujoco.MjModel`` ``m`` with a geom that can touch another
    (non-zero ``contype`` or ``conaffinity``, or named in an explicit ``<pair>``)."""
    out = np.zeros(m.nbody, bool)
    geoms = (m.geom_contype != 0) | (m.geom_conaffinity != 0)
    geoms[np.concatenate([m.pair_geom1, m.pair_geom2]).astype(np.int64)] = True
    out[m.geom_bodyid[geoms]] = True
    return out


def pair_sensor_name(i: int) -> str:
    """The name of the ``i``-th contact-filter sensor in the file MotrixSim loads."""
    return f"{TEMP_PREFIX}contact_{i}"


def pair_forces(readings: np.ndarray) -> np.ndarray:
    """``(N, P, 3)`` float64: from the ``(N, P * 10)`` readings of P pair sensors, the force body
    ``b`` gets from body ``a`` (N, world frame)."""
    _, width = CONTACT_DATA
    v = np.asarray(readings, np.float64).reshape(readings.shape[0], -1, width)
    f, n, t = v[..., 1:4], v[..., 4:7], v[..., 7:10]
    frame = np.stack([n, t, np.cross(n, t)], axis=-2)  # rows: the contact frame's axes in the world
    return np.einsum("npi,npij->npj", f, frame)


class MotrixContactFill:
    """``fill(out)`` for ``MotrixBackend._bind_contact_forces`` (see the module docstring)."""

    def __init__(self, backend: SimBackend, body_ids: np.ndarray, against_ids: np.ndarray | None) -> None:
        self._backend, self._body_ids = backend, body_ids
        self._links = [int(b) - 1 for b in body_ids]
        self._buf = np.zeros((backend.num_envs, len(body_ids), 6), dtype=np.float32)
        self._filter = None
        if against_ids is not None:
            self._filter = self._pairs(backend, body_ids, set(int(a) for a in against_ids))

    @staticmethod
    def _pairs(backend: SimBackend, body_ids: np.ndarray, against: set[int]):
        """``(columns, from_against, from_all_bodies, world)``: the pair-sensor columns this binding
        reads and, per bound body, the signed weights summing the forces from ``against``'s bodies
        and from every body (for the world's rest)."""
        world = 0 in against
        touching = backend._collidable
        others = range(1, len(touching)) if world else sorted(against - {0})
        wanted = {(min(b, o), max(b, o)) for b in map(int, body_ids) for o in others
                  if o != b and touching[b] and touching[o]}
        columns = backend._contact_pair_columns(sorted(wanted))
        order = sorted(set(columns.values()))
        slot = {c: i for i, c in enumerate(order)}
        w_against = np.zeros((len(body_ids), len(order)))
        w_all = np.zeros((len(body_ids), len(order)))
        for k, b in enumerate(map(int, body_ids)):
            for (lo, hi), col in columns.items():
                if b not in (lo, hi):
                    continue
                other, sign = (hi, -1.0) if b == lo else (lo, 1.0)  # the sensor reads the force on hi
                w_all[k, slot[col]] = sign
                if other in against:
                    w_against[k, slot[col]] = sign
        return np.array(order, np.int64), w_against, w_all, world

    def __call__(self, out: np.ndarray) -> None:
        be = self._backend
        with engine_call("get_link_net_contact_forces"):
            be._M.get_link_net_contact_forces(be._D, self._links, self._buf)
        if self._filter is not None:
            columns, w_against, w_all, world = self._filter
            pairs = be._contact_pair_forces(columns)  # (N, P, 3)
            out[...] = np.einsum("sp,npk->nsk", w_against, pairs)
            if world:
                out += self._buf[..., :3] - np.einsum("sp,npk->nsk", w_all, pairs)
            return
        out[..., :3] = self._buf[..., :3]
        if out.shape[-1] == 6:  # a binding with torques: moment about the world origin
            out[..., 3:] = self._buf[..., 3:]
            out[..., 3:] += np.cross(be._body_com_w(self._body_ids), out[..., :3])
