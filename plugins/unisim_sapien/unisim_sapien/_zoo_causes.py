"""Why SAPIEN (PhysX) deviates from MuJoCo on models of ``unisim zoo`` (hook ``unisim_zoo_causes``):
``{model label: cause}``, each measured with the zoo's protocol (100 steps, 2 envs) on a copy of the
model with one change (see :meth:`unisim_core.contract.hooks.UniSimHookSpecs.unisim_zoo_causes`; docs/sapien.md).
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
    "gymnasium/half_cheetah": ("contact: it lands on PhysX's rigid contacts at the model's 10 ms step (MuJoCo's are "
                               "soft); contacts off: ok, base_pos 1.9e-06"),
    "gymnasium/hopper": ("contact: its foot lands at step 44 on PhysX's rigid contact; contacts off: ok, "
                         "base_pos 2.0e-03"),
    "gymnasium/walker2d": ("contact: its feet land at step 45 on PhysX's rigid contacts; contacts off: ok, "
                           "base_pos 2.0e-03"),
    "gymnasium/walker2d_v5": ("contact: its feet land at step 45 on PhysX's rigid contacts; contacts off: ok, "
                              "base_pos 2.0e-03"),
    "gymnasium/humanoid": (
        "joint limit and contact: both knees start at 0, outside their range [-160, -2] deg: PhysX's hard limit "
        "snaps them 0.028 rad in the first 3 ms step where MuJoCo's soft limit eases them in; the range to 0: "
        "deviates dof_pos 2.7e-02 (its rigid landing); that and contacts off: ok, base_pos 4.4e-03"),
    "gymnasium/humanoidstandup": (
        "contact and joint limit: it lies on the floor from the start (PhysX's contacts rigid, MuJoCo's soft) with "
        "both knees outside their range [-160, -2] deg; the range to 0 and contacts off: ok, base_pos 4.4e-03"),
    "gymnasium/ant": (
        "joint limit and contact: its four ankles start at 0, outside their range [30, 70] deg: PhysX's hard limit "
        "snaps them 0.37 rad in the first 10 ms step where MuJoCo's soft limit eases them in; the ranges from 0: "
        "deviates base_pos 2.0e-02 (its rigid landing at step 19)"),
    "wonik_allegro": (
        "joint limit: the thumb's base joint starts at 0 (no keyframe), outside its range [0.263, 1.396] rad, which "
        "PhysX's hard limit snaps (0.21 rad in the first 2 ms step) where MuJoCo's soft limit eases it in; the range "
        "from 0: deviates base_pos 7.9e-03 (the ellipsoid object on the palm: rigid contact, condim 6)"),
    "pal_talos": (
        "contact and joint limits: it stands on PhysX's rigid contacts, and four arm joints start at 0, outside "
        "their ranges, which PhysX's hard limit snaps; the arms' ranges from 0 and contacts off: ok, base_pos 1.9e-06"),
    "gymnasium/inverted_pendulum": (
        "integrator and joint limit: the pole falls (unstable, from 0.001 rad), which magnifies the difference "
        "between PhysX's first-order step and MuJoCo's RK4 at the model's 20 ms, and then meets its +-90 deg "
        "limit (hard in PhysX); implicitfast in both and the hinge unlimited: ok, qpos 1.1e-05"),
}
