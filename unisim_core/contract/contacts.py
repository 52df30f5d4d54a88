"""Contact sensing (capability ``contact_forces``): net contact force per body, contact state, air time;
the torque of those forces about each body's centre of mass (capability ``contact_torques``).

``SimBackend.bind_contact_forces(bodies, against=None, threshold=1.0, track_air_time=False,
torques=False)`` resolves the bodies once (cold path: names, or integer body ids for unnamed
bodies) and returns a :class:`ContactForceBinding`; its ``read()`` fills a preallocated
``(num_envs, len(bodies), 3)`` array (hot path, nothing allocated per call):

- **what**: the net force, N, in the **world frame**, that contacts exert **on** each body, summed
  over all its contacts (a box of mass m resting on a plane reads ``(0, 0, +m g)``). With
  ``against`` (capability ``contact_filters``), only contacts with those bodies count
  (``against=["world"]``: the ground and every other static geom). Forces, not impulses.
- **torques** (``torques=True``, capability ``contact_torques``): ``read_torque()`` ->
  ``(num_envs, n, 3)`` N m, world frame: the torque of the same contact forces (same filter) about
  each body's **centre of mass**, ``sum_i (p_i - x_com) x f_i`` over the contact points ``p_i``
  (a box resting on a plane reads 0; pushed sideways at its bottom face it reads the torque that
  keeps it from tipping). Torsional and rolling friction torques (MuJoCo's condim 4 and 6) are not
  included: only the torques of the contact forces at their points.
- **when**: the state reached by the last ``step``. After ``set_state(env_ids)`` (and a divergence
  reset) those envs read zero, not in contact, and their timers restart at 0 until the next step;
  after ``set_physics_state`` every env does. A reset env has not been stepped: no contact force
  has acted on it yet (Isaac Lab's ``ContactSensor.reset`` does the same).
- **contact state**: ``in_contact()`` is ``|F| > threshold`` (N, default 1.0).
- **timers** (``track_air_time=True``, the backend keeps them): ``air_time`` / ``contact_time``, s,
  time since the body last lost / made contact (0 while in contact / in the air);
  ``last_air_time`` / ``last_contact_time``, the length of the previous phase; ``first_contact()``,
  whether contact was made during the last step. They advance by ``nsteps * sim_dt`` per
  ``step`` call: the contact state is sampled once per call, at its end (step with ``nsteps`` =
  your control decimation and the timers have that resolution).

A backend declaring ``contact_forces`` implements one primitive,
``_bind_contact_forces(body_ids, against_ids) -> fill``, where ``fill(out)`` writes the forces of
the current state into ``out (num_envs, n, 3) float64`` (zeros first). A backend that also
declares ``contact_torques`` honours ``out (num_envs, n, 6)`` (a binding with torques): columns
0:3 the net force, 3:6 the net moment of the contact forces about the **world origin**,
``sum_i p_i x f_i`` (N m); the core converts it to each body's COM. Engines that list contacts
(pairs of bodies, a force and its point) sum them with :class:`ContactSums`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence

import numpy as np

from unisim_core.contract import quat as Q
from unisim_core.contract._typing import Backend
from unisim_core.contract.capabilities import Capability
from unisim_core.contract.errors import InvalidInputError, InvalidTypeError
from unisim_core.contract.validation import check_env_ids

__all__ = ["ContactForceBinding", "ContactSensing", "ContactSums", "ContactFill", "mujoco_contact_forces"]

#: ``fill(out)``: write the net contact forces of the current state into ``out (num_envs, n, 3)`` float64
#: (``(num_envs, n, 6)`` for a binding with torques: force, then the moment about the world origin).
ContactFill = Callable[[np.ndarray], None]


class ContactSums:
    """Per-body sums of per-contact forces (and their moments), with the binding's filter, for
    engines that list contacts.

    ``body_ids (n,)`` are the bound bodies (slot i of the output), ``against_ids`` the filter
    (``None``: every body counts), ``nbody`` the model's body count. ``add(out, env, body1, body2,
    force, pos)`` adds contact k's force on ``body2[k]`` (exerted by ``body1[k]``, world frame, N)
    to ``out[env[k], slot(body2[k])]`` and its reaction to ``out[env[k], slot(body1[k])]``. When
    ``out`` has 6 columns (a binding with torques) ``pos (k, 3)``, the contact points (world frame,
    m), is required and columns 3:6 accumulate the moments about the world origin, ``p x f`` (and
    ``-p x f`` for the reaction: both act at the same point).
    """

    def __init__(self, body_ids: np.ndarray, against_ids: np.ndarray | None, nbody: int) -> None:
        self.slot = np.full(nbody, -1, dtype=np.int64)
        self.slot[body_ids] = np.arange(len(body_ids))
        self.counts = np.ones(nbody, dtype=bool) if against_ids is None else np.isin(np.arange(nbody), against_ids)
        self.n = len(body_ids)

    def add(self, out: np.ndarray, env: np.ndarray, body1: np.ndarray, body2: np.ndarray, force: np.ndarray,
            pos: np.ndarray | None = None) -> None:
        """Accumulate into ``out (num_envs, n, 3 or 6)``; ``env, body1, body2 (k,)`` ints, ``force (k, 3)``,
        ``pos (k, 3)`` (required with 6 columns)."""
        width = out.shape[-1]
        if width == 6 and pos is None:
            raise InvalidInputError("pos: the contact points (k, 3) are required to sum moments into a 6-column out "
                                    "(a binding with torques)")
        if not len(env):
            return
        if width == 6:
            force = np.concatenate((force, np.cross(np.asarray(pos, dtype=np.float64), force)), axis=1)
        flat = out.reshape(-1, width)
        size = flat.shape[0]
        for mine, other, sign in ((body2, body1, 1.0), (body1, body2, -1.0)):
            slot = self.slot[mine]
            keep = (slot >= 0) & self.counts[other]
            if not keep.any():
                continue
            idx = env[keep] * self.n + slot[keep]
            f = force[keep]
            for c in range(width):
                flat[:, c] += sign * np.bincount(idx, weights=f[:, c], minlength=size)


def mujoco_contact_forces(frame: np.ndarray, rows: np.ndarray, dim: np.ndarray, friction: np.ndarray,
                         efc_force: np.ndarray, pyramidal: bool) -> np.ndarray:
    """``(k, 3)`` world force, N, that geom1 exerts on geom2 at each of ``k`` contacts.

    MuJoCo's contact layout: ``frame (k, 3, 3)`` rows normal (geom1 -> geom2), tangent 1, tangent
    2; ``rows (k, w)`` the contact's constraint rows in ``efc_force`` (first column -1: excluded),
    ``dim (k,)`` condim, ``friction (k, >= 2)`` tangential coefficients. Pyramidal cones are
    decoded as ``mj_contactForce`` does: normal = sum of the 2 (dim - 1) edge forces, tangent i =
    (f[2i] - f[2i+1]) mu_i; elliptic cones hold [normal, tangent 1, tangent 2, ...].
    """
    k = len(dim)
    local = np.zeros((k, 3))
    for d in np.unique(dim):
        sel = np.flatnonzero((dim == d) & (rows[:, 0] >= 0))
        if not sel.size:
            continue
        if d == 1:
            local[sel, 0] = efc_force[rows[sel, 0]]
        elif pyramidal:
            edges = efc_force[rows[sel, :2 * (int(d) - 1)]]
            local[sel, 0] = edges.sum(axis=1)
            local[sel, 1] = (edges[:, 0] - edges[:, 1]) * friction[sel, 0]
            local[sel, 2] = (edges[:, 2] - edges[:, 3]) * friction[sel, 1]
        else:
            local[sel] = efc_force[rows[sel, :3]]
    return np.einsum("ki,kij->kj", local, frame.reshape(k, 3, 3))


class ContactForceBinding:
    """Net contact forces on ``body_names`` (see the module docstring for frames, units, timing).

    ``read()`` -> ``(num_envs, n, 3)`` N, world frame, in ``np_dtype``: the binding's own array,
    overwritten by the next read after a step (copy it to keep it). ``read_torque()`` (bound with
    ``torques=True``) -> ``(num_envs, n, 3)`` N m about each body's COM, likewise. ``in_contact()``
    -> ``(num_envs, n)`` bool. Timers (``track_air_time``): ``air_time``, ``contact_time``,
    ``last_air_time``, ``last_contact_time`` ``(num_envs, n)`` float64 s (read-only views), and
    ``first_contact()``.
    """

    def __init__(self, backend: Backend, body_names: tuple[str, ...], body_ids: np.ndarray,
                 against_names: tuple[str, ...] | None, against_ids: np.ndarray | None, threshold: float,
                 track_air_time: bool, fill: ContactFill, torques: bool = False) -> None:
        self._backend = backend
        self.body_names, self.body_ids = body_names, body_ids
        self.against_names, self.against_ids = against_names, against_ids
        self.threshold = threshold
        self.track_air_time = track_air_time
        self.torques = torques
        n, k = backend.num_envs, len(body_ids)
        self._fill = fill
        self._raw = np.zeros((n, k, 6 if torques else 3))
        self._out = np.zeros((n, k, 3), dtype=backend.np_dtype)
        self._torque = np.zeros((n, k, 3), dtype=backend.np_dtype) if torques else None
        self._contact = np.zeros((n, k), dtype=bool)
        self._fresh = False  # _out holds the current state's forces
        self._torque_fresh = False  # _torque holds the current state's torques
        self._timers = np.zeros((4, n, k))  # air, contact, last air, last contact
        self._first = np.zeros((n, k), dtype=bool)

    # -- reads ---------------------------------------------------------------------------------
    def read(self) -> np.ndarray:
        """``(num_envs, n, 3)`` net contact force on each body, N, world frame."""
        self._backend._check_open()  # BackendClosedError after close(), never stale data
        if not self._fresh:
            raw = self._raw
            raw.fill(0.0)
            self._fill(raw)
            unstepped = self._backend._contact_unstepped
            if unstepped is None:
                raw.fill(0.0)
            elif unstepped.any():
                raw[unstepped] = 0.0
            force = raw[..., :3]
            self._out[...] = force
            np.greater(np.einsum("ekc,ekc->ek", force, force), self.threshold * self.threshold, out=self._contact)
            self._fresh = True
            self._torque_fresh = False
        return self._out

    def read_torque(self) -> np.ndarray:
        """``(num_envs, n, 3)`` torque of the contact forces about each body's centre of mass, N m,
        world frame (bound with ``torques=True``; the same contacts as ``read()``): the engine's
        moment about the world origin ``M = sum p x f`` less ``x_com x F``, with ``x_com`` the
        body's COM at the state read (its pose and its COM offset, randomized ones included)."""
        self._backend._check_open()
        if not self.torques:
            raise InvalidInputError("read_torque: this binding was made without torques; bind with "
                                    "bind_contact_forces(..., torques=True) (capability contact_torques)")
        self.read()
        if not self._torque_fresh:
            raw = self._raw
            com = self._backend._body_com_w(self.body_ids)
            self._torque[...] = raw[..., 3:] - np.cross(com, raw[..., :3])
            self._torque_fresh = True
        return self._torque

    def in_contact(self) -> np.ndarray:
        """``(num_envs, n)`` bool: ``|F| > threshold``."""
        self.read()
        return self._contact.copy()

    def first_contact(self) -> np.ndarray:
        """``(num_envs, n)`` bool: contact made during the last step (``track_air_time``)."""
        self._require_timers()
        return self._first.copy()

    def _require_timers(self) -> None:
        self._backend._check_open()
        if not self.track_air_time:
            raise InvalidInputError("contact timers: bind with track_air_time=True to read air/contact times")

    def _timer(self, i: int) -> np.ndarray:
        self._require_timers()
        view = self._timers[i].view()
        view.flags.writeable = False
        return view

    @property
    def air_time(self) -> np.ndarray:
        """``(num_envs, n)`` s since the body lost contact (0 while in contact)."""
        return self._timer(0)

    @property
    def contact_time(self) -> np.ndarray:
        """``(num_envs, n)`` s since the body made contact (0 while in the air)."""
        return self._timer(1)

    @property
    def last_air_time(self) -> np.ndarray:
        """``(num_envs, n)`` s: length of the body's previous air phase."""
        return self._timer(2)

    @property
    def last_contact_time(self) -> np.ndarray:
        """``(num_envs, n)`` s: length of the body's previous contact phase."""
        return self._timer(3)

    # -- backend hooks ---------------------------------------------------------------------------
    def _stepped(self, dt: float) -> None:
        self._fresh = False
        if not self.track_air_time:
            return
        was_air = self._timers[0] > 0.0
        was_contact = self._timers[1] > 0.0
        self.read()
        now = self._contact
        air, contact, last_air, last_contact = self._timers
        self._first[...] = now & ~was_contact
        lost = ~now & was_contact
        last_air[self._first & was_air] = air[self._first & was_air]
        last_contact[lost] = contact[lost]
        air[now] = 0.0
        contact[~now] = 0.0
        air[~now] += dt
        contact[now] += dt

    def _reset(self, env_ids: np.ndarray | None) -> None:
        rows = slice(None) if env_ids is None else env_ids
        self._fresh = self._torque_fresh = False
        self._timers[:, rows] = 0.0
        self._first[rows] = False


class ContactSensing:
    """Mixed into ``SimBackend``: ``bind_contact_forces`` and the hooks ``step``/``set_state`` call."""

    _contact_bindings: weakref.WeakSet | tuple = ()
    #: ``(num_envs,)`` bool, envs not stepped since their last reset (``None``: every env, the
    #: state at construction); reads of those envs are zero.
    _contact_unstepped: np.ndarray | None = None
    #: Whether the next ``step`` must call ``_contacts_stepped`` (bindings exist or envs were reset).
    _contact_watch: bool = True
    #: Width of ``out`` the fill being bound will receive (3, or 6 for a binding with torques), set
    #: while ``_bind_contact_forces`` runs: a transport that binds in another process (worker, Ray)
    #: passes it on; an engine's fill reads ``out.shape[-1]`` instead.
    _contact_fill_width: int = 3
    #: Bumped whenever ``body_com_offset`` is written (randomization): torque bindings re-read COMs.
    _com_generation: int = 0

    def _bind_contact_forces(self, body_ids: np.ndarray, against_ids: np.ndarray | None) -> ContactFill:
        """Primitive (CONTACT_FORCES): ``fill(out)`` for the validated bodies and filter (``None``: all)."""
        raise self._unsupported(Capability.CONTACT_FORCES)

    def _bind_contact_fill(self, body_ids: np.ndarray, against_ids: np.ndarray | None, width: int) -> ContactFill:
        """The primitive, with ``_contact_fill_width`` set to ``width`` while it binds."""
        self._contact_fill_width = width
        try:
            return self._bind_contact_forces(body_ids, against_ids)
        finally:
            self.__dict__.pop("_contact_fill_width", None)

    def _body_com_w(self, body_ids: np.ndarray) -> np.ndarray:
        """``(num_envs, n, 3)`` float64 world position of the centre of mass of ``body_ids`` at the
        current state: the body frame's pose applied to its COM offset (``body_ipos``, or the
        randomized ``body_com_offset`` once one was written; read once per write)."""
        cache = self.__dict__.get("_com_offsets")
        if cache is None or cache[0] != self._com_generation:
            if self._com_generation:
                offsets = np.asarray(self._read_model_field("body_com_offset"), dtype=np.float64)
            else:
                offsets = np.asarray(self.model_info.body_ipos, dtype=np.float64)
            cache = self._com_offsets = (self._com_generation, offsets)
        pos = np.asarray(self._body_pos_w(body_ids), dtype=np.float64)
        quat = np.asarray(self._body_quat_w(body_ids), dtype=np.float64)
        return pos + Q.quat_apply(quat, np.broadcast_to(cache[1][..., body_ids, :], pos.shape))

    def bind_contact_forces(self, bodies: Sequence[str] | Sequence[int] | np.ndarray, *,
                            against: Sequence[str] | Sequence[int] | np.ndarray | None = None,
                            threshold: float = 1.0, track_air_time: bool = False,
                            torques: bool = False) -> ContactForceBinding:
        """Resolve ``bodies`` (names, or integer body ids, not the world) and ``against`` (names or
        ids; ``"world"`` / 0 is the ground) once; the binding reads their net contact forces, and with
        ``torques=True`` their torques about each body's COM (see :mod:`unisim_core.contract.contacts`)."""
        if not isinstance(torques, bool):
            raise InvalidTypeError(f"torques: expected a bool, got {type(torques).__name__}")
        if torques:
            self._require(Capability.CONTACT_TORQUES)
        self._require(Capability.CONTACT_FORCES if against is None else Capability.CONTACT_FILTERS)
        names, ids = self._contact_bodies("bodies", bodies)
        if len(set(ids.tolist())) != len(ids):
            raise InvalidInputError(f"bodies: expected distinct bodies, got {list(bodies)}")
        if (ids == 0).any():
            raise InvalidInputError(f"bodies: the world body {self.model_info.body_names[0]!r} (id 0) has no contact "
                                    "force of its own; name it in against= to filter contacts with the ground")
        against_names = against_ids = None
        if against is not None:
            against_names, against_ids = self._contact_bodies("against", against)
            against_ids = np.unique(against_ids)
        if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not np.isfinite(threshold) \
                or threshold < 0:
            raise InvalidInputError(f"threshold: expected a finite force >= 0 in N, got {threshold!r}")
        if not isinstance(track_air_time, bool):
            raise InvalidTypeError(f"track_air_time: expected a bool, got {type(track_air_time).__name__}")
        fill = self._bind_contact_fill(ids, against_ids, 6 if torques else 3)
        binding = ContactForceBinding(self, names, ids, against_names, against_ids, float(threshold),
                                      track_air_time, fill, torques)
        if not self._contact_bindings:
            self._contact_bindings = weakref.WeakSet()
        self._contact_bindings.add(binding)
        self._contact_watch = True
        return binding

    def _contact_bodies(self, arg: str, value: object) -> tuple[tuple[str, ...], np.ndarray]:
        """``(names, int64 ids)`` of ``value``: all body names or all integer body ids in
        ``[0, num_bodies)`` (the world, 0, is refused for ``bodies`` by the caller)."""
        if isinstance(value, str) or not isinstance(value, Sequence | np.ndarray):
            raise InvalidTypeError(f"{arg}: expected a sequence of body names or integer body ids, "
                                   f"got {type(value).__name__}")
        if isinstance(value, np.ndarray):
            if value.ndim != 1 or value.dtype.kind not in "iuU":
                raise InvalidInputError(f"{arg}: expected a 1-D array of integer body ids or of body names, "
                                        f"got a {value.dtype} array of shape {value.shape}")
            items = tuple(value.tolist())
        else:
            items = tuple(value)
        if not items:
            raise InvalidInputError(f"{arg}: expected a non-empty sequence of body names or ids, got an empty one")
        if all(isinstance(v, str) for v in items):
            ids = np.array([self._lookup(self._body_index, v, "body", arg) for v in items], dtype=np.int64)
            return items, ids
        if all(isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_) for v in items):
            ids = np.array(items, dtype=np.int64)
            nbody = len(self.model_info.body_names)
            bad = [int(i) for i in ids if not 0 <= i < nbody]
            if bad:
                lo = 1 if arg == "bodies" else 0
                raise InvalidInputError(f"{arg}: expected body ids in [{lo}, {nbody}), got {bad}")
            return tuple(self.model_info.body_names[i] for i in ids), ids
        kinds = sorted({type(v).__name__ for v in items})
        raise InvalidTypeError(f"{arg}: expected all body names (str) or all integer body ids, got a mix of {kinds}")

    def _contacts_stepped(self, nsteps: int) -> None:
        """After a step of ``nsteps`` substeps: bindings read the new state, timers advance."""
        if self._contact_unstepped is None:
            self._contact_unstepped = np.zeros(self.num_envs, dtype=bool)
        else:
            self._contact_unstepped.fill(False)
        dt = nsteps * self.sim_dt
        for binding in list(self._contact_bindings):
            binding._stepped(dt)
        self._contact_watch = bool(self._contact_bindings)

    def _contacts_reset(self, env_ids: np.ndarray | None) -> None:
        """After ``env_ids`` (``None``: all) got a new state: they read zero until the next step."""
        ids = None if env_ids is None else check_env_ids("env_ids", env_ids, self.num_envs)
        if ids is None:
            self._contact_unstepped = None
        elif self._contact_unstepped is not None:
            self._contact_unstepped[ids] = True
        self._contact_watch = True
        for binding in list(self._contact_bindings):
            binding._reset(ids)
