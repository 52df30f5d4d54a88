"""The documented causes of ``unisim zoo``'s ``deviates`` cells: ``{(backend, model label): cause}``.

Each cause was measured with the zoo's own protocol (100 steps, 2 envs) on a copy of the model
with one change: ``<flag contact="disable"/>`` ("contacts off"), ``integrator="Euler"`` for RK4,
MuJoCo's compiled inertia written as explicit ``<inertial>`` ("inertia explicit"), a joint range
that holds ``qpos0``, or one ``solref`` on every geom that touches; the deviation vanishing (or
shrinking to what is named) is the evidence. Each is written up with its figures in the engine's
page under ``docs/`` (motrix.md, sapien.md, genesis.md, mjwarp.md, newton.md). A deviating cell
without an entry is shown as ``not documented``.
"""

from __future__ import annotations

__all__ = ["CAUSES"]

_PHYSX_SOFT = ("contact: it settles from its keyframe onto PhysX's rigid contacts (MuJoCo's are soft, solref 0.02); "
               "contacts off: base_pos {} m (docs/sapien.md)")

CAUSES: dict[tuple[str, str], str] = {
    ("motrix", "google_barkour_vb"): (
        "contact friction cone: the file's cone='elliptic' impratio='10', which MotrixSim ignores (it warns); "
        "contacts off: base_pos 6.1e-07 (docs/motrix.md)"),
    ("motrix", "pal_talos"): (
        "contact stiffness mixing: the feet's solref 0.001 meets the floor's 0.02; MuJoCo averages the time constants "
        "(0.0105 s), MotrixSim the stiffness 1/tc² and damping 2/tc (501250, 1050: 55× stiffer, damping ratio 0.74), "
        "and the robot, its feet 2.05 mm into the floor at the keyframe, pops 23 mm up (MuJoCo: 1.7 mm); floor and "
        "robot both at solref 0.0105: ok, dof_pos 1.3e-03 (docs/motrix.md)"),
    ("motrix", "gymnasium/ant"): (
        "joint limits: qpos0 puts the four ankles 0.52 rad outside their 30-70° range; MuJoCo's soft limit throws "
        "them to 1.24 rad (they settle at 1.02), MotrixSim stops them at the limit (0.534); contacts off, Euler and "
        "inertia explicit together: still dof_pos 0.52 (docs/motrix.md)"),
    ("motrix", "gymnasium/half_cheetah"): "contact: contacts off: base_pos 2.9e-06 (docs/motrix.md)",
    ("motrix", "gymnasium/hopper"): "contact: contacts off: base_pos 2.0e-03, within the tier (docs/motrix.md)",
    ("motrix", "gymnasium/walker2d_v5"): "contact: contacts off: base_pos 2.0e-03, within the tier (docs/motrix.md)",
    ("motrix", "gymnasium/humanoid"): (
        "inertia from geoms: MotrixSim derives it itself (it warns; right_upper_arm 0.083 vs MuJoCo's 0.016 kg m²); "
        "inertia explicit: dof_pos 4.7e-03, within the tier (docs/motrix.md)"),
    ("motrix", "gymnasium/humanoidstandup"): (
        "inertia from geoms and contact: inertia explicit: dof_pos 0.10; inertia explicit and contacts off: 4.5e-03 "
        "(docs/motrix.md)"),
    ("motrix", "gymnasium/inverted_pendulum"): (
        "inertia from geoms on an unstable equilibrium: the pole's centre of mass sits 0.5 mm off its hinge "
        "(fromto tilted by 0.001) and tips it over; MotrixSim's own inertia tips it slower; inertia explicit: "
        "qpos 0.037, MuJoCo's own RK4-vs-Euler spread (0.033), and MotrixSim ignores RK4 (docs/motrix.md)"),
    ("mjwarp", "gymnasium/ant"): (
        "RK4 through contact: contacts off: base_pos 8.1e-06; Euler instead of the file's RK4: dof_pos 5.8e-03, both "
        "within the tier: only MuJoCo Warp's RK4 and contact together (the ant lands with its ankles thrown in from "
        "0.52 rad outside their range) depart from MuJoCo (docs/mjwarp.md)"),
    ("newton", "gymnasium/ant"): (
        "RK4 through contact, as on mjwarp (Newton's SolverMuJoCo is MuJoCo Warp): contacts off: base_pos 8.1e-06; "
        "Euler instead of RK4: dof_pos 5.8e-03, both within the tier"),
    ("genesis", "unitree_a1"): (
        "contact: the quadruped settles from its keyframe on Genesis' contact model; contacts off: dof_pos 2.7e-10 "
        "(docs/genesis.md)"),
    ("genesis", "unitree_go1"): "contact, as unitree_a1: contacts off: dof_pos 2.2e-10 (docs/genesis.md)",
    ("genesis", "wonik_allegro"): (
        "joint limit: qpos0 (no keyframe) puts the thumb's thj0 0.263 rad below its range; Genesis' limit pulls it "
        "in faster (0.008 vs MuJoCo's 0.002 rad after one step), both end at the limit (0.262 vs 0.261); contacts "
        "off: the same 0.0999 on that joint alone (docs/genesis.md)"),
    ("sapien", "google_barkour_v0"): _PHYSX_SOFT.format("2.7e-07"),
    ("sapien", "unitree_a1"): _PHYSX_SOFT.format("5.8e-07"),
    ("sapien", "unitree_go1"): _PHYSX_SOFT.format("3.4e-07"),
    ("sapien", "google_robot"): (
        "joint limit: qpos0 (no keyframe) puts both fingers 0.01 rad below their range [0.01, 1.3]; PhysX's hard "
        "limit corrects 0.8 of that in the first 4 ms step (2.0 rad/s) and the fingers run on to 0.054 rad, where "
        "frictionloss 1 N·m holds them against the servo's 20 × 0.044 = 0.88 N·m; MuJoCo's soft limit eases them to "
        "0.00999; the fingers' range from 0 instead: ok, dof_pos 7.7e-04 (docs/sapien.md)"),
}
