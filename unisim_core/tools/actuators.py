"""Actuator models that run in the contract's per-substep path, the same numpy on every engine.

An actuator model turns held joint *targets* into joint *torques* before every physics substep,
through the contract's ``set_pre_step_control`` hook (``PRE_STEP_CONTROL``, declared by every
backend), and writes them to the model's **motor** actuators (gear 1: ``ctrl`` is the torque in
N·m, or the force in N for a slide joint). The torque is computed here, in float64, from the
contract's ``get_dof_pos``/``get_dof_vel``: given the same state, every engine is handed the same
torque bit for bit, and an engine that applies a motor's ``ctrl`` as given applies exactly it.

Configs (attrs, frozen, serializable with ``attrs.asdict``) select joints by regular expressions
(``re.fullmatch``) over the names of the joints the motors drive, as Isaac Lab's and mjlab's
actuator configs do; every value may be one number or ``{pattern: value}``:

- :class:`IdealPDCfg`: ``tau = clip(kp (q* - q) + kd (qd* - qd) + tau_ff, ±effort_limit)``.
- :class:`DCMotorCfg`: the same PD law, then the DC motor's torque-speed line:
  ``tau_max = clip(saturation_effort (1 - qd / velocity_limit), 0, effort_limit)``,
  ``tau_min = clip(saturation_effort (-1 - qd / velocity_limit), -effort_limit, 0)``.

``drive`` says what the target is: ``"position"`` (``q*`` rad, ``qd* = 0``, no feed-forward),
``"velocity"`` (``qd*`` rad/s, no position term) or ``"effort"`` (``tau_ff`` N·m, no PD term).
``delay = (min, max)`` substeps: a delay line on the targets; each env's lag is drawn uniformly
in ``[min, max]`` at :meth:`ActuatorModel.reset` (Isaac Lab's ``DelayedPDActuator``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import attrs
import numpy as np

from unisim_core.contract.errors import InvalidInputError, InvalidTypeError, UnknownNameError
from unisim_core.contract.validation import check_env_ids

if TYPE_CHECKING:
    from unisim_core.contract.backend import SimBackend

__all__ = ["ActuatorCfg", "IdealPDCfg", "DCMotorCfg", "ActuatorModel", "DRIVES", "motor_actuator_names"]

#: What an actuator's target means: joint position (rad), joint velocity (rad/s), or torque (N·m).
DRIVES = ("position", "velocity", "effort")

Value = float | Mapping[str, float]


def _value(inst, attribute, value) -> None:
    items = value.items() if isinstance(value, Mapping) else [("", value)]
    for key, v in items:
        if not isinstance(key, str) or isinstance(v, bool) or not isinstance(v, int | float) or np.isnan(v) or v < 0:
            raise InvalidInputError(f"{type(inst).__name__}.{attribute.name}: expected a number >= 0 or "
                                    f"{{joint pattern: number >= 0}}, got {value!r}")


def _frozen_value(value: Value) -> Value:
    return dict(value) if isinstance(value, Mapping) else float(value) if isinstance(value, int) else value


def _patterns(inst, attribute, value) -> None:
    if not value or not all(isinstance(p, str) and p for p in value):
        raise InvalidInputError(f"{type(inst).__name__}.{attribute.name}: expected a non-empty tuple of joint name "
                                f"patterns, got {value!r}")
    for p in value:
        try:
            re.compile(p)
        except re.error as exc:
            raise InvalidInputError(f"{type(inst).__name__}.{attribute.name}: {p!r} is not a regular expression "
                                    f"({exc})") from None


def _delay(inst, attribute, value) -> None:
    if (len(value) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
            or not 0 <= value[0] <= value[1]):
        raise InvalidInputError(f"{type(inst).__name__}.{attribute.name}: expected (min, max) substeps with "
                                f"0 <= min <= max, got {value!r}")


def _drive(inst, attribute, value) -> None:
    if value not in DRIVES:
        raise InvalidInputError(f"{type(inst).__name__}.{attribute.name}: expected one of {DRIVES}, got {value!r}")


def _to_delay(value) -> tuple[int, ...]:
    return (value, value) if isinstance(value, int) and not isinstance(value, bool) else tuple(value)


@attrs.frozen(kw_only=True)
class ActuatorCfg:
    """Joints (``joint_names``: ``re.fullmatch`` patterns), drive, gains (``stiffness`` N·m/rad,
    ``damping`` N·m·s/rad), ``effort_limit`` (N·m) and target ``delay`` ((min, max) substeps, or
    one int). Use :class:`IdealPDCfg` or :class:`DCMotorCfg`."""

    joint_names: tuple[str, ...] = attrs.field(converter=tuple, validator=_patterns)
    drive: str = attrs.field(default="position", validator=_drive)
    stiffness: Value = attrs.field(default=0.0, converter=_frozen_value, validator=_value)
    damping: Value = attrs.field(default=0.0, converter=_frozen_value, validator=_value)
    effort_limit: Value = attrs.field(default=np.inf, converter=_frozen_value, validator=_value)
    delay: tuple[int, int] = attrs.field(default=(0, 0), converter=_to_delay, validator=_delay)


@attrs.frozen(kw_only=True)
class IdealPDCfg(ActuatorCfg):
    """Explicit PD with per-joint gains, clipped to ``effort_limit``."""


@attrs.frozen(kw_only=True)
class DCMotorCfg(ActuatorCfg):
    """PD, then the torque-speed line of a DC motor: ``saturation_effort`` (N·m, stall torque) falling
    linearly to 0 at ``velocity_limit`` (rad/s), within ``±effort_limit``."""

    saturation_effort: Value = attrs.field(default=np.inf, converter=_frozen_value, validator=_value)
    velocity_limit: Value = attrs.field(default=np.inf, converter=_frozen_value, validator=_value)


def motor_actuator_names(backend: SimBackend) -> tuple[str, ...]:
    """Actuators of ``backend`` that take a torque (no position or velocity gain): motors."""
    kp, kd = backend.get_actuator_gains()
    return tuple(n for n, p, d in zip(backend.get_actuator_names(), kp, kd) if p == 0 and d == 0)


def _per_joint(cfg: ActuatorCfg, field: str, joints: Sequence[str]) -> np.ndarray:
    value = getattr(cfg, field)
    if not isinstance(value, Mapping):
        return np.full(len(joints), float(value))
    out = np.full(len(joints), np.nan)
    for pattern, v in value.items():
        hit = [i for i, j in enumerate(joints) if re.fullmatch(pattern, j)]
        if not hit:
            raise UnknownNameError(f"{type(cfg).__name__}.{field}: pattern {pattern!r} matches none of its joints "
                                   f"{list(joints)}")
        out[hit] = float(v)
    if np.isnan(out).any():
        missing = [j for j, v in zip(joints, out) if np.isnan(v)]
        raise InvalidInputError(f"{type(cfg).__name__}.{field}: no value for joints {missing}")
    return out


class ActuatorModel:
    """Actuator configs bound to a backend: targets in, motor torques out, every substep.

    ``ActuatorModel(backend, cfgs)`` resolves every actuator of the model (all must be gear-1
    motors, each joint matched by exactly one config; anything else is refused naming the
    actuators or joints) and installs itself with ``backend.set_pre_step_control``. Then
    ``backend.step(targets, nsteps)`` holds ``targets (num_envs, num_actuators)`` (ctrl column
    order; each column in its drive's unit) and every substep gets fresh torques.

    - ``joint_names``: the joint of each ctrl column; ``kp``, ``kd``, ``effort_limit``,
      ``saturation_effort``, ``velocity_limit``: ``(num_actuators,)`` float64 per column.
    - ``computed_torque`` / ``applied_torque``: ``(num_envs, num_actuators)`` N·m of the last
      substep, before and after the limits.
    - :meth:`reset` draws the delay of ``env_ids`` and fills their delay line with ``targets``.
    """

    def __init__(self, backend: SimBackend, cfgs: Sequence[ActuatorCfg], *, install: bool = True) -> None:
        if not cfgs or not all(isinstance(c, ActuatorCfg) for c in cfgs):
            raise InvalidTypeError(f"cfgs: expected a non-empty sequence of ActuatorCfg, got {cfgs!r}")
        self.backend = backend
        names, joints = backend.get_actuator_names(), backend.get_actuator_joint_names()
        kp, kd = backend.get_actuator_gains()
        servos = [f"{a} (joint {j}: kp {p:g}, kv {d:g})" for a, j, p, d in zip(names, joints, kp, kd) if p or d]
        if servos:
            raise InvalidInputError(
                f"cfgs: an actuator model writes torques to motor actuators, but the model drives {servos} with "
                f"position/velocity servos; replace them with <motor> actuators (gear 1) or drop the actuator model")
        self.joint_names = tuple(joints)
        owner = [-1] * len(joints)
        for k, cfg in enumerate(cfgs):
            hit = [i for i, j in enumerate(joints) if any(re.fullmatch(p, j) for p in cfg.joint_names)]
            if not hit:
                raise UnknownNameError(f"cfgs[{k}].joint_names: {list(cfg.joint_names)} match none of the actuated "
                                       f"joints {list(joints)}")
            twice = [joints[i] for i in hit if owner[i] >= 0]
            if twice:
                raise InvalidInputError(f"cfgs[{k}].joint_names: joints {twice} are already matched by cfgs"
                                        f"[{owner[joints.index(twice[0])]}]; each joint takes one actuator")
            for i in hit:
                owner[i] = k
        free = [j for j, o in zip(joints, owner) if o < 0]
        if free:
            raise InvalidInputError(f"cfgs: actuated joints {free} are matched by no actuator config")
        self.cfgs = tuple(cfgs)
        na = len(joints)
        fields = ("stiffness", "damping", "effort_limit", "saturation_effort", "velocity_limit")
        table = {f: np.empty(na) for f in fields}
        self._drive = np.empty(na, dtype=object)
        self._min_delay, self._max_delay = np.zeros(na, dtype=np.int64), np.zeros(na, dtype=np.int64)
        for k, cfg in enumerate(cfgs):
            cols = [i for i in range(na) if owner[i] == k]
            mine = [joints[i] for i in cols]
            for f in fields:
                table[f][cols] = _per_joint(cfg, f, mine) if hasattr(cfg, f) else np.inf
            self._drive[cols] = cfg.drive
            self._min_delay[cols], self._max_delay[cols] = cfg.delay
        self.kp, self.kd, self.effort_limit = table["stiffness"], table["damping"], table["effort_limit"]
        self.saturation_effort, self.velocity_limit = table["saturation_effort"], table["velocity_limit"]
        self._dc = np.isfinite(self.saturation_effort) | np.isfinite(self.velocity_limit)
        self._pos = self._drive == "position"
        self._vel = self._drive == "velocity"
        self._eff = self._drive == "effort"
        self._kp_eff = np.where(self._pos, self.kp, 0.0)  # the position term only for position drives
        self._kd_eff = np.where(self._eff, 0.0, self.kd)
        self._pos_cols = backend.get_joint_dof_pos_indices(list(joints))
        self._vel_cols = backend.get_joint_dof_vel_indices(list(joints))
        n = backend.num_envs
        self._lag = np.zeros(n, dtype=np.int64)
        self._depth = int(self._max_delay.max()) + 1
        self._line = np.zeros((self._depth, n, na))  # ring buffer of the targets, newest at _head
        self._head = 0
        self._rows = np.arange(n)
        self.computed_torque = np.zeros((n, na))
        self.applied_torque = np.zeros((n, na))
        if install:
            backend.set_pre_step_control(self)

    @property
    def delayed(self) -> bool:
        """Whether any joint has a delay line."""
        return self._depth > 1

    def reset(self, env_ids: np.ndarray, targets: np.ndarray | None = None,
              rng: np.random.Generator | None = None) -> None:
        """Start ``env_ids`` afresh: draw each env's lag (one per env, uniform in the widest configured
        ``[min, max]``, using ``rng``; needed when a delay range is not one value) and fill its delay
        line with ``targets (len(env_ids), num_actuators)`` (default: zeros)."""
        ids = check_env_ids("env_ids", env_ids, self.backend.num_envs)
        if self.delayed:
            lo, hi = int(self._min_delay.max()), int(self._max_delay.max())
            if lo == hi:
                self._lag[ids] = hi
            elif rng is None:
                raise InvalidInputError(f"rng: a delay range [{lo}, {hi}] needs a random generator to draw from")
            else:
                self._lag[ids] = rng.integers(lo, hi + 1, size=len(ids))
            self._line[:, ids] = 0.0 if targets is None else np.asarray(targets, dtype=np.float64)[None]
        self.computed_torque[ids] = 0.0
        self.applied_torque[ids] = 0.0

    def torque(self, targets: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """``(num_envs, num_actuators)`` torques (N·m) for ``targets`` at joint positions ``q`` and
        velocities ``qd`` (each ``(num_envs, num_actuators)``, ctrl column order), without delay.
        Stores ``computed_torque`` and ``applied_torque``."""
        pos = np.where(self._pos, targets, q)  # position term (q* - q) = 0 off position drives
        vel = np.where(self._vel, targets, 0.0)
        ff = np.where(self._eff, targets, 0.0)
        tau = self._kp_eff * (pos - q) + self._kd_eff * (vel - qd) + ff
        self.computed_torque = tau
        if self._dc.any():
            sat, vlim, lim = self.saturation_effort, self.velocity_limit, self.effort_limit
            hi = np.clip(sat * (1.0 - qd / vlim), 0.0, lim)
            lo = np.clip(sat * (-1.0 - qd / vlim), -lim, 0.0)
            hi, lo = np.where(self._dc, hi, lim), np.where(self._dc, lo, -lim)
            tau = np.clip(tau, lo, hi)
        else:
            tau = np.clip(tau, -self.effort_limit, self.effort_limit)
        self.applied_torque = tau
        return tau

    def __call__(self, backend: SimBackend, ctrl: np.ndarray) -> np.ndarray:
        """The pre-step hook: ``ctrl`` holds the targets; returns the motors' torques in ``np_dtype``."""
        targets = ctrl.astype(np.float64)
        if self.delayed:
            self._head = (self._head + 1) % self._depth
            self._line[self._head] = targets
            targets = self._line[(self._head - self._lag) % self._depth, self._rows]
        q = backend.get_dof_pos()[:, self._pos_cols].astype(np.float64)
        qd = backend.get_dof_vel()[:, self._vel_cols].astype(np.float64)
        return self.torque(targets, q, qd).astype(backend.np_dtype)

    def close(self) -> None:
        """Remove the hook from the backend."""
        if not self.backend.closed:
            self.backend.set_pre_step_control(None)
