"""Why MuJoCo Warp deviates from MuJoCo on models of ``unisim zoo`` (hook ``unisim_zoo_causes``):
``{model label: cause}``, each measured with the zoo's protocol (100 steps, 2 envs) on a copy of the
model with one change (see :meth:`unisim_core.contract.hooks.UniSimHookSpecs.unisim_zoo_causes`; docs/mjwarp.md).
"""

from __future__ import annotations

__all__ = ["CAUSES"]

CAUSES: dict[str, str] = {
    "gymnasium/ant": (
        "RK4 through contact: contacts off: base_pos 8.1e-06; Euler instead of the file's RK4: dof_pos 5.8e-03, "
        "both within the tier: only MuJoCo Warp's RK4 and contact together (the ant lands with its ankles thrown "
        'in from 0.52 rad outside their range) depart from MuJoCo (docs/mjwarp.md)'),
}
