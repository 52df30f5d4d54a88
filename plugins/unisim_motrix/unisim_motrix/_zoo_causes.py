"""Why MotrixSim deviates from MuJoCo on models of ``unisim zoo`` (hook ``unisim_zoo_causes``):
``{model label: cause}``, each measured with the zoo's protocol (100 steps, 2 envs) on a copy of the
model with one change (see :meth:`unisim_core.hooks.UniSimHookSpecs.unisim_zoo_causes`; docs/motrix.md).
"""

from __future__ import annotations

__all__ = ["CAUSES"]

CAUSES: dict[str, str] = {
    "google_barkour_vb": (
        "contact friction cone: the file's cone='elliptic' impratio='10', which MotrixSim ignores (it warns); "
        'contacts off: base_pos 6.1e-07 (docs/motrix.md)'),
    "pal_talos": (
        "contact stiffness mixing: the feet's solref 0.001 meets the floor's 0.02; MuJoCo averages the time "
        'constants (0.0105 s), MotrixSim the stiffness 1/tc² and damping 2/tc (501250, 1050: 55× stiffer, damping'
        ' ratio 0.74), and the robot, its feet 2.05 mm into the floor at the keyframe, pops 23 mm up (MuJoCo: 1.7'
        ' mm); floor and robot both at solref 0.0105: ok, dof_pos 1.3e-03 (docs/motrix.md)'),
    "gymnasium/ant": (
        "joint limits: qpos0 puts the four ankles 0.52 rad outside their 30-70° range; MuJoCo's soft limit throws"
        ' them to 1.24 rad (they settle at 1.02), MotrixSim stops them at the limit (0.534); contacts off, Euler '
        'and inertia explicit together: still dof_pos 0.52 (docs/motrix.md)'),
    "gymnasium/half_cheetah": 'contact: contacts off: base_pos 2.9e-06 (docs/motrix.md)',
    "gymnasium/hopper": 'contact: contacts off: base_pos 2.0e-03, within the tier (docs/motrix.md)',
    "gymnasium/walker2d_v5": 'contact: contacts off: base_pos 2.0e-03, within the tier (docs/motrix.md)',
    "gymnasium/humanoid": (
        "inertia from geoms: MotrixSim derives it itself (it warns; right_upper_arm 0.083 vs MuJoCo's 0.016 kg "
        'm²); inertia explicit: dof_pos 4.7e-03, within the tier (docs/motrix.md)'),
    "gymnasium/humanoidstandup": (
        'inertia from geoms and contact: inertia explicit: dof_pos 0.10; inertia explicit and contacts off: '
        '4.5e-03 (docs/motrix.md)'),
    "gymnasium/inverted_pendulum": (
        "inertia from geoms on an unstable equilibrium: the pole's centre of mass sits 0.5 mm off its hinge "
        "(fromto tilted by 0.001) and tips it over; MotrixSim's own inertia tips it slower; inertia explicit: "
        "qpos 0.037, MuJoCo's own RK4-vs-Euler spread (0.033), and MotrixSim ignores RK4 (docs/motrix.md)"),
}
