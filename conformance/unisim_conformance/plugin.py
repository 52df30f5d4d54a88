"""The kit's pytest plugin (entry point ``pytest11: unisim_conformance``).

Inert until activated: with no ``--unisim-*`` option and no ``unisim_backend_factory``
fixture in a conftest, it registers no marker, collects nothing and changes no test.
The checks (``unisim_conformance/checks/test_*.py``) are ignored at collection unless
the kit is active.

Activation:

- ``--unisim-backend=NAME`` (entry-point name, ``"module:Class"``), with repeatable
  ``--unisim-option KEY=VALUE`` passed to every backend the kit creates; or
- a conftest fixture ``unisim_backend_factory`` returning
  ``factory(scene: SceneCfg, num_envs: int, sim_dt: float) -> SimBackend``.
  (``--unisim-backend`` wins when both are present.)

Options: ``--unisim-reference=NAME`` enables the parity layer; ``--unisim-report=PATH`` writes a
JSON report (outcome, skip reason and measured values per check).

Expected failures are declared on the backend class only (``KNOWN_KIT_DEVIATIONS = {check id:
reason}``, strict xfail; a worker or Ray host forwards its inner backend's). The removed ways
(``--unisim-xfail``, a ``unisim_expected_failures`` fixture, a ``pytest_unisim_expected_failures``
hook) stop the run with a usage error saying so.
"""

from __future__ import annotations

import argparse
import json
import types
from pathlib import Path
from typing import Any

import pytest

from . import _rules, _xfail
from ._resolve import make_factory, parse_options

CHECKS_DIR = (Path(__file__).parent / "checks").resolve()
FACTORY_FIXTURE = "unisim_backend_factory"
REMOVED_FIXTURE = "unisim_expected_failures"
REMOVED_HOOK = "pytest_unisim_expected_failures"
REMOVED = ("expected failures are declared on the backend class only: KNOWN_KIT_DEVIATIONS = {check id: reason} "
           "(docs/conformance.md, 'Expected failures')")

LAYERS = {
    "surface": "methods, signatures, shapes, dtypes of the contract surface",
    "conventions": "frames and layouts with known answers (wxyz, world/body velocities)",
    "state": "set_state isolation, visibility, round trips; step(nsteps) semantics",
    "determinism": "same state and controls give the same trajectory",
    "physics": "closed-form physics (free fall, pendulum period, F = m a, friction)",
    "dynamics": "the physics binding: actuators, joint damping/armature/limits/friction, sensors vs closed forms",
    "capabilities": "declared capabilities work; undeclared ones raise UnsupportedCapabilityError",
    "bad_input": "invalid input is rejected with a named argument and nothing written",
    "parity": "trajectories against --unisim-reference within per-scene tolerance tiers",
    "reference": "replays of MuJoCo trajectories shipped with the kit, within documented tolerance tiers",
    "coverage": "every kit scene loads or is refused for a declared feature; articulated scenes load",
    "reliability": "lifecycle after close, divergence policy, extreme finite values, error types",
    "contacts": "net contact forces per body (contact_forces) against closed forms",
}
MARKERS = [f"{name}: UniSim conformance layer - {doc}" for name, doc in LAYERS.items()] + [
    "contract(version): UniSim conformance: contract version that introduced the check",
    "requires(*capabilities): UniSim conformance: capabilities the check needs (skipped otherwise)",
    "rules(version): UniSim conformance: kit rules version that introduced the check (default: its layer's)",
]


class KitState:
    """Per-session kit state (in ``config.stash``)."""

    def __init__(self) -> None:
        self.active = False
        self.mode = ""  # "option" | "fixture"
        self.spec: str | None = None
        self.options: dict[str, Any] = {}
        self.factory = None
        self.reference_spec: str | None = None
        self.reference_factory = None
        self.declared: dict[str, str] = {}  # the backend's KNOWN_KIT_DEVIATIONS, read at the probe
        self.check_items: list[Any] = []  # every collected kit check, deselected ones too
        self.report_path: str | None = None
        self.results: list[dict[str, Any]] = []
        self.collected = 0
        self.cache: dict[str, Any] = {}


KIT = pytest.StashKey[KitState]()


class RemovedHooks:
    """A hook the kit no longer calls, kept only so that a conftest implementing it gets a clear error."""

    @pytest.hookspec(firstresult=False)
    def pytest_unisim_expected_failures(self, config):  # pragma: no cover - spec
        """Removed: declare ``KNOWN_KIT_DEVIATIONS`` on the backend class."""


def pytest_addhooks(pluginmanager) -> None:
    pluginmanager.add_hookspecs(RemovedHooks)


def pytest_addoption(parser) -> None:
    group = parser.getgroup("unisim", "UniSim conformance kit (pytest --pyargs unisim_conformance)")
    group.addoption("--unisim-backend", dest="unisim_backend", default=None, metavar="NAME",
                    help="backend under test: entry-point name or 'module:Class' (activates the kit)")
    group.addoption("--unisim-option", dest="unisim_option", action="append", default=[], metavar="KEY=VALUE",
                    help="backend option for every backend the kit creates (repeatable; value parsed "
                         "as a Python literal, else kept as a string)")
    group.addoption("--unisim-reference", dest="unisim_reference", default=None, metavar="NAME",
                    help="reference backend for the parity layer (opt-in)")
    group.addoption("--unisim-reference-option", dest="unisim_reference_option", action="append", default=[],
                    metavar="KEY=VALUE", help="option for the reference backend only (repeatable), e.g. to "
                                              "configure it comparably")
    group.addoption("--unisim-xfail", dest="unisim_xfail", default=None, help=argparse.SUPPRESS)  # removed
    group.addoption("--unisim-report", dest="unisim_report", default=None, metavar="PATH",
                    help="write a JSON report of every kit check to PATH")


def _state(config) -> KitState:
    state = config.stash.get(KIT, None)
    if state is None:
        state = config.stash[KIT] = KitState()
    return state


def is_active(config) -> bool:
    state = config.stash.get(KIT, None)
    return bool(state and state.active)


def _activate(config, mode: str) -> None:
    state = _state(config)
    if state.active:
        return
    state.active = True
    state.mode = mode
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    state.options = parse_options(config.getoption("unisim_option"))
    state.spec = config.getoption("unisim_backend")
    if state.spec:
        state.factory = make_factory(state.spec, state.options)
    state.reference_spec = config.getoption("unisim_reference")
    if state.reference_spec:
        state.reference_factory = make_factory(state.reference_spec,
                                               parse_options(config.getoption("unisim_reference_option")))
    state.report_path = config.getoption("unisim_report")


def pytest_configure(config) -> None:
    if config.getoption("unisim_xfail"):
        raise pytest.UsageError(f"--unisim-xfail was removed: {REMOVED}")
    state = _state(config)
    if any(config.getoption(o) for o in ("unisim_backend", "unisim_reference", "unisim_option", "unisim_report")):
        _activate(config, "option")
        if not state.spec:
            # Options without a backend: the backend must then come from the factory fixture.
            state.mode = "fixture"


def _conftests_with(config, name: str) -> list[types.ModuleType]:
    out = []
    for plugin in config.pluginmanager.get_plugins():
        if isinstance(plugin, types.ModuleType) and str(getattr(plugin, "__file__", "")).endswith("conftest.py") \
                and hasattr(plugin, name):
            out.append(plugin)
    return out


def _globalize_conftest_fixtures(config, modules) -> None:
    """Make a backend conftest's fixtures visible to the kit's checks.

    The checks live in the installed package, outside the directory of the conftest that
    provides ``unisim_backend_factory``; conftest fixtures are only visible below their own
    directory, so their fixture functions are re-registered under a global (non-conftest) holder.
    """
    from _pytest.fixtures import FixtureFunctionDefinition  # type: ignore[attr-defined]

    for i, mod in enumerate(modules):
        holder = types.SimpleNamespace()
        for attr in dir(mod):
            value = getattr(mod, attr, None)
            if isinstance(value, FixtureFunctionDefinition):
                setattr(holder, attr, value)
        name = f"unisim-conformance-fixtures-{i}"
        if config.pluginmanager.get_plugin(name) is None:
            config.pluginmanager.register(holder, name)


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session) -> None:
    config = session.config
    state = _state(config)
    factories = _conftests_with(config, FACTORY_FIXTURE)
    if not state.active and factories:
        _activate(config, "fixture")
    if not state.active:
        return
    removed = [f"fixture {REMOVED_FIXTURE!r} in {m.__file__}" for m in _conftests_with(config, REMOVED_FIXTURE)]
    removed += [f"hook {REMOVED_HOOK} in {getattr(impl.plugin, '__file__', impl.plugin_name)}"
                for impl in config.hook.pytest_unisim_expected_failures.get_hookimpls()]
    if removed:
        raise pytest.UsageError(f"{'; '.join(removed)}: removed, {REMOVED}")
    try:
        _globalize_conftest_fixtures(config, factories)
    except ImportError:  # very old pytest: the conftest must sit at the rootdir instead
        pass


def _in_checks(path: Path) -> bool:
    try:
        Path(path).resolve().relative_to(CHECKS_DIR)
    except ValueError:
        return False
    return True


def pytest_ignore_collect(collection_path: Path, config) -> bool | None:
    if _in_checks(collection_path) and not is_active(config):
        return True
    return None


def is_kit_item(item) -> bool:
    return _in_checks(Path(str(item.path)))


def pytest_deselected(items) -> None:
    for item in items:
        if is_kit_item(item) and is_active(item.config):
            _state(item.config).check_items.append(item)


def pytest_collection_finish(session) -> None:
    if is_active(session.config):
        state = _state(session.config)
        kit_items = [item for item in session.items if is_kit_item(item)]
        state.collected = len(kit_items)
        state.check_items += kit_items


def unknown_declared(state: KitState) -> list[str]:
    """Declared ids (``KNOWN_KIT_DEVIATIONS``) that match no collected check, deselected ones included."""
    return sorted(k for k in state.declared if not any(_xfail.match(item, {k: ""}) for item in state.check_items))


def pytest_report_header(config) -> list[str] | None:
    if not is_active(config):
        return None
    state = _state(config)
    backend = state.spec or f"fixture {FACTORY_FIXTURE!r}"
    lines = [f"unisim-conformance: backend {backend}" + (f" options {state.options}" if state.options else "")]
    if state.reference_spec:
        lines.append(f"unisim-conformance: parity reference {state.reference_spec}")
    return lines


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    config = item.config
    if is_active(config) and is_kit_item(item):
        state = _state(config)
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            outcome = report.outcome
            if hasattr(report, "wasxfail"):
                outcome = "xfailed" if report.skipped else "xpassed"
            reason = ""
            if report.skipped and isinstance(report.longrepr, tuple):
                reason = str(report.longrepr[2])
            elif report.failed:
                reason = str(getattr(report, "longreprtext", ""))[-2000:]
            layer = _xfail.check_id(item).split("::")[0]
            if report.failed:
                report.sections.append(("unisim-conformance rules", _rules_note(state, item, layer)))
            state.results.append({
                "check": _xfail.check_id(item), "nodeid": item.nodeid, "outcome": outcome,
                "reason": reason or getattr(report, "wasxfail", ""),
                "layer": layer, "rules": _rules.rules_of(item, layer),
                "properties": {k: _jsonable(v) for k, v in item.user_properties},
            })
    return report


def _split_declared(state: KitState) -> dict[str, list[str]]:
    """Declared expected-failure ids (``KNOWN_KIT_DEVIATIONS``) that kit rules 3 split, with their new ids."""
    return {k: list(_rules.split_into(k)) for k in sorted(state.declared) if _rules.split_into(k)}


def _rules_note(state: KitState, item, layer: str) -> str:
    """Whether a failed check's rule is new since the rules the backend declares."""
    rule = _rules.rules_of(item, layer)
    rules, declared = state.cache.get("kit_rules", (1, False))
    source = f"KIT_RULES = {rules}" if declared else "no KIT_RULES, read as 1"
    if rule > rules:
        return (f"NEW RULE: this check is in kit rules {rule}, newer than the backend's ({source}); the kit "
                f"CHANGELOG's 'Kit rules {rule}' says what to add")
    return f"kit rules {rule}, within the backend's ({source}): a regression, not a new rule"


def _jsonable(v: Any) -> Any:
    try:
        json.dumps(v)
        return v
    except TypeError:
        return repr(v)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if not is_active(config):
        return
    state = _state(config)
    tr = terminalreporter
    unknown = unknown_declared(state)
    if unknown:
        tr.section("unisim-conformance: unknown expected-failure ids")
        for key in unknown:
            tr.write_line(f"{key}: matches no collected check")
    split = _split_declared(state)
    if split:
        tr.section("unisim-conformance: expected-failure ids split in kit rules 3")
        for key, new in split.items():
            tr.write_line(f"{key}: now one check per property: {', '.join(new)}; declare only the ones that fail")
    if state.results:
        counts: dict[str, dict[str, int]] = {}
        for r in state.results:
            counts.setdefault(r["layer"], {}).setdefault(r["outcome"], 0)
            counts[r["layer"]][r["outcome"]] += 1
        tr.section("unisim-conformance summary")
        caps = state.cache.get("capabilities")
        if caps is not None:
            tr.write_line("declared capabilities: " + (", ".join(sorted(str(c) for c in caps)) or "(none)"))
        for layer in LAYERS:
            if layer in counts:
                tr.write_line(f"{layer:13s} " + ", ".join(f"{n} {o}" for o, n in sorted(counts[layer].items())))
        ran = sum(1 for r in state.results if r["outcome"] != "skipped")
        tr.write_line(f"coverage      checks run {ran} / {state.collected} collected")
        rules, declared = state.cache.get("kit_rules", (1, False))
        tr.write_line(f"rules         kit rules {_rules.KIT_RULES}; backend declares "
                      + (f"KIT_RULES = {rules}" if declared else "no KIT_RULES (read as 1)"))
        newer = [r for r in state.results if r["outcome"] == "failed" and r["rules"] > rules]
        if newer:
            tr.section("unisim-conformance: failures under rules newer than the backend declares")
            for r in newer:
                tr.write_line(f"{r['check']}: NEW RULE (kit rules {r['rules']}, backend declares {rules}): "
                              f"see the kit CHANGELOG, 'Kit rules {r['rules']}'")
            tr.write_line(f"{len(newer)} of {sum(r['outcome'] == 'failed' for r in state.results)} failure(s) are "
                          f"rules newer than {rules}; set KIT_RULES = {_rules.KIT_RULES} on the class once they pass")
        scenes = state.cache.get("coverage")
        if scenes is not None:
            refused = {k: v for k, v in scenes.items() if v is not None}
            tr.write_line(f"coverage      scenes loaded {len(scenes) - len(refused)} / {len(scenes)} in the kit"
                          + ("; refused: " + ", ".join(f"{k} ({v})" for k, v in sorted(refused.items()))
                             if refused else ""))


def pytest_sessionfinish(session, exitstatus) -> None:
    config = session.config
    if not is_active(config):
        return
    state = _state(config)
    if state.report_path:
        caps = state.cache.get("capabilities")
        data = {
            "backend": state.spec or FACTORY_FIXTURE,
            "options": {k: repr(v) for k, v in state.options.items()},
            "reference": state.reference_spec,
            "capabilities": sorted(str(c) for c in caps) if caps is not None else None,
            "unknown_expected_failures": unknown_declared(state),
            "split_expected_failures": _split_declared(state),
            "kit_rules": _rules.KIT_RULES,
            "backend_kit_rules": state.cache.get("kit_rules", (1, False))[0],
            "backend_declares_kit_rules": state.cache.get("kit_rules", (1, False))[1],
            "coverage": {"checks_collected": state.collected,
                         "checks_run": sum(1 for r in state.results if r["outcome"] != "skipped"),
                         "scenes": state.cache.get("coverage")},
            "exitstatus": int(exitstatus),
            "checks": state.results,
        }
        Path(state.report_path).write_text(json.dumps(data, indent=1), encoding="utf-8")
