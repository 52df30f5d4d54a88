"""The core's layout (docs/architecture.md): three wings, layered, and no circle of imports anywhere.

The import graph is read from the source (every ``import``, function-level and ``TYPE_CHECKING``
ones included), so a lazy import cannot hide a circle.
"""

from __future__ import annotations

import ast
import importlib
import sys
import warnings
from pathlib import Path

import pytest

import unisim_core

ROOT = Path(__file__).resolve().parents[2]
CORE = Path(unisim_core.__file__).parent
#: Every first-party package of the repository, by its directory.
PACKAGES = [CORE, *(p for p in sorted([*ROOT.glob("plugins/*/unisim_*"), *ROOT.glob("integrations/*/unisim_*")])
                   if (p / "__init__.py").is_file()), ROOT / "conformance" / "unisim_conformance"]


def _modules(pkg: Path) -> dict[str, Path]:
    out = {}
    for path in pkg.rglob("*.py"):
        parts = list(path.relative_to(pkg.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            mod = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else node.module or ""
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in node.names)
    # a module importing its own package's __init__ (to reach a sibling) is not a circle of interest
    return {m for m in found if m in known and m != name and not name.startswith(m + ".")}


def import_graph(pkg: Path) -> dict[str, set[str]]:
    mods = _modules(pkg)
    return {m: _imports(m, p, set(mods)) for m, p in mods.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                comp.append(stack.pop())
                if comp[-1] == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_circles_are_found():
    """The detector itself: a two-module circle through a lazy import is found, a chain is not."""
    assert circles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert circles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("pkg", PACKAGES, ids=lambda p: p.name)
def test_no_circle_of_imports(pkg):
    assert circles(import_graph(pkg)) == []


def test_the_core_top_level_is_three_wings_and_the_scenes():
    entries = sorted(p.name for p in CORE.iterdir() if p.name != "__pycache__")
    assert entries == ["__init__.py", "_compat.py", "_version.py", "contract", "plugin", "scenes", "tools"]


def test_the_wings_are_layered():
    """contract <- plugin <- tools: no wing imports one above it, except ``create_backend`` starting
    the worker layer for ``isolation="subprocess"`` (``contract.factory`` -> ``plugin.worker``)."""
    allowed = {("unisim_core.contract.factory", "unisim_core.plugin.worker.backend")}
    rank = {"contract": 0, "plugin": 1, "tools": 2}
    upward = []
    for mod, deps in import_graph(CORE).items():
        wing = mod.split(".")[1] if mod.count(".") else None
        for dep in deps:
            dep_wing = dep.split(".")[1] if dep.count(".") else None
            if wing in rank and dep_wing in rank and rank[dep_wing] > rank[wing] and (mod, dep) not in allowed:
                upward.append((mod, dep))
    assert upward == []


@pytest.mark.parametrize(("old", "new"), [("unisim_core.backend", "unisim_core.contract.backend"),
                                          ("unisim_core.randomize", "unisim_core.contract._randomizing"),
                                          ("unisim_core.worker.hosted", "unisim_core.plugin.worker.hosted"),
                                          ("unisim_core.cli", "unisim_core.tools.cli"),
                                          ("unisim_core.physx", "unisim_physx")])
def test_a_01_import_path_gives_the_same_module_with_a_deprecation_warning(old, new):
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert module.__spec__.name == new  # the module keeps its own spec


def test_names_from_an_01_path_are_the_same_objects():
    sys.modules.pop("unisim_core.errors", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from unisim_core.errors import InvalidInputError
    assert InvalidInputError is unisim_core.InvalidInputError


def test_an_unknown_path_is_still_an_import_error():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("unisim_core.no_such_module")


def test_create_backend_from_its_01_module_warns_and_is_the_factorys():
    from unisim_core.contract import factory, registry

    with pytest.warns(DeprecationWarning, match="moved to unisim_core.contract.factory.create_backend"):
        assert registry.create_backend is factory.create_backend is unisim_core.create_backend
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        registry.nope  # noqa: B018
