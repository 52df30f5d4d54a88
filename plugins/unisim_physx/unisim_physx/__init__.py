"""PhysX semantics shared by every PhysX backend (``unisim-sapien``, ``unisim-isaacsim``); engine-free (numpy, attrs).

How an MJCF model maps onto PhysX 5 articulations is decided here once, and tested on a real
PhysX through SAPIEN (``plugins/unisim_sapien``); the Isaac Sim worker applies the same mapping
through Isaac Lab. ``docs/sapien.md`` lists every PhysX fact and how both backends handle it.

- :class:`PhysxSolverConfig`: the bounded solver override set (solver type, iteration counts,
  bounce threshold, contact/rest offsets, max depenetration velocity, GPU buffer capacities),
  validated fail-closed; :func:`solver_value_matches` compares an engine readback strictly.
- :data:`MUJOCO_BODY_PROPERTIES`: the per-body and per-joint values that make PhysX behave as
  MuJoCo (no link damping, no velocity caps, no sleeping, no joint friction), set explicitly on
  every link and joint because PhysX's defaults (:data:`PHYSX_DEFAULTS`) differ.
- :func:`physx_drives`: MJCF actuators, joint damping and frictionloss as a PhysX joint drive plus a
  per-substep effort. A PhysX drive is an *implicit* spring-damper solved as a constraint whose
  force is bounded by the drive's force limit; MuJoCo's ``implicitfast`` integrates a position
  servo's ``kp`` explicitly and only velocity terms implicitly. So every drive here has stiffness
  0 and damping ``joint damping + Σ gear² kv`` (implicit, as in MuJoCo), and everything else is an
  explicit joint effort recomputed before each substep from the current state
  (:meth:`PhysxDrives.efforts`). A joint with ``frictionloss`` f gets a drive of very large damping
  (:data:`FRICTION_DAMPING`) limited to f instead: a velocity constraint whose force is bounded by
  f, which is MuJoCo's dry friction (measured: decelerates at f/I, holds below f, breaks away above);
  its damping and servo ``kv`` then act explicitly. An actuator on a fixed tendon (``tendon_transmission``)
  acts through its tendon's coefficients (:attr:`PhysxDrives.moment`) and its ``kv`` is an explicit effort
  (no PhysX drive spans several joints, and a PhysX fixed tendon's damping acts on each of its joints apart:
  measured, two joints of coefficient c moving together slow as one does, ``c² D``, not ``2 c² D``). Where
  MuJoCo integrates ``kv`` implicitly, ``(M + dt gear² kv c cᵀ) qacc = f - gear² kv c cᵀ qd``, joint ``i``
  of the tendon gains the armature ``dt gear² kv |c_i| Σ|c_j|``: exactly MuJoCo's along the motion that
  changes the tendon's length fastest (its joints moving together, as a gripper's two fingers tied by an
  equality), stable at any ``kv``.
- :class:`KinematicMoves`: mocap bodies as kinematic actors, moved over a step by kinematic targets.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import attrs
import numpy as np

__all__ = ["FRICTION_DAMPING", "IMPLICIT_KV", "MUJOCO_BODY_PROPERTIES", "PER_ENV_FIELDS", "PHYSX_DEFAULTS",
           "SOLVER_TYPES", "KinematicMoves", "PhysxDrives", "PhysxSolverConfig", "UNBOUNDED_VELOCITY",
           "explicit_damping_ratio", "mujoco_integrator", "physx_config_option",
           "physx_drives", "pose_between", "solver_value_matches", "stack_drives"]

_UINT32_MAX = 2**32 - 1
_FLOAT32_MAX = float(np.finfo(np.float32).max)
#: Solver types PhysX 5 offers (``PxSolverType``): temporal and projective Gauss-Seidel.
SOLVER_TYPES = ("TGS", "PGS")
#: Velocity cap standing for "none" (m/s, rad/s): PhysX squares it in float32, so not float32's max.
UNBOUNDED_VELOCITY = 1.0e10
#: Drive damping of a joint with frictionloss (N·m·s/rad, N·s/m): the drive holds the joint still
#: whenever the friction bound (its force limit) allows; implicit, so any value is stable.
FRICTION_DAMPING = 1.0e6

#: PhysX 5 defaults that break MuJoCo's semantics, as measured on SAPIEN 3.0.3's PhysX (CPU):
#: link damping (1/s), link velocity caps (m/s, rad/s), sleep threshold (mass-normalized kinetic
#: energy, m²/s²), joint friction coefficient, joint velocity cap (rad/s or m/s). Isaac Sim's
#: schema defaults are the same PhysX values (angular ones authored in degrees).
PHYSX_DEFAULTS = {"linear_damping": 0.05, "angular_damping": 0.05, "max_linear_velocity": 10.0,
                  "max_angular_velocity": 50.0, "sleep_threshold": 0.005, "joint_friction": 0.05,
                  "max_joint_velocity": 100.0}
#: What every PhysX backend sets on every link / articulation / joint instead (MuJoCo has none of these).
MUJOCO_BODY_PROPERTIES = {"linear_damping": 0.0, "angular_damping": 0.0, "max_linear_velocity": UNBOUNDED_VELOCITY,
                          "max_angular_velocity": UNBOUNDED_VELOCITY, "sleep_threshold": 0.0,
                          "joint_friction": 0.0, "max_joint_velocity": UNBOUNDED_VELOCITY}


# ---------------------------------------------------------------------------------- solver config
def _int_field(low: int, high: int) -> Any:
    """Optional field: ``None`` or a real ``int`` (never ``bool``) within ``[low, high]``."""

    def check(_instance: Any, attribute: attrs.Attribute, value: Any) -> None:
        if value is None:
            return
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{attribute.name} must be an int in [{low}, {high}]; "
                            f"got {value!r} ({type(value).__name__})")
        if not low <= value <= high:
            raise ValueError(f"{attribute.name} must be in [{low}, {high}]; got {value!r}")

    return attrs.field(default=None, validator=check)


def _float_field(*, positive: bool) -> Any:
    """Optional field: ``None`` or a finite, float32-representable int/float, ``> 0``/``>= 0``."""
    bound = "> 0" if positive else ">= 0"

    def check(_instance: Any, attribute: attrs.Attribute, value: Any) -> None:
        if value is None:
            return
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{attribute.name} must be a finite number {bound}; "
                            f"got {value!r} ({type(value).__name__})")
        # NaN fails every comparison, so it is rejected together with inf and overflow.
        if not ((value > 0 if positive else value >= 0) and value <= _FLOAT32_MAX):
            raise ValueError(f"{attribute.name} must be a finite number {bound} and <= float32 max "
                             f"{_FLOAT32_MAX:.6g}; got {value!r}")

    return attrs.field(default=None, validator=check)


def _solver_type(_instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value is not None and value not in SOLVER_TYPES:
        raise ValueError(f"{attribute.name} must be one of {list(SOLVER_TYPES)} or None; got {value!r}")


@attrs.frozen
class PhysxSolverConfig:
    """The bounded, validated PhysX solver override set; ``None`` keeps the engine default.

    Bounds are PhysX's own: iteration counts are stored in a byte (position 1-255, velocity
    0-255), the GPU contact/patch buffer capacities are ``PxU32`` and must be non-zero, and
    ``rest_offset`` must stay strictly below ``contact_offset`` (m). A ``rest_offset`` alone is
    rejected because the engine's automatic contact offset is per-shape and unknown here, so the
    relationship could not be checked. ``solver_type``: ``"TGS"`` or ``"PGS"``.
    """

    solver_position_iteration_count: int | None = _int_field(1, 255)
    solver_velocity_iteration_count: int | None = _int_field(0, 255)
    bounce_threshold_velocity: float | None = _float_field(positive=False)
    contact_offset: float | None = _float_field(positive=True)
    rest_offset: float | None = _float_field(positive=False)
    max_depenetration_velocity: float | None = _float_field(positive=True)
    gpu_max_rigid_contact_count: int | None = _int_field(1, _UINT32_MAX)
    gpu_max_rigid_patch_count: int | None = _int_field(1, _UINT32_MAX)
    solver_type: str | None = attrs.field(default=None, validator=_solver_type)

    def __attrs_post_init__(self) -> None:
        if self.rest_offset is None:
            return
        if self.contact_offset is None:
            raise ValueError(f"rest_offset requires contact_offset to be set (rest_offset < contact_offset); "
                             f"got rest_offset={self.rest_offset!r} with contact_offset=None")
        if not self.rest_offset < self.contact_offset:
            raise ValueError(f"rest_offset must be < contact_offset ({self.contact_offset!r}); "
                             f"got {self.rest_offset!r}")

    def configured_fields(self) -> tuple[str, ...]:
        """Names of the fields that override an engine default, in declaration order."""
        return tuple(a.name for a in attrs.fields(type(self)) if getattr(self, a.name) is not None)

    def to_payload(self) -> dict[str, Any]:
        """Plain ``dict`` of the configured fields only (the INIT payload copy)."""
        return {name: getattr(self, name) for name in self.configured_fields()}

    @classmethod
    def from_payload(cls, payload: Any) -> PhysxSolverConfig:
        """Re-validate a plain copy; non-dict payloads and unknown keys fail closed."""
        if not isinstance(payload, dict):
            raise TypeError(f"PhysX solver payload must be a dict; got {type(payload).__name__}: {payload!r}")
        known = {a.name for a in attrs.fields(cls)}
        unknown = sorted(repr(key) for key in payload if key not in known)
        if unknown:
            raise TypeError(f"unknown PhysX solver field(s) {', '.join(unknown)}; "
                            f"valid fields: {', '.join(sorted(known))}")
        return cls(**payload)


_INT_FIELDS = frozenset({"solver_position_iteration_count", "solver_velocity_iteration_count",
                         "gpu_max_rigid_contact_count", "gpu_max_rigid_patch_count"})
_FIELDS = frozenset(a.name for a in attrs.fields(PhysxSolverConfig))


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_float32_number(value: Any) -> bool:
    if not (_is_int(value) or isinstance(value, (float, np.floating))):
        return False
    return bool(abs(value) <= _FLOAT32_MAX)  # NaN fails the comparison, like inf


def solver_value_matches(field: str, requested: Any, reported: Any) -> bool:
    """Strict comparison of a requested value with the engine's readback.

    Integer fields match only equal integers; ``solver_type`` only the same name. Float fields
    match when both values round to the same float32 (PhysX and USD store them as float32). A
    ``bool``, ``None``, string or non-finite readback of a number never matches.
    """
    if field not in _FIELDS:
        raise ValueError(f"unknown PhysX solver field {field!r}; valid: {', '.join(sorted(_FIELDS))}")
    if field == "solver_type":
        return isinstance(requested, str) and isinstance(reported, str) and requested == reported
    if field in _INT_FIELDS:
        return _is_int(requested) and _is_int(reported) and int(requested) == int(reported)
    if not (_is_float32_number(requested) and _is_float32_number(reported)):
        return False
    return bool(np.float32(requested) == np.float32(reported))


# ---------------------------------------------------------------------------------- drives
@dataclass(frozen=True)
class PhysxDrives:
    """Per hinge/slide joint: an implicit PhysX drive (stiffness 0, ``damping``, ``force_limit``, no
    targets) and the explicit efforts of the MJCF actuators and explicit damping (:meth:`efforts`).

    Joint arrays follow the MJCF hinge/slide joint order (``joints``); actuator arrays the MJCF
    actuator order. Units: N·m, rad (hinge) or N, m (slide). The per-env values (``damping``,
    ``force_limit``, ``explicit_damping``, ``armature``, ``kp``, ``kv``, ``kv_on_drive``, ``gain``) may carry
    a leading env axis ``(n, ...)`` (:func:`stack_drives`: randomized gains and damping); :meth:`servo`
    broadcasts them against ``(n, J)`` states.
    """

    joints: tuple[str, ...]  #: MJCF names of the hinge/slide joints, in model order
    damping: np.ndarray  #: (J,) drive damping: joint damping + Σ gear² kv of its servos, or FRICTION_DAMPING
    force_limit: np.ndarray  #: (J,) drive force limit: the joint's frictionloss, inf without one
    explicit_damping: np.ndarray  #: (J,) damping applied as an effort (joints whose drive carries friction)
    armature: np.ndarray  #: (J,) PhysX joint armature (= MJCF armature)
    act_joint: np.ndarray  #: (nu,) index into ``joints`` of each actuator's joint
    gear: np.ndarray  #: (nu,)
    kp: np.ndarray  #: (nu,) position gain (position servos), 0 otherwise
    kv: np.ndarray  #: (nu,) velocity gain (position and velocity servos), 0 otherwise
    kind: np.ndarray  #: (nu,) ``"motor"``, ``"position"`` or ``"velocity"``
    force_range: np.ndarray  #: (nu, 2) MJCF forcerange (before gear); (-inf, inf) when unlimited
    ctrl_range: np.ndarray  #: (nu, 2) MJCF ctrlrange; (-inf, inf) when unlimited
    kv_on_drive: np.ndarray  #: (nu,) bool: whether the servo's ``gear² kv`` rides on its joint's implicit drive
    #: (nu,) the ctrl coefficient (MuJoCo's ``gainprm[0]``) where it is not the kind's own (1 for a motor, ``kp``
    #: for a position servo, ``kv`` for a velocity servo): MuJoCo's ``actuator_kp`` randomization writes
    #: ``gainprm[0]`` and ``biasprm[1]`` together, ``actuator_kd`` only ``biasprm[2]``. ``None``: the kind's.
    gain: np.ndarray | None = None
    #: (J,) MJCF joint ``stiffness`` and ``springref``: MuJoCo's passive spring ``-stiffness (q - springref)``,
    #: explicit in every MuJoCo integrator, so an explicit effort here. ``None``: no springs.
    stiffness: np.ndarray | None = None
    springref: np.ndarray | None = None
    #: (nu, J) each actuator's transmission without gear: 1 on its joint, or the coefficients of its fixed tendon
    #: (its length ``gear moment q``, its effort on the joints ``gear moment f``); ``None`` when every actuator
    #: drives one joint. A tendon actuator's ``act_joint`` is -1 and its ``kv`` an explicit effort (``physx_drives``).
    moment: np.ndarray | None = None

    @functools.cached_property
    def state_dependent(self) -> bool:
        """Whether :meth:`efforts` reads ``q``/``qd`` (a servo, explicit damping, a spring); motors alone need
        only ``ctrl``."""
        return bool((self.kind != "motor").any() or self._effort_terms[6])

    def _passive(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """The explicit passive efforts ``(n, J)``: damping of joints whose drive carries friction, springs."""
        out = -self.explicit_damping * qd
        if self.stiffness is not None:
            out -= self.stiffness * (q - self.springref)
        return out

    def efforts(self, ctrl: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Explicit joint efforts ``(n, J)`` for ``ctrl (n, nu)`` at joint positions/velocities
        ``q, qd (n, J)``: with the drive's implicit ``-gear² kv qd``, the joint receives MuJoCo's
        ``gear clip(f, forcerange)``, where ``f`` is ``ctrl`` (motor), ``kp (ctrl - gear q) - kv gear qd``
        (position) or ``kv (ctrl - gear qd)`` (velocity), ``ctrl`` clamped to ``ctrlrange``.

        Below the force limit this is exactly ``gear kp (ctrl - gear q)`` (position), ``gear kv ctrl``
        (velocity) and ``gear ctrl`` (motor). A saturated servo's implicit part is compensated with
        the current ``qd`` (exact to first order in the substep).
        """
        return self.servo(ctrl)(q, qd)

    @property
    def whole_vectors(self) -> bool:
        """Whether actuator ``i`` drives joint ``i`` for every joint and no joint has explicit damping or a
        spring (a robot with one servo per joint): :meth:`servo` is then elementwise, and takes one env's
        ``(nu,)`` ``ctrl`` and ``(J,)`` states as well (float64: mixed with float32 or broadcast from
        ``(1, J)``, numpy's arithmetic is ~2x slower on such short vectors)."""
        terms = self._effort_terms
        return terms[5] and not terms[6]

    def servo(self, ctrl: np.ndarray):
        """:meth:`efforts` for a fixed ``ctrl (n, nu)`` as ``fn(q, qd) -> (n, J)``: the ctrl terms are
        computed once, so a step's substeps pay only the state-dependent part. With
        :attr:`whole_vectors`, ``ctrl`` may be one env's ``(nu,)`` (then ``fn(q, qd) -> (J,)``)."""
        c_u, c_q, c_qd, c_imp, unique, identity, damped, geared = self._effort_terms
        j, n, width = self.act_joint, ctrl.shape[0], len(self.joints)
        if not len(j):
            return lambda q, qd: self._passive(q, qd) if damped else np.zeros((n, width))
        base = c_u * np.minimum(np.maximum(ctrl, self.ctrl_range[:, 0]), self.ctrl_range[:, 1])
        g, lo, hi = self.gear, self.force_range[:, 0], self.force_range[:, 1]
        mx, mn = np.maximum, np.minimum  # ufuncs: np.clip adds ~3 µs of Python per call
        if self.moment is not None:  # actuators on fixed tendons: lengths and efforts through the moments
            moment = self.moment

            def through_moments(q: np.ndarray, qd: np.ndarray) -> np.ndarray:
                qa, qda = q @ moment.T, qd @ moment.T
                tau = g * mn(mx(base - c_q * qa - c_qd * qda, lo), hi) + c_imp * qda
                return (self._passive(q, qd) if damped else np.zeros((n, width))) + tau @ moment

            return through_moments
        if identity and not damped:  # actuator i drives joint i: the law on whole vectors (the hot case)

            def direct(q: np.ndarray, qd: np.ndarray) -> np.ndarray:
                tau = mn(mx(base - c_q * q - c_qd * qd, lo), hi)
                if geared:  # a unit gear multiplies by 1: skipped, the same bits
                    tau *= g
                tau += c_imp * qd  # the drive applies -gear² kv qd implicitly
                return tau

            return direct

        def efforts(q: np.ndarray, qd: np.ndarray) -> np.ndarray:
            qj, qdj = (q, qd) if identity else (q[:, j], qd[:, j])
            tau = g * mn(mx(base - c_q * qj - c_qd * qdj, lo), hi)
            tau += c_imp * qdj
            out = self._passive(q, qd) if damped else np.zeros((n, width))
            if unique:
                out[:, j] += tau
            else:
                np.add.at(out, (slice(None), j), tau)
            return out

        return efforts

    @property
    def _default_gain(self) -> np.ndarray:
        """The kind's ctrl coefficient: 1 for a motor, ``kp`` for a position servo, ``kv`` for a velocity servo."""
        kind = self.kind
        return ((kind == "motor") + self.kp * (kind == "position") + self.kv * (kind == "velocity")).astype(np.float64)

    @functools.cached_property
    def _effort_terms(self) -> tuple:
        """:meth:`servo`'s per-actuator coefficients, computed once: ``f = c_u u - c_q q - c_qd qd``
        (``c_u``: :attr:`gain`, by default 1 for a motor, ``kp`` for a position servo, ``kv`` for a velocity
        servo; ``c_q = kp gear``, ``c_qd = kv gear``), the implicit drive's ``gear² kv`` where it carries the servo's
        ``kv``; whether every actuator drives its own joint, whether actuator ``i`` drives joint ``i``
        for every joint, whether any joint has explicit damping or a spring, and whether any gear is not 1."""
        g, j = self.gear, self.act_joint
        c_u = self._default_gain if self.gain is None else np.asarray(self.gain, dtype=np.float64)
        unique = len(set(j.tolist())) == len(j)
        return (c_u.astype(np.float64), self.kp * g, self.kv * g, g * self.kv * self.kv_on_drive * g, unique,
                unique and len(j) == len(self.joints) and bool((j == np.arange(len(j))).all()),
                bool(self.explicit_damping.any() or (self.stiffness is not None and self.stiffness.any())),
                bool((g != 1.0).any()))


#: MuJoCo integrators by whether they integrate a servo's ``kv`` implicitly (PhysX's drive damping is).
IMPLICIT_KV = {"implicitfast": True, "implicit": True, "euler": False}


def mujoco_integrator(path: str) -> str:
    """The model's ``<option integrator>``, lower case (MuJoCo's default ``"euler"``); includes expanded."""
    from unisim_core.plugin.mjcf_lite import read_tree

    value = "euler"
    for option in read_tree(path).iter("option"):
        value = option.get("integrator", value).lower()
    return value


def physx_drives(joints: Sequence[Mapping[str, Any]], actuators: Sequence[Mapping[str, Any]], *,
                 implicit_kv: bool = True, dt: float | None = None,
                 tendons: Sequence[Mapping[str, Any]] = ()) -> PhysxDrives:
    """Drives for an MJCF model's ``joints`` (dicts with ``name type damping armature``, optionally
    ``frictionloss``, ``stiffness`` and ``springref``) and joint ``actuators`` (dicts with ``name kind joint
    gear ctrlrange forcerange kp kv``, and ``tendon``: a row of ``tendons``, dicts ``joints coef``, for an
    actuator on a fixed tendon), as ``unisim_core.plugin.mjcf_lite`` parses them. ``implicit_kv``:
    MuJoCo's ``implicitfast``/``implicit`` integrate servo ``kv`` implicitly (``True``), ``Euler``
    explicitly (``False``: it stays in the effort).

    ``dt`` (the substep, s): a joint with frictionloss keeps its damping (and its servos' ``kv``) as an
    explicit effort, because its drive carries the friction bound; MuJoCo integrates that damping
    implicitly, ``(M + dt D) qacc = f - D qd`` (``D``: joint damping, plus ``gear² kv`` where ``kv`` is
    implicit), which is an armature of ``dt D`` on the joint with the damping explicit. With ``dt`` the
    joint's armature gains it (exactly MuJoCo's update; stable at any damping); without, the damping is
    explicit on the joint's own inertia (stable below ``damping dt / I = 2``, :func:`explicit_damping_ratio`).
    """
    driven = [j for j, jt in enumerate(joints) if jt["type"] in ("hinge", "slide")]
    column = {j: c for c, j in enumerate(driven)}
    joint_damping = np.array([float(joints[j]["damping"]) for j in driven], dtype=np.float64)
    friction = np.array([float(joints[j].get("frictionloss", 0.0)) for j in driven], dtype=np.float64)
    if (friction < 0).any() or not np.isfinite(friction).all():
        raise ValueError(f"frictionloss must be finite and >= 0, got {friction.tolist()}")
    dry = friction > 0
    damping = np.where(dry, FRICTION_DAMPING, joint_damping)
    implicit = np.where(dry, joint_damping, 0.0)  # per frictionloss joint: MuJoCo's implicit D (with dt)
    act_joint, gear, kp, kv, kind, fr, cr, on_drive = [], [], [], [], [], [], [], []
    moment = np.zeros((len(actuators), len(driven)))
    for i, a in enumerate(actuators):
        name, j, t = a.get("name") or f"#{i}", int(a["joint"]), int(a.get("tendon", -1))
        if t >= 0:
            if tendons[t].get("type", "fixed") != "fixed":
                raise ValueError(f"actuator {name!r}: its tendon {tendons[t]['name']!r} is not a fixed tendon")
            for tj, c in zip(tendons[t]["joints"], tendons[t]["coef"]):
                moment[i, column[tj]] += c
        elif j not in column:
            raise ValueError(f"actuator {name!r}: joint {joints[j]['name']!r} is not a hinge/slide joint")
        else:
            moment[i, column[j]] = 1.0
        g = float(a["gear"])
        if g == 0.0 or not np.isfinite(g):
            raise ValueError(f"actuator {name!r}: gear must be finite and non-zero, got {g}")
        k = a["kind"]
        if k not in ("motor", "position", "velocity"):
            raise ValueError(f"actuator {name!r}: kind must be motor, position or velocity, got {k!r}")
        p = float(a["kp"]) if k == "position" else 0.0
        v = float(a["kv"]) if k != "motor" else 0.0
        on = t < 0 and implicit_kv and not dry[column[j]]
        if t >= 0 and implicit_kv and dt is not None:  # MuJoCo's implicit kv: armature along the tendon (below)
            c = np.abs(np.asarray(tendons[t]["coef"], dtype=np.float64))
            np.add.at(implicit, [column[tj] for tj in tendons[t]["joints"]], g * g * v * c * c.sum())
        if on:
            damping[column[j]] += g * g * v
        elif t < 0 and implicit_kv and dt is not None:  # a frictionloss joint: MuJoCo's implicit kv as armature
            implicit[column[j]] += g * g * v
        on_drive.append(on)
        act_joint.append(column[j] if t < 0 else -1)
        gear.append(g)
        kp.append(p)
        kv.append(v)
        kind.append(k)
        fr.append(tuple(float(x) for x in a["forcerange"]))
        cr.append(tuple(float(x) for x in a["ctrlrange"]))
    drives = PhysxDrives(
        joints=tuple(joints[j]["name"] for j in driven), damping=damping,
        force_limit=np.where(dry, friction, np.inf), explicit_damping=np.where(dry, joint_damping, 0.0),
        stiffness=np.array([float(joints[j].get("stiffness", 0.0)) for j in driven], dtype=np.float64),
        springref=np.array([float(joints[j].get("springref", 0.0)) for j in driven], dtype=np.float64),
        armature=np.array([float(joints[j]["armature"]) for j in driven], dtype=np.float64)
        + (0.0 if dt is None else float(dt) * implicit),
        act_joint=np.array(act_joint, dtype=np.int64), gear=np.array(gear, dtype=np.float64),
        kp=np.array(kp, dtype=np.float64), kv=np.array(kv, dtype=np.float64), kind=np.array(kind, dtype="<U8"),
        force_range=np.array(fr, dtype=np.float64).reshape(-1, 2),
        ctrl_range=np.array(cr, dtype=np.float64).reshape(-1, 2), kv_on_drive=np.array(on_drive, dtype=bool),
        moment=moment if any(int(a.get("tendon", -1)) >= 0 for a in actuators) else None)
    own = [i for i, a in enumerate(actuators) if a.get("gain") is not None]  # a <general> servo's ctrl coefficient
    if not own:
        return drives
    gain = drives._default_gain.copy()
    gain[own] = [float(actuators[i]["gain"]) for i in own]
    return dataclasses.replace(drives, gain=gain)


#: :class:`PhysxDrives` fields that :func:`stack_drives` stacks per env (the rest is the model's structure).
PER_ENV_FIELDS = ("damping", "force_limit", "explicit_damping", "armature", "kp", "kv", "kv_on_drive", "gain",
                  "stiffness", "springref")


def stack_drives(rows: Sequence[PhysxDrives]) -> PhysxDrives:
    """One :class:`PhysxDrives` for ``n`` envs from each env's own (the same model, its randomized gains,
    damping, armature and friction): :data:`PER_ENV_FIELDS` with a leading env axis ``(n, ...)``, the
    structure (joints, actuators' joints, gears, kinds, ranges) from ``rows[0]``. A ``gain`` of ``None``
    is the kind's default (:attr:`PhysxDrives.gain`)."""
    first = rows[0]
    stacked = {}
    for name in PER_ENV_FIELDS:
        if all(getattr(r, name) is None for r in rows):
            continue
        stacked[name] = np.stack([getattr(r, name) if getattr(r, name) is not None else
                                  r._default_gain if name == "gain" else np.zeros(len(r.joints)) for r in rows])
    return dataclasses.replace(first, **stacked)


def explicit_damping_ratio(lite: Any, drives: PhysxDrives, dt: float) -> np.ndarray:
    """Per hinge/slide joint, ``explicit damping × dt / I_min``: how stiff the damping that
    :meth:`PhysxDrives.efforts` applies explicitly (joints with frictionloss) is for a substep of
    ``dt`` s. ``I_min`` is a lower bound of the joint-space inertia: armature plus the joint body's own
    inertia about the joint axis (kg·m²; mass for a slide). Explicit damping is stable below 2;
    a backend refuses a ratio of 2 or more (``frictionloss_damping``)."""
    from unisim_core.contract import quat as Q

    dry = np.isfinite(drives.force_limit)
    explicit = drives.explicit_damping.copy()  # + the kv of servos on those joints, explicit there too
    j = drives.act_joint[drives.act_joint >= 0]  # a tendon actuator's kv: its own implicit step
    np.add.at(explicit, j, np.where(dry[j], (drives.gear ** 2 * drives.kv)[drives.act_joint >= 0], 0.0))
    out = np.zeros(len(drives.joints))
    rows = [j for j in lite.joints if j["type"] in ("hinge", "slide")]
    for c, j in enumerate(rows):
        if not (dry[c] and explicit[c]):
            continue
        b = j["body"]
        if j["type"] == "slide":
            inertia = float(lite.body_mass[b])
        else:
            axis = Q.quat_apply_inverse(np.asarray(lite.body_iquat[b], dtype=np.float64), np.asarray(j["axis"]))
            arm = np.asarray(lite.body_ipos[b], dtype=np.float64) - np.asarray(j["pos"], dtype=np.float64)
            off_axis = arm - np.dot(arm, j["axis"]) * np.asarray(j["axis"])
            inertia = float(np.dot(np.asarray(lite.body_inertia[b]), axis * axis)
                            + lite.body_mass[b] * np.dot(off_axis, off_axis))
        inertia += float(drives.armature[c])
        out[c] = explicit[c] * dt / inertia if inertia > 0 else np.inf
    return out


def physx_config_option(value: Any) -> PhysxSolverConfig:
    """Converter of a backend's ``physx`` option: a :class:`PhysxSolverConfig`, a dict of its fields
    or ``None`` (no overrides); anything else is an ``InvalidTypeError``/``InvalidInputError`` naming it."""
    from unisim_core.contract.errors import InvalidInputError, InvalidTypeError

    if value is None:
        return PhysxSolverConfig()
    if isinstance(value, PhysxSolverConfig):
        return value
    if not isinstance(value, dict):
        raise InvalidTypeError(f"physx: expected a PhysxSolverConfig, a dict of its fields or None, "
                               f"got {type(value).__name__}")
    try:
        return PhysxSolverConfig.from_payload(value)
    except TypeError as exc:
        raise InvalidTypeError(f"physx: {exc}") from None
    except ValueError as exc:
        raise InvalidInputError(f"physx: {exc}") from None


def pose_between(pos_a: np.ndarray, quat_a: np.ndarray, pos_b: np.ndarray, quat_b: np.ndarray,
                 t: float) -> tuple[np.ndarray, np.ndarray]:
    """The poses ``t`` (in [0, 1]) of the way from ``a`` to ``b``: positions ``(k, 3)`` linearly,
    orientations ``(k, 4)`` (unit, wxyz) along the shorter arc at constant angular velocity (slerp)."""
    from unisim_core.contract import quat as Q

    pa, pb = np.asarray(pos_a, dtype=np.float64), np.asarray(pos_b, dtype=np.float64)
    qa, qb = np.asarray(quat_a, dtype=np.float64), np.asarray(quat_b, dtype=np.float64)
    rel = Q.quat_mul(Q.quat_conjugate(qa), qb)
    rel = np.where(rel[..., :1] < 0.0, -rel, rel)  # the shorter arc
    s = np.linalg.norm(rel[..., 1:], axis=-1)
    angle = 2.0 * np.arctan2(s, rel[..., 0])
    axis = np.where(s[..., None] > 1e-12, rel[..., 1:] / np.maximum(s, 1e-300)[..., None], [1.0, 0.0, 0.0])
    q = Q.quat_normalize(Q.quat_mul(qa, Q.quat_from_axis_angle(axis, t * angle)))
    return pa + t * (pb - pa), q


class KinematicMoves:
    """Mocap bodies as PhysX kinematic actors (``unisim-sapien``, ``unisim-isaacsim``): per mocap body and
    env, the pose written since the last step and the pose the move starts from.

    A write is what the getters read at once (MuJoCo places a mocap body at its new pose). The engine
    moves the actor over the next step by kinematic targets (:meth:`targets`, one per substep),
    ``(k + 1) / nsteps`` of the way, at constant velocity, reaching the written pose at the last
    substep: a dynamic body it meets is pushed by a body moving at that speed (a teleported actor
    would only be pushed out of the overlap). Poses are in the engine's frame (positions m, unit
    quaternions wxyz); ``env_ids`` are the engine's rows.
    """

    def __init__(self, num_mocap: int, num_envs: int) -> None:
        shape = (num_mocap, num_envs)
        self.start_pos, self.end_pos = np.zeros(shape + (3,)), np.zeros(shape + (3,))
        self.start_quat, self.end_quat = np.zeros(shape + (4,)), np.zeros(shape + (4,))
        self.pending = np.zeros(shape, dtype=bool)  #: written since the last step

    def write(self, m: int, env_ids: np.ndarray, pos: np.ndarray, quat: np.ndarray, current_pos: np.ndarray,
              current_quat: np.ndarray) -> None:
        """Mocap body ``m`` goes to ``pos (k, 3)``, ``quat (k, 4)`` in ``env_ids``; ``current_*`` is the
        engine's pose of those envs now, where a move starts unless one is already pending."""
        ids = np.asarray(env_ids, dtype=np.int64)
        fresh = ~self.pending[m, ids]
        self.start_pos[m, ids[fresh]] = np.asarray(current_pos, dtype=np.float64)[fresh]
        self.start_quat[m, ids[fresh]] = np.asarray(current_quat, dtype=np.float64)[fresh]
        self.end_pos[m, ids] = pos
        self.end_quat[m, ids] = quat
        self.pending[m, ids] = True

    def poses(self, m: int, engine_pos: np.ndarray, engine_quat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mocap body ``m``'s pose per env ``(n, 3)``, ``(n, 4)``: the one written since the last step,
        else the engine's (``engine_*``, every env)."""
        rows = self.pending[m]
        pos, quat = np.array(engine_pos, dtype=np.float64), np.array(engine_quat, dtype=np.float64)
        pos[rows], quat[rows] = self.end_pos[m, rows], self.end_quat[m, rows]
        return pos, quat

    def targets(self, k: int, nsteps: int):
        """Kinematic targets for substep ``k`` of ``nsteps``: ``(m, env_ids, pos, quat)`` per mocap body with
        a pending write, ``(k + 1) / nsteps`` of the way (the written pose itself at the last substep)."""
        for m in np.flatnonzero(self.pending.any(axis=1)):
            ids = np.flatnonzero(self.pending[m])
            if k == nsteps - 1:
                yield int(m), ids, self.end_pos[m, ids], self.end_quat[m, ids]
            else:
                yield (int(m), ids, *pose_between(self.start_pos[m, ids], self.start_quat[m, ids], self.end_pos[m, ids],
                                                  self.end_quat[m, ids], (k + 1) / nsteps))

    def clear(self) -> None:
        """After a step: every move is done (the engine's poses are the written ones)."""
        self.pending[:] = False
