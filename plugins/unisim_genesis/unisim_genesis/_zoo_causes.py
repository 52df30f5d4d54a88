"""Why Genesis deviates from MuJoCo on models of ``unisim zoo`` (hook ``unisim_zoo_causes``):
``{model label: cause}``, each measured with the zoo's protocol (100 steps, 2 envs) on a copy of the
model with one change (see :meth:`unisim_core.contract.hooks.UniSimHookSpecs.unisim_zoo_causes`; docs/genesis.md).
"""

from __future__ import annotations

__all__ = ["CAUSES"]

_CONTACT = "contact: it settles from its start on Genesis' contact solver; with <flag contact=\"disable\"/>: "

CAUSES: dict[str, str] = {
    "unitree_a1": _CONTACT + "dof_pos 2.7e-10 (docs/genesis.md)",
    "unitree_go1": _CONTACT + "dof_pos 2.2e-10 (docs/genesis.md)",
    "google_barkour_vb": _CONTACT + "dof_pos 9.4e-17 (elliptic cone and impratio 10 honoured; docs/genesis.md)",
    "gymnasium/ant": _CONTACT + "base_pos 3.8e-17 (RK4; every engine deviates here; docs/genesis.md)",
    "gymnasium/humanoidstandup": _CONTACT + "base_pos 1.5e-08 (lying on the floor, RK4; docs/genesis.md)",
    "gymnasium/walker2d_v5": _CONTACT + "dof_pos 2.9e-16 (RK4; docs/genesis.md)",
}
