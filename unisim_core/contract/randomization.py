"""Domain-randomization plans and payloads, and the built-in term specifications.

An op carries concrete values (the caller samples them, so runs are reproducible):
``values`` has shape ``(len(env_ids), len(target_ids), *value_shape)`` for a
targeted term and ``(len(env_ids), *value_shape)`` for a global one.

Model terms (``kind="model"``) are resolved against the model's nominal value:
``set`` writes ``values``, ``scale`` writes ``nominal * values``, ``add`` writes
``nominal + values``. Re-applying a plan is therefore idempotent.
State terms (``kind="state"``) add velocity deltas; force terms stage a
world-frame wrench for the next ``step``.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs
import numpy as np

from unisim_core.contract.errors import InvalidInputError, UnknownNameError
from unisim_core.contract.validation import check_env_ids, check_float_array, check_index_array, check_limit

__all__ = [
    "TermSpec",
    "TERM_SPECS",
    "MODEL_TERMS",
    "RandomizationOp",
    "InitRandomizationPlan",
    "IntervalRandomizationPlan",
    "ResetRandomizationPayload",
    "resolve_op",
]


@attrs.frozen
class TermSpec:
    """``target``: id space (``body``, ``geom``, ``dof``, ``actuator``) or ``None`` (global).

    ``lower``: smallest valid resulting value (strict when ``strict``); ``None`` for terms
    without one. ``limit``: largest valid magnitude of a resulting value (of the delta for
    state and force terms), a physical bound far beyond any robot's (the term's unit).
    Both are checked before anything is written.
    """

    kind: str
    target: str | None
    value_shape: tuple[int, ...]
    lower: float | None = None
    strict: bool = False
    limit: float = 1e6


TERM_SPECS: dict[str, TermSpec] = {
    "body_mass": TermSpec("model", "body", (), 0.0, strict=True),  # kg, <= 1e6
    "body_inertia": TermSpec("model", "body", (3,), 0.0, strict=True),  # kg·m², principal, <= 1e6
    "body_com_offset": TermSpec("model", "body", (3,), limit=100.0),  # m, COM in body frame
    "geom_friction": TermSpec("model", "geom", (3,), 0.0, limit=100.0),  # coefficients
    "geom_size": TermSpec("model", "geom", (3,), 0.0, limit=1e3),  # m
    "geom_solref": TermSpec("model", "geom", (2,)),  # s and ratio, or -stiffness and -damping
    "geom_solimp": TermSpec("model", "geom", (5,), limit=1e3),
    "dof_damping": TermSpec("model", "dof", (), 0.0),  # N·m·s/rad, <= 1e6
    "dof_armature": TermSpec("model", "dof", (), 0.0),  # kg·m², <= 1e6
    "dof_frictionloss": TermSpec("model", "dof", (), 0.0),  # N·m, <= 1e6
    "actuator_kp": TermSpec("model", "actuator", (), 0.0),  # N·m/rad, <= 1e6
    "actuator_kd": TermSpec("model", "actuator", (), 0.0),  # N·m·s/rad, <= 1e6
    "gravity": TermSpec("model", None, (3,), limit=1e3),  # m/s², world frame (about 100 g)
    "root_lin_vel_delta": TermSpec("state", None, (3,), limit=1e3),  # m/s, world frame, added
    "root_ang_vel_delta": TermSpec("state", None, (3,), limit=1e3),  # rad/s, root body frame, added
    "body_force": TermSpec("force", "body", (3,)),  # N, world frame, <= 1e6
    "body_torque": TermSpec("force", "body", (3,)),  # N·m, world frame, <= 1e6
}

MODEL_TERMS = frozenset(t for t, s in TERM_SPECS.items() if s.kind == "model")
_OPERATIONS = ("set", "scale", "add")


def _opt_array(value):
    return None if value is None else np.array(value, copy=True)


@attrs.frozen(kw_only=True)
class RandomizationOp:
    """One term applied to some envs (``None``: all) and targets, with concrete values."""

    term: str
    values: np.ndarray = attrs.field(converter=lambda v: np.array(v, copy=True))
    env_ids: np.ndarray | None = attrs.field(default=None, converter=_opt_array)
    target_ids: np.ndarray | None = attrs.field(default=None, converter=_opt_array)
    operation: str = "set"

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.term, str) or not self.term:
            raise InvalidInputError(f"RandomizationOp.term: expected a term name, got {self.term!r}")
        if self.operation not in _OPERATIONS:
            raise InvalidInputError(
                f"RandomizationOp.operation: expected one of {_OPERATIONS}, got {self.operation!r}"
            )


def _ops(value) -> tuple[RandomizationOp, ...]:
    ops = tuple(value)
    for op in ops:
        if not isinstance(op, RandomizationOp):
            raise InvalidInputError(f"ops: expected RandomizationOp items, got {type(op).__name__}")
    return ops


@attrs.frozen
class _Plan:
    ops: tuple[RandomizationOp, ...] = attrs.field(default=(), converter=_ops)

    def iter_ops(self) -> Iterator[RandomizationOp]:
        return iter(self.ops)


class InitRandomizationPlan(_Plan):
    """Cold-path model randomization (``apply_init_randomization``)."""


class IntervalRandomizationPlan(_Plan):
    """Scheduled randomization during a rollout (``apply_interval_randomization``)."""


class ResetRandomizationPayload(_Plan):
    """Randomization applied with ``set_state`` to envs being reset."""


def resolve_op(
    op: RandomizationOp, *, num_envs: int, counts: dict[str, int], allowed: frozenset[str], phase: str,
    subset: np.ndarray | None = None,
) -> tuple[TermSpec, np.ndarray, np.ndarray | None, np.ndarray]:
    """Validate an op against its term spec; return ``(spec, env_ids, target_ids, values)``.

    ``counts`` maps each target id space to its size. ``subset`` (the envs being
    reset) is the default env set and bounds explicit ``env_ids``. Raises before
    anything is written.
    """
    spec = TERM_SPECS.get(op.term)
    if spec is None:
        raise UnknownNameError(f"{phase} randomization: unknown term {op.term!r}; known: {sorted(TERM_SPECS)}")
    if op.term not in allowed:
        raise InvalidInputError(
            f"{phase} randomization: term {op.term!r} is not supported in this phase by this backend; "
            f"supported: {sorted(allowed)}"
        )
    if spec.kind != "model" and op.operation != "add" and op.term not in ("body_force", "body_torque"):
        raise InvalidInputError(f"{op.term}: velocity deltas only support operation 'add', got {op.operation!r}")
    if op.env_ids is None:
        env_ids = np.arange(num_envs) if subset is None else subset
    else:
        env_ids = check_env_ids(f"{op.term}.env_ids", op.env_ids, num_envs)
        if subset is not None and not np.isin(env_ids, subset).all():
            raise InvalidInputError(f"{op.term}.env_ids: must be among the envs being reset {subset.tolist()}")
    target_ids = None
    shape: tuple[int, ...] = (len(env_ids),)
    if spec.target is not None:
        if op.target_ids is None:
            raise InvalidInputError(f"{op.term}.target_ids: expected {spec.target} ids, got None")
        target_ids = check_index_array(
            f"{op.term}.target_ids", op.target_ids, counts[spec.target], what=spec.target, unique=True
        )
        shape += (len(target_ids),)
    elif op.target_ids is not None:
        raise InvalidInputError(f"{op.term}.target_ids: this term is global, expected None")
    values = check_float_array(f"{op.term}.values", op.values, shape + spec.value_shape)
    if spec.kind != "model":
        check_limit(f"{op.term}.values", values, spec.limit, "the term's physical bound")
    return spec, env_ids, target_ids, values


def resolved_model_values(spec: TermSpec, term: str, nominal: np.ndarray, operation: str, values: np.ndarray):
    """Absolute values of a model term from its nominal table and the op; checks bounds."""
    if operation == "set":
        out = values
    elif operation == "scale":
        out = nominal * values
    else:
        out = nominal + values
    if spec.lower is not None:
        bad = out <= spec.lower if spec.strict else out < spec.lower
        if np.any(bad):
            rel = ">" if spec.strict else ">="
            raise InvalidInputError(
                f"{term}: resulting values must be {rel} {spec.lower}, got {out[bad].ravel()[0]}"
            )
    check_limit(f"{term}: resulting values", out, spec.limit, "the term's physical bound")
    return np.ascontiguousarray(out)
