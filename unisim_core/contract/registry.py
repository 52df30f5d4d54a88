"""Backend discovery through the ``unisim.backends`` entry-point group.

An entry point names either a ``SimBackend`` subclass (``"pkg.module:Class"``) or
a light plugin module implementing the hooks in :mod:`unisim_core.contract.hooks`
(``unisim_backend_spec`` returns a :class:`BackendSpec` whose ``backend`` is an
import path, so listing never imports an engine). Discovery is lazy and per
name; every failure is isolated, recorded once and reported as a status.

Environment switches:

- ``UNISIM_DISABLE_PLUGIN_AUTOLOAD=1``: ignore entry points (built-ins and
  explicit ``"module:Class"`` paths still work).
- ``UNISIM_PLUGIN_ERRORS=raise``: a plugin that fails to load raises instead of
  being listed with a ``load_error`` status.
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import importlib.util
import os
from collections.abc import Callable, Iterable
from typing import Any

import attrs
import pluggy

from unisim_core._version import __version__
from unisim_core.contract._lifecycle import is_backend_class
from unisim_core.contract._typing import Backend
from unisim_core.contract.capabilities import CONTRACT_VERSION, Capability, version_in_range
from unisim_core.contract.errors import (
    BackendLoadError,
    BackendNotFoundError,
    DuplicateBackendError,
    InvalidTypeError,
    OptionalDependencyError,
)
from unisim_core.contract.hooks import PROJECT, UniSimHookSpecs
from unisim_core.contract.options import BackendOptions

__all__ = [
    "ENTRY_POINT_GROUP",
    "BackendSpec",
    "BackendRecord",
    "list_backends",
    "get_backend_spec",
    "get_backend_class",
    "plugin_diagnostics",
    "conformance_scenes",
    "plugin_hook",
    "reset_registry",
    "SCENES_ENTRY_POINT_GROUP",
    "SPEC_CLASS_FIELDS",
    "spec_class_mismatch",
]

ENTRY_POINT_GROUP = "unisim.backends"
ENV_DISABLE = "UNISIM_DISABLE_PLUGIN_AUTOLOAD"
ENV_ERRORS = "UNISIM_PLUGIN_ERRORS"
BUILTINS = {"fake": "unisim_core.plugin.fake:FakeBackend"}


@attrs.frozen(kw_only=True)
class BackendSpec:
    """Static facts about a backend, available without importing its engine.

    ``backend``: the class or its ``"module:Class"`` path. ``required_modules``:
    engine modules that must be importable (checked with ``find_spec``, never
    imported). ``runtime_check()`` returns ``None`` when an external runtime is
    found, else a one-line reason.
    """

    name: str
    backend: str | type
    version: str = "0"
    contract_range: str = ">=1.0,<2"
    options_cls: type[BackendOptions] = BackendOptions
    capabilities: frozenset[Capability] = attrs.field(default=frozenset(), converter=frozenset)
    required_modules: tuple[str, ...] = ()
    required_runtime: str | None = None
    runtime_check: Callable[[], str | None] | None = None
    description: str = ""

    @classmethod
    def from_class(cls, name: str, backend: type[Backend]) -> BackendSpec:
        return cls(name=name, backend=backend, version=backend.version, contract_range=backend.contract_range,
                   options_cls=backend.options_cls, capabilities=backend.CAPABILITIES,
                   required_runtime=backend.required_runtime,
                   description=(backend.__doc__ or "").strip().splitlines()[0] if backend.__doc__ else "")


@attrs.frozen(kw_only=True)
class BackendRecord:
    """One row of ``list_backends()``; ``status`` is ``ok``, ``missing_dependency``,
    ``incompatible`` or ``load_error``."""

    name: str
    distribution: str
    version: str
    status: str
    reason: str = ""
    spec: BackendSpec | None = attrs.field(default=None, repr=False, eq=False)


# ----------------------------------------------------------------------------- pure helpers
def group_entry_points(eps: Iterable[md.EntryPoint]) -> dict[str, list[md.EntryPoint]]:
    """Entry points by name, keeping every claimant (duplicates are detected later)."""
    out: dict[str, list[md.EntryPoint]] = {}
    for ep in eps:
        out.setdefault(ep.name, []).append(ep)
    return out


def distribution_of(ep: md.EntryPoint) -> tuple[str, str]:
    """``(distribution name, version)`` that declared ``ep``."""
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "unknown", "0"
    return dist.metadata["Name"] or "unknown", dist.version or "0"


def compatibility_reason(spec: BackendSpec) -> str | None:
    """``None`` when the spec's contract range admits ``CONTRACT_VERSION``, else an actionable message."""
    try:
        ok = version_in_range(CONTRACT_VERSION, spec.contract_range)
    except ValueError as exc:
        return f"malformed contract range: {exc}"
    if ok:
        return None
    return (f"backend {spec.name!r} supports contract {spec.contract_range} but unisim-contract implements "
            f"contract {CONTRACT_VERSION}; install a release of the plugin whose range admits "
            f"{CONTRACT_VERSION}, or a unisim-contract whose contract version fits {spec.contract_range}")


def dependency_reason(spec: BackendSpec) -> str | None:
    """``None`` when required modules and runtime are found, else a one-line reason."""
    for mod in spec.required_modules:
        try:
            found = importlib.util.find_spec(mod) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            return f"required module {mod!r} is not installed (pip install the plugin's dependencies)"
    if spec.runtime_check is not None:
        return spec.runtime_check()
    return None


def load_object(path: str) -> Any:
    """Import ``"module:attr"`` (or ``"module"``)."""
    module_name, _, attr = path.partition(":")
    obj = importlib.import_module(module_name)
    for part in filter(None, attr.split(".")):
        obj = getattr(obj, part)
    return obj


def _plugin_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(UniSimHookSpecs)
    return pm


def spec_from_object(name: str, obj: Any, pm: pluggy.PluginManager) -> BackendSpec:
    """Turn a loaded entry-point object into a spec (a SimBackend class or a hook plugin)."""
    if is_backend_class(obj):
        return BackendSpec.from_class(name, obj)
    if pm.get_plugin(name) is None:
        pm.register(obj, name=name)
    impls = [i for i in pm.hook.unisim_backend_spec.get_hookimpls() if i.plugin is obj]
    if not impls:
        raise BackendLoadError(
            f"entry point {name!r} loads {obj!r}, which is neither a SimBackend subclass nor a plugin "
            f"implementing the unisim_backend_spec hook"
        )
    spec = impls[0].function()
    if not isinstance(spec, BackendSpec):
        raise BackendLoadError(f"plugin {name!r}: hook unisim_backend_spec returned {type(spec).__name__}, "
                               f"expected BackendSpec")
    if spec.name != name:
        raise BackendLoadError(f"plugin {name!r}: hook unisim_backend_spec names the backend {spec.name!r}")
    return spec


#: ``BackendSpec`` field -> the backend class attribute stating the same fact.
SPEC_CLASS_FIELDS = {"name": "name", "version": "version", "contract_range": "contract_range",
                     "options_cls": "options_cls", "capabilities": "CAPABILITIES",
                     "required_runtime": "required_runtime"}


def spec_class_mismatch(spec: BackendSpec, cls: type[Backend]) -> str | None:
    """``None`` when every fact ``spec`` states agrees with ``cls``'s attribute of the same meaning
    (:data:`SPEC_CLASS_FIELDS`), else a message naming the backend, the field and both values."""
    for field, attr in SPEC_CLASS_FIELDS.items():
        want, got = getattr(spec, field), getattr(cls, attr)
        if field == "capabilities":
            want, got = sorted(c.value for c in want), sorted(Capability(c).value for c in got)
        if want != got:
            return (f"backend {spec.name!r}: its BackendSpec and its class {cls.__module__}.{cls.__qualname__} "
                    f"disagree on {field}: spec {want!r}, class {attr} {got!r}; state the fact once (the class "
                    f"reading it from the plugin's hook module) so they cannot drift")
    return None


# ----------------------------------------------------------------------------- the registry
class _Registry:
    def __init__(self) -> None:
        self.pm = _plugin_manager()
        self._eps: dict[str, list[md.EntryPoint]] | None = None
        self._records: dict[str, BackendRecord] = {}

    def entry_points(self) -> dict[str, list[md.EntryPoint]]:
        if self._eps is None:
            if os.environ.get(ENV_DISABLE, "") not in ("", "0"):
                self._eps = {}
            else:
                self._eps = group_entry_points(md.entry_points(group=ENTRY_POINT_GROUP))
        return self._eps

    def names(self) -> list[str]:
        return sorted(set(BUILTINS) | set(self.entry_points()))

    def record(self, name: str) -> BackendRecord:
        if name not in self._records:
            self._records[name] = self._load(name)
            if self._records[name].status == "load_error" and os.environ.get(ENV_ERRORS) == "raise":
                raise BackendLoadError(self._records[name].reason)
        return self._records[name]

    def _load(self, name: str) -> BackendRecord:
        claimants: list[tuple[str, str, Callable[[], Any]]] = []
        if name in BUILTINS:
            claimants.append(("unisim-contract", __version__, lambda: load_object(BUILTINS[name])))
        for ep in self.entry_points().get(name, []):
            dist, ver = distribution_of(ep)
            claimants.append((dist, ver, ep.load))
        if not claimants:
            raise BackendNotFoundError(
                f"no backend named {name!r}; installed: {', '.join(self.names()) or 'none'} "
                f"(or pass 'module:Class' or a SimBackend subclass)"
            )
        dists = sorted({c[0] for c in claimants})
        if len(dists) > 1:
            return BackendRecord(
                name=name, distribution=", ".join(dists), version="?", status="load_error",
                reason=f"backend name {name!r} is claimed by several distributions: {' and '.join(dists)}; "
                       f"uninstall one of them",
            )
        dist, ver, loader = claimants[0]
        try:
            spec = spec_from_object(name, loader(), self.pm)
        except Exception as exc:  # isolate any plugin failure
            return BackendRecord(name=name, distribution=dist, version=ver, status="load_error",
                                 reason=f"{type(exc).__name__}: {exc}".splitlines()[0])
        reason = compatibility_reason(spec)
        if reason:
            return BackendRecord(name=name, distribution=dist, version=spec.version, status="incompatible",
                                 reason=reason, spec=spec)
        try:
            reason = dependency_reason(spec)
        except Exception as exc:
            reason = f"runtime check failed: {type(exc).__name__}: {exc}"
        status = "missing_dependency" if reason else "ok"
        return BackendRecord(name=name, distribution=dist, version=spec.version, status=status,
                             reason=reason or "", spec=spec)


_REGISTRY = _Registry()


def reset_registry() -> None:
    """Forget discovered entry points and load results (after installing a plugin, in tests)."""
    global _REGISTRY
    _REGISTRY = _Registry()


def list_backends() -> list[BackendRecord]:
    """One record per discovered backend. A broken plugin never breaks the listing."""
    return [_REGISTRY.record(n) for n in _REGISTRY.names()]


def get_backend_spec(name: str) -> BackendSpec:
    """Static facts of an installed backend (no engine import). Raises when it did not load."""
    rec = _REGISTRY.record(name)
    if rec.spec is None:
        if "claimed by several" in rec.reason:
            raise DuplicateBackendError(rec.reason)
        raise BackendLoadError(f"backend {name!r} failed to load: {rec.reason}")
    return rec.spec


def get_backend_class(backend: str | type[Backend]) -> type[Backend]:
    """Resolve an entry-point name, a ``"module:Class"`` path, or a class to the backend class."""
    if isinstance(backend, type):
        if not is_backend_class(backend):
            raise InvalidTypeError(f"backend: expected a SimBackend subclass, got {backend!r}")
        return backend
    if not isinstance(backend, str) or not backend:
        raise InvalidTypeError(f"backend: expected a name, 'module:Class' or a class, got {backend!r}")
    if ":" in backend:
        try:
            obj = load_object(backend)
        except (ImportError, AttributeError) as exc:
            raise BackendLoadError(f"backend {backend!r} could not be imported: {exc}") from exc
        return get_backend_class(obj) if isinstance(obj, type) else _not_a_backend(backend, obj)
    rec = _REGISTRY.record(backend)
    spec = get_backend_spec(backend)
    if rec.status == "incompatible":
        raise BackendLoadError(rec.reason)
    if rec.status == "missing_dependency":
        raise OptionalDependencyError(f"backend {backend!r} is installed but cannot run: {rec.reason}")
    cls = spec.backend
    if isinstance(cls, str):
        try:
            cls = load_object(cls)
        except ImportError as exc:
            raise OptionalDependencyError(f"backend {backend!r} could not import {spec.backend}: {exc}") from exc
    if not (is_backend_class(cls)):
        return _not_a_backend(backend, cls)
    mismatch = spec_class_mismatch(spec, cls)
    if mismatch:
        raise BackendLoadError(mismatch)
    return cls


def _not_a_backend(name: str, obj: Any):
    raise BackendLoadError(f"backend {name!r} resolves to {obj!r}, which is not a SimBackend subclass")


def _hook_results(hook: str) -> dict[str, Any]:
    out = {}
    for name in _REGISTRY.names():
        if _REGISTRY.record(name).spec is None:
            continue
        plugin = _REGISTRY.pm.get_plugin(name)
        if plugin is None:
            continue
        for impl in getattr(_REGISTRY.pm.hook, hook).get_hookimpls():
            if impl.plugin is plugin:
                try:
                    out[name] = impl.function()
                except Exception as exc:
                    out[name] = exc
    return out


def plugin_diagnostics(name: str) -> dict[str, str]:
    """``{check: result}`` from the plugin's ``unisim_diagnostics`` hook (empty if none)."""
    _REGISTRY.record(name)
    result = _hook_results("unisim_diagnostics").get(name, {})
    if isinstance(result, Exception):
        return {"diagnostics": f"failed: {type(result).__name__}: {result}"}
    return dict(result or {})


def plugin_hook(name: str, hook: str) -> Any:
    """What backend ``name``'s plugin returns from ``hook`` (``None`` when it does not implement it
    or its implementation failed)."""
    _REGISTRY.record(name)
    result = _hook_results(hook).get(name)
    return None if isinstance(result, Exception) else result


#: Entry-point group of scene sources that are not backends (the conformance kit): each names a
#: module implementing the ``unisim_conformance_scenes`` hook.
SCENES_ENTRY_POINT_GROUP = "unisim.scenes"


def _scene_sources() -> list[dict]:
    out = []
    for ep in md.entry_points(group=SCENES_ENTRY_POINT_GROUP):
        try:
            module = ep.load()
            result = module.unisim_conformance_scenes()
        except Exception:  # noqa: BLE001 - a broken scene source never breaks another
            continue
        if isinstance(result, dict):
            out.append(result)
    return out


def conformance_scenes() -> dict[str, str]:
    """Scenes contributed through the ``unisim_conformance_scenes`` hook, ``{name: path}``: by scene
    sources (the ``unisim.scenes`` entry points: the conformance kit's own scenes), then by loaded
    backend plugins (a plugin cannot replace a kit scene)."""
    scenes: dict[str, str] = {}
    for _, result in sorted(_hook_results("unisim_conformance_scenes").items()):
        if isinstance(result, dict):
            scenes.update(result)
    for result in _scene_sources():
        scenes.update(result)
    return scenes


def __getattr__(name: str) -> Any:
    """``create_backend`` and ``ISOLATION_MODES`` lived here in 0.1; they are
    :mod:`unisim_core.contract.factory`'s now (read by name: the factory imports this module)."""
    if name in ("create_backend", "ISOLATION_MODES"):
        import warnings

        warnings.warn(f"unisim_core.registry.{name} moved to unisim_core.contract.factory.{name} "
                      f"(unisim-contract 0.2); the old path goes in 0.3", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module("unisim_core.contract.factory"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
