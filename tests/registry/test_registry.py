"""Registry tests on real installed distributions: throwaway packages with real
``.dist-info`` metadata on a temporary ``sys.path`` entry."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import attrs
import numpy as np
import pytest

from unisim_core.contract import factory, registry
from unisim_core.contract.errors import (
    BackendLoadError,
    BackendNotFoundError,
    DuplicateBackendError,
    OptionalDependencyError,
)

GOOD = """
from unisim_core.plugin.fake import FakeBackend

class GoodBackend(FakeBackend):
    name = "good"
    version = "1.2.3"
"""
BROKEN = "raise RuntimeError('plugin exploded at import')\n"
INCOMPATIBLE = """
from unisim_core.plugin.fake import FakeBackend

class FutureBackend(FakeBackend):
    name = "future"
    contract_range = ">=2.0,<3"
"""
HOOKED = """
from unisim_core.contract.hooks import hookimpl
from unisim_core.contract.registry import BackendSpec

@hookimpl
def unisim_backend_spec():
    return BackendSpec(name="hooked", backend="hooked_engine_backend:Backend", version="0.5",
                       required_modules=("an_engine_that_is_not_installed",),
                       required_runtime="An Engine 9")

@hookimpl
def unisim_diagnostics():
    return {"engine": "not found"}
"""
DUP_A = "from unisim_core.plugin.fake import FakeBackend as Backend\n"


def _dist(root: Path, dist: str, module: str, source: str, entry_points: dict[str, str]) -> None:
    (root / f"{module}.py").write_text(textwrap.dedent(source))
    info = root / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    lines = "\n".join(f"{k} = {v}" for k, v in entry_points.items())
    (info / "entry_points.txt").write_text(f"[unisim.backends]\n{lines}\n")


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    _dist(tmp_path, "good-plugin", "good_backend", GOOD, {"good": "good_backend:GoodBackend"})
    _dist(tmp_path, "broken-plugin", "broken_backend", BROKEN, {"broken": "broken_backend:Backend"})
    _dist(tmp_path, "future-plugin", "future_backend", INCOMPATIBLE, {"future": "future_backend:FutureBackend"})
    _dist(tmp_path, "hooked-plugin", "hooked_backend", HOOKED, {"hooked": "hooked_backend"})
    _dist(tmp_path, "dup-one", "dup_one", DUP_A, {"dup": "dup_one:Backend"})
    _dist(tmp_path, "dup-two", "dup_two", DUP_A, {"dup": "dup_two:Backend"})
    monkeypatch.syspath_prepend(str(tmp_path))
    for mod in ("good_backend", "broken_backend", "future_backend", "hooked_backend", "dup_one", "dup_two"):
        sys.modules.pop(mod, None)
    registry.reset_registry()
    yield tmp_path
    registry.reset_registry()


@pytest.fixture
def scene():
    from unisim_core import SceneCfg

    return SceneCfg(str(Path(__file__).parents[2] / "conformance/unisim_conformance/scenes/free_body.xml"))


def _records():
    return {r.name: r for r in registry.list_backends()}


def test_statuses_are_isolated_per_plugin(plugins, scene):
    recs = _records()
    assert recs["fake"].status == "ok"
    assert (recs["good"].status, recs["good"].distribution, recs["good"].version) == ("ok", "good-plugin", "1.2.3")
    assert recs["broken"].status == "load_error"
    assert "plugin exploded at import" in recs["broken"].reason
    assert recs["future"].status == "incompatible"
    assert ">=2.0,<3" in recs["future"].reason and "1.0" in recs["future"].reason
    assert recs["hooked"].status == "missing_dependency"
    assert "an_engine_that_is_not_installed" in recs["hooked"].reason
    # the broken plugin does not break creating the others
    with factory.create_backend("good", scene, 2, 0.01) as sim:
        assert sim.num_envs == 2 and type(sim).__name__ == "GoodBackend"
    with factory.create_backend("fake", scene, 2, 0.01) as sim:
        sim.step(np.zeros((2, sim.num_actuators)))


def test_duplicate_name_names_both_distributions(plugins):
    rec = _records()["dup"]
    assert rec.status == "load_error"
    assert "dup-one" in rec.reason and "dup-two" in rec.reason
    with pytest.raises(DuplicateBackendError, match="dup-one.*dup-two"):
        registry.get_backend_class("dup")


def test_errors_for_unusable_backends(plugins, scene):
    with pytest.raises(BackendLoadError, match="exploded"):
        registry.get_backend_class("broken")
    with pytest.raises(BackendLoadError, match="contract"):
        registry.get_backend_class("future")
    with pytest.raises(OptionalDependencyError, match="an_engine_that_is_not_installed"):
        factory.create_backend("hooked", scene, 1, 0.01)
    with pytest.raises(BackendNotFoundError, match="no backend named 'nope'.*fake"):
        registry.get_backend_class("nope")


def test_hook_plugin_spec_and_diagnostics_without_importing_engine(plugins):
    spec = registry.get_backend_spec("hooked")
    assert spec.backend == "hooked_engine_backend:Backend" and spec.required_runtime == "An Engine 9"
    assert registry.plugin_diagnostics("hooked") == {"engine": "not found"}
    assert "hooked_engine_backend" not in sys.modules


DRIFTED = """
from unisim_core.contract.capabilities import Capability
from unisim_core.plugin.fake import FakeBackend
from unisim_core.contract.hooks import hookimpl
from unisim_core.contract.registry import BackendSpec

class DriftedBackend(FakeBackend):
    name = "drifted"

@hookimpl
def unisim_backend_spec():
    return BackendSpec(name="drifted", backend="drifted_backend:DriftedBackend", version=DriftedBackend.version,
                       capabilities=DriftedBackend.CAPABILITIES | {Capability.CONTACTS})
"""


def test_a_spec_that_disagrees_with_its_class_is_refused_at_load(tmp_path, monkeypatch, scene):
    """The facts a hook plugin's BackendSpec states are checked against its class once the class is
    imported: a drift names the backend, the field and both values, and builds nothing."""
    _dist(tmp_path, "drifted-plugin", "drifted_backend", DRIFTED, {"drifted": "drifted_backend"})
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("drifted_backend", None)
    registry.reset_registry()
    try:
        assert _records()["drifted"].status == "ok"  # listing imports no class, so it cannot tell yet
        with pytest.raises(BackendLoadError) as info:
            factory.create_backend("drifted", scene, 1, 0.01)
        msg = str(info.value)
        assert "backend 'drifted'" in msg and "drifted_backend.DriftedBackend" in msg
        assert "disagree on capabilities" in msg and "'contacts'" in msg.split("class CAPABILITIES")[0]
        assert "'contacts'" not in msg.split("class CAPABILITIES")[1]
    finally:
        registry.reset_registry()
    from unisim_core.plugin.fake import FakeBackend

    spec = registry.BackendSpec.from_class("fake", FakeBackend)
    assert registry.spec_class_mismatch(spec, FakeBackend) is None
    assert registry.spec_class_mismatch(attrs.evolve(spec, version="9.9"), FakeBackend) == (
        f"backend 'fake': its BackendSpec and its class unisim_core.plugin.fake.FakeBackend disagree on version: spec "
        f"'9.9', class version {FakeBackend.version!r}; state the fact once (the class reading it from the "
        f"plugin's hook module) so they cannot drift")


def test_three_forms_of_backend(plugins, scene):
    from unisim_core.plugin.fake import FakeBackend

    assert registry.get_backend_class("fake") is FakeBackend
    assert registry.get_backend_class("unisim_core.plugin.fake:FakeBackend") is FakeBackend
    assert registry.get_backend_class(FakeBackend) is FakeBackend
    with pytest.raises(BackendLoadError, match="could not be imported"):
        registry.get_backend_class("no_such_module:Thing")
    with pytest.raises(TypeError, match="SimBackend subclass"):
        registry.get_backend_class(dict)


def test_unknown_option_lists_valid_ones(scene):
    with pytest.raises(TypeError, match=r"bogus_option.*valid options: .*np_dtype"):
        factory.create_backend("fake", scene, 4, 0.01, bogus_option=1)
    with pytest.raises(TypeError, match=r"did you mean 'np_dtype'"):
        factory.create_backend("fake", scene, 4, 0.01, np_dtyp="float64")
    with pytest.raises(TypeError, match="isolation"):
        factory.create_backend("fake", scene, 4, 0.01, isolation="thread")


def test_autoload_switch_and_fatal_errors(plugins, monkeypatch):
    monkeypatch.setenv(registry.ENV_DISABLE, "1")
    registry.reset_registry()
    assert [r.name for r in registry.list_backends()] == ["fake"]
    monkeypatch.delenv(registry.ENV_DISABLE)
    monkeypatch.setenv(registry.ENV_ERRORS, "raise")
    registry.reset_registry()
    with pytest.raises(BackendLoadError, match="exploded"):
        registry.list_backends()


def test_version_ranges():
    from unisim_core.contract.capabilities import version_in_range

    assert version_in_range("1.0", ">=1.0,<2")
    assert not version_in_range("1.0", ">=1.1")
    assert version_in_range("1.0", "==1")
    assert not version_in_range("2.0", ">=1.0,<2")
    with pytest.raises(ValueError, match="malformed"):
        version_in_range("1.0", "~=1")


def test_import_loads_no_engine_and_cli_lists_fake():
    code = (
        "import sys, unisim_core; unisim_core.list_backends();"
        "bad=[m for m in sys.modules if m.split('.')[0] in "
        "('mujoco','motrixsim','torch','ray','pxr','isaacsim','omni')]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
    cli = subprocess.run([sys.executable, "-m", "unisim_core.tools.cli", "backends"], capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    fake_row = next(line for line in cli.stdout.splitlines() if line.startswith("fake "))
    assert " ok" in fake_row


def test_core_imports_no_plugin_and_no_engine():
    """The core knows no engine: no module of unisim_core imports a plugin, the kit or an engine
    (what differs per engine reaches it through plugin hooks)."""
    import ast
    from pathlib import Path

    import unisim_core

    banned = {"unisim_mujoco", "unisim_motrix", "unisim_isaacsim", "unisim_ray", "unisim_mjwarp", "unisim_newton",
              "unisim_genesis", "unisim_sapien", "unisim_conformance", "unisim_gym", "unisim_example_backend", "mujoco",
              "motrixsim", "warp", "mujoco_warp", "newton", "genesis", "sapien", "ray", "torch"}
    # the contract's torch path imports torch on first use (torch is no engine; ``import unisim_core``
    # never imports it: tests/registry/test_core_only_env.py)
    allowed = {("torch_views.py", "torch")}
    found = []
    for path in Path(unisim_core.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            found += [f"{path.name}: {n}" for n in names if n.split(".")[0] in banned
                      and (path.name, n.split(".")[0]) not in allowed]
    assert not found, f"unisim_core imports plugins or engines: {found}"


def test_engine_baselines_come_from_plugin_hooks():
    """unisim bench's raw loop and step-cost probe are the plugins' hooks; the fake offers none."""
    from unisim_core.contract.registry import plugin_hook

    assert callable(plugin_hook("mujoco", "unisim_raw_stepper"))
    assert callable(plugin_hook("mujoco", "unisim_step_cost_probe"))
    assert callable(plugin_hook("motrix", "unisim_raw_stepper"))
    assert plugin_hook("fake", "unisim_raw_stepper") is None
