"""Why SAPIEN (PhysX) deviates from MuJoCo on models of ``unisim zoo`` (hook ``unisim_zoo_causes``):
``{model label: cause}``, each measured with the zoo's protocol (100 steps, 2 envs) on a copy of the
model with one change (see :meth:`unisim_core.hooks.UniSimHookSpecs.unisim_zoo_causes`; docs/sapien.md).
"""

from __future__ import annotations

__all__ = ["CAUSES"]

_PHYSX_SOFT = ("contact: it settles from its keyframe onto PhysX's rigid contacts (MuJoCo's are soft, "
               "solref 0.02); contacts off: base_pos {} m (docs/sapien.md)")

CAUSES: dict[str, str] = {
    "google_barkour_v0": _PHYSX_SOFT.format("2.7e-07"),
    "unitree_a1": _PHYSX_SOFT.format("5.8e-07"),
    "unitree_go1": _PHYSX_SOFT.format("3.4e-07"),
    "google_robot": (
        "joint limit: qpos0 (no keyframe) puts both fingers 0.01 rad below their range [0.01, 1.3]; PhysX's hard "
        'limit corrects 0.8 of that in the first 4 ms step (2.0 rad/s) and the fingers run on to 0.054 rad, where'
        " frictionloss 1 N·m holds them against the servo's 20 × 0.044 = 0.88 N·m; MuJoCo's soft limit eases them"
        " to 0.00999; the fingers' range from 0 instead: ok, dof_pos 7.7e-04 (docs/sapien.md)"),
}
