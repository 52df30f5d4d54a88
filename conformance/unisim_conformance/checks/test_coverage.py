"""Layer - coverage: a backend proves the contract on the kit's scenes, not on the ones it picks.

Every kit scene must load, or be refused from the constructor with ``UnsupportedCapabilityError``
naming a scene feature the backend declares unsupported (``UNSUPPORTED_SCENE_FEATURES`` on the
class, or an ``unsupported::<feature>`` expected-failure entry). Declarations are strict like
xfail: a declared feature that no scene is refused for fails. A backend that loads none of the
articulated scenes cannot pass.
"""

from __future__ import annotations

import pytest

from unisim_conformance import ARTICULATED, list_scenes

pytestmark = [pytest.mark.coverage, pytest.mark.contract("1.0")]


def _coverage_run(kit):
    outcome = {scene: kit.try_load(scene) for scene in list_scenes()}
    kit.record_coverage(outcome)
    return outcome


@pytest.mark.parametrize("prop", ["declared_refusals", "declarations_used", "articulated_scene_loads"])
def test_scene_coverage(kit, prop, record_property):
    """Load every kit scene once (1 env), shared by the three properties: every refusal names a
    declared feature (declared_refusals); every declared feature is refused by some scene
    (declarations_used); at least one articulated scene loads (articulated_scene_loads)."""
    declared = kit.unsupported_features()
    outcome = kit.shared("coverage.scenes", _coverage_run)
    refused = {s: f for s, f in outcome.items() if f is not None}
    if prop == "declared_refusals":
        record_property("scenes_loaded", sorted(s for s, f in outcome.items() if f is None))
        record_property("scenes_refused", refused)
        undeclared = {s: f for s, f in refused.items() if f not in declared}
        assert not undeclared, (f"backend {kit.label!r} refused scenes for features it does not declare "
                                f"unsupported: {undeclared}; list each in UNSUPPORTED_SCENE_FEATURES (feature: reason)")
    elif prop == "declarations_used":
        unused = sorted(set(declared) - set(refused.values()))
        assert not unused, (f"backend {kit.label!r} declares scene features {unused} unsupported, but no kit scene "
                            f"was refused for them (strict: remove the declaration once the feature loads)")
    else:
        loaded = [s for s in ARTICULATED if outcome.get(s, "missing") is None]
        assert loaded, (f"backend {kit.label!r} loads none of the articulated scenes {list(ARTICULATED)}: "
                        f"refused {refused}")
