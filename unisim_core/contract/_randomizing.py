"""Applying randomization plans to a backend: ``apply_init_randomization``,
``apply_interval_randomization``, reset terms of ``set_state``, and ``get_model_field``.

Mixed into :class:`~unisim_core.contract.backend.SimBackend`. Every op of a plan is resolved and validated
(``randomization.resolve_op``) before any is written through the ``_write_model_field`` primitive;
the plans and term specs themselves live in ``randomization``.
"""

from __future__ import annotations

import numpy as np

from unisim_core.contract.capabilities import Capability
from unisim_core.contract.errors import (
    InvalidInputError,
    InvalidTypeError,
    UnknownNameError,
    UnsupportedCapabilityError,
)
from unisim_core.contract.randomization import (
    MODEL_TERMS,
    TERM_SPECS,
    InitRandomizationPlan,
    IntervalRandomizationPlan,
    resolve_op,
    resolved_model_values,
)

__all__ = ["Randomizing"]


class Randomizing:
    """Resolves, validates and applies randomization ops (model fields, wrenches, root velocity)."""

    def _counts(self) -> dict[str, int]:
        info = self.model_info
        return {"body": len(info.body_names), "geom": len(info.geom_names), "dof": info.nv,
                "actuator": len(info.actuator_names)}

    def _resolve_ops(self, plan, allowed, phase, subset: np.ndarray | None = None) -> list:
        for op in plan.iter_ops():  # a term the engine cannot hold per env: refused by name, with the reason
            if op.term in self.REFUSED_TERMS:
                raise UnsupportedCapabilityError(self._label, op.term,
                                                 f"{phase} randomization: {self.REFUSED_TERMS[op.term]}")
        resolved = []
        for op in plan.iter_ops():
            spec, ids, targets, values = resolve_op(op, num_envs=self._num_envs, counts=self._counts(),
                                                    allowed=frozenset(allowed), phase=phase, subset=subset)
            if spec.kind == "state" and self._root_v is None:
                raise InvalidInputError(f"{op.term}: the model has no floating root to randomize")
            if spec.kind == "model":
                nominal = self._nominal(op.term, targets)
                values = resolved_model_values(spec, op.term, nominal, op.operation, values)
                self._check_model_values(op.term, ids, targets, values)
            resolved.append((spec, ids, targets, values))
        return resolved

    def _nominal(self, term: str, targets: np.ndarray | None) -> np.ndarray:
        info = self.model_info
        table = {
            "body_mass": info.body_mass, "body_inertia": info.body_inertia, "body_com_offset": info.body_ipos,
            "geom_friction": info.geom_friction, "geom_size": info.geom_size, "geom_solref": info.geom_solref,
            "geom_solimp": info.geom_solimp, "dof_damping": info.dof_damping, "dof_armature": info.dof_armature,
            "dof_frictionloss": info.dof_frictionloss, "actuator_kp": info.actuator_kp,
            "actuator_kd": info.actuator_kd, "gravity": info.gravity,
        }[term]
        return table if targets is None else table[targets]

    def _apply_resolved(self, resolved: list, skip_kinds: tuple[str, ...] = ()) -> None:
        forces: dict[int, list[np.ndarray | None]] = {}
        for spec, ids, targets, values in resolved:
            if spec.kind in skip_kinds:
                continue
            if spec.kind == "model":
                term = next(t for t, s in TERM_SPECS.items() if s is spec)
                self._write_model_field(term, ids, targets, values)
                if term == "body_com_offset":
                    self._com_generation += 1  # contact torques are taken about the new COMs
            elif spec.kind == "force":
                slot = 0 if spec is TERM_SPECS["body_force"] else 1
                for col, b in enumerate(targets):
                    pair = forces.setdefault(int(b), [None, None])
                    if pair[slot] is None:
                        pair[slot] = np.zeros((self._num_envs, 3))
                    pair[slot][ids] = values[:, col]
            else:
                self._add_state_delta(spec, ids, values)
        if forces:
            bodies = np.array(sorted(forces))
            f = np.stack([forces[b][0] if forces[b][0] is not None else np.zeros((self._num_envs, 3))
                          for b in bodies], axis=1)
            has_t = any(forces[b][1] is not None for b in bodies)
            t = np.stack([forces[b][1] if forces[b][1] is not None else np.zeros((self._num_envs, 3))
                          for b in bodies], axis=1) if has_t else None
            self.apply_body_force(bodies, f, t)

    def _add_state_delta(self, spec, ids, values) -> None:
        qpos, qvel = self.get_qpos()[ids].astype(np.float64), self.get_qvel()[ids].astype(np.float64)
        self._add_root_velocity(qvel, np.arange(len(ids)), spec, values)
        self._set_state(ids, qpos, qvel)

    def apply_init_randomization(self, plan: InitRandomizationPlan) -> None:
        """Apply cold-path model randomization; every op is validated before any is written."""
        self._require(Capability.INIT_RANDOMIZATION)
        if not isinstance(plan, InitRandomizationPlan):
            raise InvalidTypeError(f"plan: expected InitRandomizationPlan, got {type(plan).__name__}")
        self._apply_resolved(self._resolve_ops(plan, self.INIT_TERMS, "init"))

    def apply_interval_randomization(self, plan: IntervalRandomizationPlan) -> None:
        """Apply a scheduled plan: velocity deltas now, wrenches for the next step, model terms."""
        self._require(Capability.INTERVAL_RANDOMIZATION)
        if not isinstance(plan, IntervalRandomizationPlan):
            raise InvalidTypeError(f"plan: expected IntervalRandomizationPlan, got {type(plan).__name__}")
        self._apply_resolved(self._resolve_ops(plan, self.INTERVAL_TERMS, "interval"))

    def get_model_field(self, term: str) -> np.ndarray:
        """Current per-env values of a randomizable model term,
        ``(num_envs, count, *value_shape)`` (``(num_envs, *value_shape)`` for global terms)."""
        if term not in MODEL_TERMS:
            raise UnknownNameError(f"term: unknown model term {term!r}; known: {sorted(MODEL_TERMS)}")
        caps = self.capabilities
        if Capability.INIT_RANDOMIZATION not in caps and Capability.RESET_RANDOMIZATION not in caps:
            raise self._unsupported(Capability.INIT_RANDOMIZATION)
        return self._read_model_field(term)

    def _add_root_velocity(self, qvel: np.ndarray, rows: np.ndarray, spec, values: np.ndarray) -> None:
        """Add root velocity deltas (linear world m/s, or angular body-frame rad/s) to ``qvel[rows]``."""
        v = self._root_v
        if spec is TERM_SPECS["root_lin_vel_delta"]:
            qvel[rows, v:v + 3] += values
        else:
            qvel[rows, v + 3:v + 6] += values
