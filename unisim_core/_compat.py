"""The import paths of unisim-contract 0.1 (flat modules such as ``unisim_core.backend``), kept for one version.

0.2 moved the core's modules into three wings (``contract``, ``plugin``, ``tools``) and the PhysX
semantics into ``unisim-physx`` (docs/architecture.md). Importing a module by its old path gives the
module at its new one (the same module object, so classes and ``isinstance`` are unchanged) with a
``DeprecationWarning`` naming the new path. The finder answers only for the names in :data:`MOVED`
and their submodules; ``import unisim_core`` installs it.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings

__all__ = ["MOVED", "install"]

#: Old module name below ``unisim_core.`` -> the module's full name now.
MOVED: dict[str, str] = {
    "actuators": "unisim_core.tools.actuators",
    "backend": "unisim_core.contract.backend",
    "bench": "unisim_core.tools.bench",
    "bindings": "unisim_core.contract.bindings",
    "capabilities": "unisim_core.contract.capabilities",
    "cli": "unisim_core.tools.cli",
    "compare": "unisim_core.tools.compare",
    "compare_report": "unisim_core.tools.compare_report",
    "config": "unisim_core.contract.config",
    "construction": "unisim_core.contract.construction",
    "contacts": "unisim_core.contract.contacts",
    "deploy": "unisim_core.tools.deploy",
    "derived_sensors": "unisim_core.plugin.derived_sensors",
    "errors": "unisim_core.contract.errors",
    "fake": "unisim_core.plugin.fake",
    "frames": "unisim_core.contract._frames",
    "guards": "unisim_core.contract.guards",
    "heightfield": "unisim_core.contract.heightfield",
    "hooks": "unisim_core.contract.hooks",
    "kinematics": "unisim_core.contract.kinematics",
    "kit_facts": "unisim_core.contract._kit_facts",
    "lifecycle": "unisim_core.contract._lifecycle",
    "mjcf_features": "unisim_core.plugin.mjcf_features",
    "mjcf_lite": "unisim_core.plugin.mjcf_lite",
    "model": "unisim_core.contract.model",
    "model_queries": "unisim_core.contract._model_queries",
    "options": "unisim_core.contract.options",
    "output_file": "unisim_core.tools.output_file",
    "physx": "unisim_physx",
    "playback": "unisim_core.contract._playback",
    "plugin_support": "unisim_core.plugin.plugin_support",
    "policy_eval": "unisim_core.tools.policy_eval",
    "policy_manifest": "unisim_core.tools.policy_manifest",
    "portable_options": "unisim_core.contract.portable_options",
    "quat": "unisim_core.contract.quat",
    "randomization": "unisim_core.contract.randomization",
    "randomize": "unisim_core.contract._randomizing",
    "registry": "unisim_core.contract.registry",
    "sensor_timing": "unisim_core.contract.sensor_timing",
    "servant": "unisim_core.plugin.servant",
    "state": "unisim_core.contract._state",
    "stepping": "unisim_core.contract._stepping",
    "tables": "unisim_core.tools.tables",
    "torch_views": "unisim_core.contract.torch_views",
    "validation": "unisim_core.contract.validation",
    "worker": "unisim_core.plugin.worker",
    "zoo": "unisim_core.tools.zoo",
}


def new_name(fullname: str) -> str | None:
    """The current name of the module an 0.1 import path names (``None``: not a moved path)."""
    head, _, tail = fullname.removeprefix("unisim_core.").partition(".")
    new = MOVED.get(head) if fullname.startswith("unisim_core.") else None
    return None if new is None else new + ("." + tail if tail else "")


class _Alias(importlib.abc.Loader):
    """Loads an old path as the module at its new path, leaving that module's own spec in place."""

    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec):
        module = importlib.import_module(self.new)
        self.spec = module.__spec__
        return module

    def exec_module(self, module) -> None:  # already executed at its new path; the import system set
        module.__spec__ = self.spec  # __spec__ to the alias's: give the module its own back


class _MovedFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        new = new_name(fullname)
        if new is None:
            return None
        warnings.warn(f"{fullname} moved to {new} (unisim-contract 0.2); the old path goes in 0.3",
                      DeprecationWarning, stacklevel=2)
        return importlib.machinery.ModuleSpec(fullname, _Alias(new))


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once per process)."""
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())
