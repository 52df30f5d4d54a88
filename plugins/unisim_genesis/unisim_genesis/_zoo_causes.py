"""Why Genesis deviates from MuJoCo on models of ``unisim zoo`` (hook ``unisim_zoo_causes``):
``{model label: cause}``, each measured with the zoo's protocol (100 steps, 2 envs) on a copy of the
model with one change (see :meth:`unisim_core.hooks.UniSimHookSpecs.unisim_zoo_causes`; docs/genesis.md).
"""

from __future__ import annotations

__all__ = ["CAUSES"]

CAUSES: dict[str, str] = {
    "unitree_a1": (
        "contact: the quadruped settles from its keyframe on Genesis' contact model; contacts off: dof_pos "
        '2.7e-10 (docs/genesis.md)'),
    "unitree_go1": 'contact, as unitree_a1: contacts off: dof_pos 2.2e-10 (docs/genesis.md)',
    "wonik_allegro": (
        "joint limit: qpos0 (no keyframe) puts the thumb's thj0 0.263 rad below its range; Genesis' limit pulls "
        "it in faster (0.008 vs MuJoCo's 0.002 rad after one step), both end at the limit (0.262 vs 0.261); "
        'contacts off: the same 0.0999 on that joint alone (docs/genesis.md)'),
}
