"""How the host makes its own packages importable in Isaac Sim's interpreter (SDK-free).

Nothing needs installing into Isaac Sim's python. The host builds a private directory of symlinks
to exactly the packages the worker needs and passes it to the worker:

- ``PYTHONPATH`` gets a directory with ``unisim_core``, ``unisim_physx`` and ``unisim_isaacsim`` only, so no other
  package of the host environment (numpy, torch, ...) can shadow Isaac Sim's own.
- ``UNISIM_ISAACSIM_FALLBACK_PATH`` names a directory with the pure-Python dependencies of
  ``unisim_core`` (``attrs``, ``attr``, ``pluggy``); the worker appends it to the *end* of
  ``sys.path``, so a copy bundled with Isaac Sim wins and the host's only fills a gap.

The worker also needs numpy, which Isaac Sim ships. The directory is removed when the backend closes.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["FALLBACK_ENV", "WORKER_PACKAGES", "FALLBACK_PACKAGES", "WorkerPath"]

FALLBACK_ENV = "UNISIM_ISAACSIM_FALLBACK_PATH"
WORKER_PACKAGES = ("unisim_core", "unisim_physx", "unisim_isaacsim")
FALLBACK_PACKAGES = ("attrs", "attr", "pluggy")


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"package {name!r} is not importable in the host interpreter")
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def _farm(root: Path, names: Sequence[str], *, required: bool) -> None:
    root.mkdir()
    for name in names:
        try:
            target = _package_dir(name)
        except ImportError:
            if required:
                raise
            continue
        (root / name).symlink_to(target, target_is_directory=True)


class WorkerPath:
    """A private symlink directory for the worker; :meth:`env` is the worker environment."""

    def __init__(self, packages: Sequence[str] = WORKER_PACKAGES,
                 fallback: Sequence[str] = FALLBACK_PACKAGES) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="unisim-isaacsim-path-"))
        try:
            self.path = self.root / "path"
            self.fallback = self.root / "fallback"
            _farm(self.path, packages, required=True)
            _farm(self.fallback, fallback, required=False)
        except BaseException:
            self.close()
            raise

    def env(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        env = dict(os.environ if base is None else base)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(self.path), env.get("PYTHONPATH", "")) if p)
        env[FALLBACK_ENV] = str(self.fallback)
        return env

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
