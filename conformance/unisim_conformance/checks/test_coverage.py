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


def test_scene_coverage(kit, record_property):
    """Load every kit scene once (1 env): refusals name declared features; declarations are used;
    at least one articulated scene loads."""
    declared = kit.unsupported_features()
    outcome = {scene: kit.try_load(scene) for scene in list_scenes()}
    kit.record_coverage(outcome)
    refused = {s: f for s, f in outcome.items() if f is not None}
    record_property("scenes_loaded", sorted(s for s, f in outcome.items() if f is None))
    record_property("scenes_refused", refused)
    undeclared = {s: f for s, f in refused.items() if f not in declared}
    assert not undeclared, (f"backend {kit.label!r} refused scenes for features it does not declare unsupported: "
                            f"{undeclared}; list each in UNSUPPORTED_SCENE_FEATURES (feature: reason)")
    unused = sorted(set(declared) - set(refused.values()))
    assert not unused, (f"backend {kit.label!r} declares scene features {unused} unsupported, but no kit scene "
                        f"was refused for them (strict: remove the declaration once the feature loads)")
    loaded = [s for s in ARTICULATED if outcome.get(s, "missing") is None]
    assert loaded, (f"backend {kit.label!r} loads none of the articulated scenes {list(ARTICULATED)}: "
                    f"refused {refused}")
