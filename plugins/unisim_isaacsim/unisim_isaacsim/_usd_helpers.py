"""Worker-side USD stage helpers for the per-shape and per-body PhysX solver settings.

``contact_offset``/``rest_offset`` live on ``PhysxSchema.PhysxCollisionAPI`` and
``max_depenetration_velocity`` on ``PhysxSchema.PhysxRigidBodyAPI``; these helpers apply the API
to every collider / rigid body and author one value, then read the values back from the stage.
A readback is a *stage* read (provenance ``"usd_stage"``), never an engine read.

``pxr`` is imported lazily. Inside Isaac Sim ``pxr.PhysxSchema`` is bundled; with a stock
``usd-core`` the codeless ``physx-usd-schemas`` package provides it and registers its schema
plugins on ``import physx_usd_schemas``, which must happen before USD's schema registry is
first used in the process (later registrations stay unknown to USD).

Traversal includes instance proxies: a collider or body under an instanceable reference cannot
be authored, so applying fails closed naming it rather than silently skipping it.
"""

from __future__ import annotations

from typing import Any

from unisim_core.contract.errors import OptionalDependencyError
from unisim_physx import PhysxSolverConfig

SOURCE = "usd_stage"
_CONTACT_OFFSET = "physxCollision:contactOffset"
_REST_OFFSET = "physxCollision:restOffset"
_MAX_DEPENETRATION = "physxRigidBody:maxDepenetrationVelocity"
_SHOWN_PATHS = 5


def _physx_schema() -> Any:
    """Return ``PhysxSchema`` (Isaac Sim's, else ``physx-usd-schemas``), checked as registered."""
    try:
        from pxr import Usd
    except ImportError as exc:
        raise OptionalDependencyError(
            "USD (pxr) is not importable; run inside Isaac Sim or install "
            "'unisim-isaacsim[usd]' (usd-core, physx-usd-schemas)"
        ) from exc
    try:
        from pxr import PhysxSchema
    except ImportError:
        try:
            from physx_usd_schemas import PhysxSchema
        except ImportError as exc:
            raise OptionalDependencyError(
                "PhysxSchema is not importable; run inside Isaac Sim or install "
                "'unisim-isaacsim[usd]' (physx-usd-schemas)"
            ) from exc
    if not Usd.SchemaRegistry.GetTypeFromSchemaTypeName("PhysxCollisionAPI"):
        raise OptionalDependencyError(
            "PhysxSchema types are not registered with USD: 'import physx_usd_schemas' must run "
            "before USD's schema registry is first used in this process"
        )
    return PhysxSchema


def _format_paths(paths: list[str]) -> str:
    shown = ", ".join(paths[:_SHOWN_PATHS])
    extra = len(paths) - _SHOWN_PATHS
    return f"{shown} (and {extra} more)" if extra > 0 else shown


def _prims_with(stage: Any, api_name: str) -> list[Any]:
    """Every prim, instance proxies included, that has the given ``UsdPhysics`` API applied."""
    from pxr import Usd, UsdPhysics

    api = getattr(UsdPhysics, api_name)
    return [p for p in stage.Traverse(Usd.TraverseInstanceProxies()) if p.HasAPI(api)]


def _authorable_prims(stage: Any, api_name: str) -> list[Any]:
    """Prims to author on; none under an instance proxy, and at least one, else fail closed."""
    prims = _prims_with(stage, api_name)
    proxies = [str(p.GetPath()) for p in prims if p.IsInstanceProxy()]
    if proxies:
        raise ValueError(
            f"cannot author PhysX settings on UsdPhysics.{api_name} prims under instanceable "
            f"references (instance proxies): {_format_paths(proxies)}; make the referencing "
            "prims non-instanceable or author the settings in the referenced asset"
        )
    if not prims:
        raise ValueError(f"the stage has no prim with UsdPhysics.{api_name} to author on")
    return prims


def apply_collision_offsets(
    stage: Any, *, contact_offset: float | None = None, rest_offset: float | None = None
) -> int:
    """Author collision offsets on every collision shape; return how many shapes were authored.

    Values are validated with :class:`PhysxSolverConfig` (``rest_offset`` needs
    ``contact_offset`` and must be below it). Nothing is authored when a check fails.
    """
    if contact_offset is None and rest_offset is None:
        raise ValueError("apply_collision_offsets needs contact_offset and/or rest_offset")
    PhysxSolverConfig(contact_offset=contact_offset, rest_offset=rest_offset)
    physx_schema = _physx_schema()
    prims = _authorable_prims(stage, "CollisionAPI")
    for prim in prims:
        api = physx_schema.PhysxCollisionAPI.Apply(prim)
        if contact_offset is not None:
            api.CreateContactOffsetAttr(float(contact_offset))
        if rest_offset is not None:
            api.CreateRestOffsetAttr(float(rest_offset))
    return len(prims)


def apply_max_depenetration_velocity(stage: Any, max_depenetration_velocity: float) -> int:
    """Author one max depenetration velocity on every rigid body; return how many bodies."""
    if max_depenetration_velocity is None:
        raise ValueError("max_depenetration_velocity must be set (got None)")
    PhysxSolverConfig(max_depenetration_velocity=max_depenetration_velocity)
    physx_schema = _physx_schema()
    prims = _authorable_prims(stage, "RigidBodyAPI")
    for prim in prims:
        api = physx_schema.PhysxRigidBodyAPI.Apply(prim)
        api.CreateMaxDepenetrationVelocityAttr(float(max_depenetration_velocity))
    return len(prims)


def apply_contact_report(stage: Any) -> list[str]:
    """Apply ``PhysxSchema.PhysxContactReportAPI`` (threshold 0 N: every contact reported, as Isaac
    Lab's ``activate_contact_sensors`` does) to every rigid body; return their paths. PhysX reports
    contact forces only for bodies carrying it: Isaac Lab's ``ContactSensor`` senses exactly those."""
    physx_schema = _physx_schema()
    prims = _authorable_prims(stage, "RigidBodyAPI")
    for prim in prims:
        physx_schema.PhysxContactReportAPI.Apply(prim).CreateThresholdAttr(0.0)
    return [str(p.GetPath()) for p in prims]


def _read_uniform(stage: Any, api_name: str, attr_name: str) -> dict[str, Any]:
    """One authored value shared by every ``api_name`` prim, else fail closed."""
    prims = _prims_with(stage, api_name)
    if not prims:
        raise ValueError(f"cannot read {attr_name}: the stage has no UsdPhysics.{api_name} prim")
    values: dict[Any, list[str]] = {}
    unauthored: list[str] = []
    for prim in prims:
        attr = prim.GetAttribute(attr_name)
        if attr and attr.HasAuthoredValue():
            values.setdefault(attr.Get(), []).append(str(prim.GetPath()))
        else:
            unauthored.append(str(prim.GetPath()))
    if unauthored:
        raise ValueError(
            f"{attr_name} has no authored value on {len(unauthored)} of {len(prims)} "
            f"UsdPhysics.{api_name} prims: {_format_paths(unauthored)}"
        )
    if len(values) > 1:
        detail = "; ".join(f"{v!r} on {_format_paths(paths)}" for v, paths in values.items())
        raise ValueError(f"{attr_name} is not uniform across UsdPhysics.{api_name} prims: {detail}")
    (value,) = values
    return {"value": value, "source": SOURCE, "prims": len(prims)}


def read_engine_solver_values(
    stage: Any,
    *,
    include_contact_offset: bool,
    include_rest_offset: bool = False,
    include_max_depenetration_velocity: bool = False,
) -> dict[str, Any]:
    """Read the authored solver settings back from the USD stage (worker-side only).

    Returns ``{field: {"value": v, "source": "usd_stage", "prims": n}}`` for each included
    field. Only authored values count (schema defaults are not a readback); an unauthored or
    non-uniform value on any collider / rigid body, instance proxies included, fails closed.
    """
    wanted = (
        (include_contact_offset, "contact_offset", "CollisionAPI", _CONTACT_OFFSET),
        (include_rest_offset, "rest_offset", "CollisionAPI", _REST_OFFSET),
        (
            include_max_depenetration_velocity,
            "max_depenetration_velocity",
            "RigidBodyAPI",
            _MAX_DEPENETRATION,
        ),
    )
    return {
        field: _read_uniform(stage, api_name, attr_name)
        for include, field, api_name, attr_name in wanted
        if include
    }
