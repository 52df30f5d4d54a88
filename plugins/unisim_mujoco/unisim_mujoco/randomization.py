"""Per-env model fields behind the randomization terms (``Batch.expand``).

Each term maps to an MjModel field and the column(s) of it that hold the value.
Terms marked ``setconst`` feed ``mj_setConst`` (masses, inertias, COM offsets,
geom sizes, armature): the batch recomputes the derived constants per env.
"""

from __future__ import annotations

import mujoco
import numpy as np

__all__ = ["TERM_FIELDS", "SETCONST_TERMS", "primitive_aabb"]

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
