"""Why MotrixSim deviates from MuJoCo on models of ``unisim zoo`` (hook ``unisim_zoo_causes``):
``{model label: cause}``, each measured with the zoo's protocol (100 steps, 2 envs) on a copy of the
model with one change (see :meth:`unisim_core.contract.hooks.UniSimHookSpecs.unisim_zoo_causes`; docs/motrix.md).
"""

from __future__ import annotations

__all__ = ["CAUSES"]

CAUSES: dict[str, str] = {
    "google_barkour_vb": (
        "contact friction cone: the file's cone='elliptic' impratio='10', which MotrixSim ignores (it warns; MuJoCo "
        "itself moves 0.011 rad between that and pyramidal); contacts off: base_pos 6.1e-07 (docs/motrix.md)"),
    "gymnasium/ant": (
        "joint limits: qpos0 puts the four ankles 0.52 rad outside their 30-70° range; MuJoCo's soft limit throws"
        " them to 1.24 rad (they settle at 1.02), MotrixSim stops them at the limit (0.534); contacts off: still "
        "dof_pos 0.21 (docs/motrix.md)"),
    "gymnasium/half_cheetah": "contact: contacts off: base_pos 2.9e-06 (docs/motrix.md)",
    "gymnasium/hopper": (
        "contact: contacts off: base_pos 2.0e-03, within the tier (the free fall under RK4 vs MotrixSim's "
        "semi-implicit Euler, g dt t / 2); Euler in both: still base_pos 6.8e-03 (docs/motrix.md)"),
    "gymnasium/walker2d_v5": (
        "contact: contacts off: base_pos 2.0e-03, within the tier (the free fall under RK4 vs MotrixSim's "
        "semi-implicit Euler) (docs/motrix.md)"),
    "gymnasium/humanoidstandup": (
        "contact (the inertia is MuJoCo's: the engine's copy carries MuJoCo's compiled inertials): contacts off: "
        "base_pos 4.5e-03, within the tier (docs/motrix.md)"),
    "gymnasium/inverted_pendulum": (
        "an unstable equilibrium magnifies any difference: the pole's centre of mass sits 0.5 mm off its hinge "
        "(fromto tilted by 0.001) and tips it over; MuJoCo's own RK4-vs-Euler spread is qpos 0.033, MotrixSim "
        "ignores RK4, and with Euler in both engines qpos 0.025 stays (float32 state) (docs/motrix.md)"),
}
