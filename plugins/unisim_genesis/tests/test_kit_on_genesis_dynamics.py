"""The other half of the kit on Genesis (see test_kit_on_genesis.py): the closed forms (dynamics,
physics, contacts), the capabilities, state, conventions, determinism and reliability layers."""

from __future__ import annotations

from genesis_testutil import KIT_HALF, require_genesis

from unisim_conformance.runner import run_kit

require_genesis()


def test_kit_closed_forms_and_capabilities_pass_on_genesis():
    outcomes = run_kit("--unisim-backend=genesis", "-m", f"not ({KIT_HALF})", timeout=1800).assert_green()
    layers = {k.split("::")[0] for k in outcomes}
    assert {"dynamics", "physics", "contacts", "capabilities", "state", "reliability"} <= layers, sorted(layers)
    assert not layers & {"reference", "parity", "coverage", "surface", "bad_input"}, sorted(layers)
