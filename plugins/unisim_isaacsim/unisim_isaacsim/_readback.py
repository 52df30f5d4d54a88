"""Strict host-side verification of the worker's PhysX solver readback (SDK-free).

The worker reports ``{field: entry}`` for every field it applied, each entry naming where the value
was read (its provenance) and the evidence that goes with that kind of read:

- ``{"value": v, "source": "physx_view", "rows": n}``: read from the PhysX tensor view after
  ``sim.reset()``; ``n`` is the number of view rows that agreed and must equal ``num_envs``.
- ``{"value": v, "source": "usd_stage", "prims": n}``: an *authored* value read from the USD stage
  on ``n >= 1`` prims (schema defaults do not count), e.g. by
  :func:`unisim_isaacsim._usd_helpers.read_engine_solver_values`.

:func:`verify_solver_readback` compares every requested field with
:func:`~unisim_isaacsim._physx_solver.solver_value_matches` (float32 storage is the only tolerance)
and fails closed on a missing, extra or mismatched field, an unknown source, a source that field
cannot honestly have, or evidence that does not fit the source (a stage read labelled as an engine
read carries ``prims``, not ``rows``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from unisim_core.contract.errors import EngineError

from ._physx_solver import PhysxSolverConfig, solver_value_matches

__all__ = ["SolverReadbackError", "verify_solver_readback", "ALLOWED_SOURCES", "SOURCES"]

#: Evidence key each source must carry (and no other).
SOURCES = {"physx_view": "rows", "usd_stage": "prims"}

_STAGE_OR_VIEW = frozenset({"physx_view", "usd_stage"})
#: Sources each field can honestly have.
ALLOWED_SOURCES: dict[str, frozenset[str]] = {
    "solver_position_iteration_count": _STAGE_OR_VIEW,
    "solver_velocity_iteration_count": _STAGE_OR_VIEW,
    "bounce_threshold_velocity": _STAGE_OR_VIEW,
    "contact_offset": _STAGE_OR_VIEW,
    "rest_offset": _STAGE_OR_VIEW,
    "max_depenetration_velocity": _STAGE_OR_VIEW,
    # PhysX tensor views have no getter for the scene's GPU buffer capacities.
    "gpu_max_rigid_contact_count": frozenset({"usd_stage"}),
    "gpu_max_rigid_patch_count": frozenset({"usd_stage"}),
    "solver_type": frozenset({"usd_stage"}),
}
if set(ALLOWED_SOURCES) != {a.name for a in attrs.fields(PhysxSolverConfig)}:  # pragma: no cover
    raise ImportError("ALLOWED_SOURCES must name every PhysxSolverConfig field")


class SolverReadbackError(EngineError):
    """The worker's solver readback does not prove the requested configuration was applied."""


def _fail(field: str, why: str) -> SolverReadbackError:
    return SolverReadbackError(f"PhysX solver readback rejected for {field!r}: {why}")


def _check_entry(field: str, requested: Any, entry: Any, num_envs: int) -> None:
    if type(entry) is not dict:
        raise _fail(field, f"expected an entry dict with 'value' and 'source', got {entry!r}")
    source = entry.get("source")
    if source not in SOURCES:
        raise _fail(field, f"unknown source {source!r}; known sources: {sorted(SOURCES)}")
    if source not in ALLOWED_SOURCES[field]:
        raise _fail(field, f"source {source!r} is not a valid provenance for this field; "
                           f"allowed: {sorted(ALLOWED_SOURCES[field])}")
    evidence = SOURCES[source]
    expected_keys = {"value", "source", evidence}
    if set(entry) != expected_keys:
        extra = sorted(set(entry) - expected_keys)
        missing = sorted(expected_keys - set(entry))
        detail = "; ".join(p for p in (f"unexpected key(s) {extra}" if extra else "",
                                       f"missing key(s) {missing}" if missing else "") if p)
        hint = " (a stage read labelled as an engine read?)" if source == "physx_view" and "prims" in entry else ""
        raise _fail(field, f"a {source!r} entry carries exactly {sorted(expected_keys)}: {detail}{hint}")
    proof = entry[evidence]
    if source == "physx_view" and (type(proof) is not int or proof != num_envs):
        raise _fail(field, f"a PhysX view read must cover all {num_envs} env rows; it reports rows={proof!r}")
    if source == "usd_stage" and (type(proof) is not int or proof < 1):
        raise _fail(field, f"a stage read must name at least one authored prim; it reports prims={proof!r}")
    if not solver_value_matches(field, requested, entry["value"]):
        raise _fail(field, f"requested {requested!r}, the worker read back {entry['value']!r} from {source}")


def verify_solver_readback(requested: PhysxSolverConfig, report: Any, *, num_envs: int) -> dict[str, Any]:
    """Check the worker's ``report`` against ``requested``; return it, or raise ``SolverReadbackError``.

    Exactly the configured fields must be reported (a missing or an extra field fails), each with
    an honest provenance and a value equal to the request up to float32 storage.
    """
    if not isinstance(requested, PhysxSolverConfig):
        raise TypeError(f"requested must be a PhysxSolverConfig, got {type(requested).__name__}")
    if not isinstance(report, Mapping):
        raise SolverReadbackError(f"PhysX solver readback must be a dict of fields, got {report!r}")
    wanted = requested.configured_fields()
    missing = [f for f in wanted if f not in report]
    if missing:
        raise _fail(missing[0], f"the worker did not report it (missing fields: {missing})")
    extra = sorted(str(f) for f in report if f not in wanted)
    if extra:
        raise _fail(extra[0], f"the worker reported field(s) {extra} that were not requested "
                              f"(requested: {list(wanted)})")
    for field in wanted:
        _check_entry(field, getattr(requested, field), report[field], num_envs)
    return dict(report)
