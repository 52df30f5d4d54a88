"""Per-env model fields behind the randomization terms (``Batch.expand``).

Each term maps to an MjModel field and the column(s) of it that hold the value.
Terms marked ``setconst`` feed ``mj_setConst`` (masses, inertias, COM offsets,
geom sizes, armature): the batch recomputes the derived constants per env.
"""

from __future__ import annotations

import mujoco
import numpy as np

from unisim_core.contract.errors import InvalidInputError

__all__ = ["TERM_FIELDS", "SETCONST_TERMS", "primitive_aabb", "check_term_targets"]

#: term -> MjModel field (``opt.gravity`` for the global term)
TERM_FIELDS = {
    "body_mass": "body_mass", "body_inertia": "body_inertia", "body_com_offset": "body_ipos",
    "geom_friction": "geom_friction", "geom_size": "geom_size", "geom_solref": "geom_solref",
    "geom_solimp": "geom_solimp", "dof_damping": "dof_damping", "dof_armature": "dof_armature",
    "dof_frictionloss": "dof_frictionloss", "actuator_kp": "actuator_biasprm",
    "actuator_kd": "actuator_biasprm", "gravity": "opt.gravity",
}
SETCONST_TERMS = frozenset({"body_mass", "body_inertia", "body_com_offset", "geom_size", "dof_armature"})

_G = mujoco.mjtGeom
#: geom types whose size randomization is meaningful (primitives)
SIZED_GEOMS = frozenset(int(t) for t in (_G.mjGEOM_SPHERE, _G.mjGEOM_CAPSULE, _G.mjGEOM_ELLIPSOID,
                                         _G.mjGEOM_CYLINDER, _G.mjGEOM_BOX))


def primitive_aabb(gtype: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Half-extents ``(..., 3)`` of primitive geoms in their own frame (for ``geom_aabb``)."""
    s0, s1, s2 = size[..., 0], size[..., 1], size[..., 2]
    out = np.stack([s0, s0, s0], axis=-1)  # sphere
    out = np.where((gtype == int(_G.mjGEOM_CAPSULE))[..., None], np.stack([s0, s0, s0 + s1], -1), out)
    out = np.where((gtype == int(_G.mjGEOM_CYLINDER))[..., None], np.stack([s0, s0, s1], -1), out)
    out = np.where(np.isin(gtype, [int(_G.mjGEOM_BOX), int(_G.mjGEOM_ELLIPSOID)])[..., None],
                   np.stack([s0, s1, s2], -1), out)
    return out


def check_term_targets(m: mujoco.MjModel, term: str, target_ids: np.ndarray | None, actuator_names) -> None:
    """Reject targets a term cannot change on this model (``InvalidInputError``): kp/kd of
    actuators without a PD (affine) bias, sizes of non-primitive geoms."""
    if term in ("actuator_kp", "actuator_kd"):
        bad = [actuator_names[a] for a in target_ids if m.actuator_biastype[a] != int(mujoco.mjtBias.mjBIAS_AFFINE)]
        if bad:
            raise InvalidInputError(f"{term}.target_ids: actuators {bad} have no PD bias "
                                    "(only position/velocity-type actuators have kp/kd)")
    if term == "geom_size":
        bad = [int(g) for g in target_ids if int(m.geom_type[g]) not in SIZED_GEOMS]
        if bad:
            raise InvalidInputError(f"geom_size.target_ids: geoms {bad} are not primitives "
                                    "(sphere, capsule, ellipsoid, cylinder, box); their size cannot change")
