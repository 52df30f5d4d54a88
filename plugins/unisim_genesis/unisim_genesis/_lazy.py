"""``genesis`` and ``torch`` as lazily loaded modules (:class:`importlib.util.LazyLoader`).

Importing the backend class, and refusing a scene by its MJCF features (read by ``mjcf_lite``
before anything is built), then costs no genesis/torch import (about 20 s of CPU); the first
attribute used on either module imports it for real.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

__all__ = ["genesis", "torch"]


def _lazy(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


torch = _lazy("torch")
genesis = _lazy("genesis")
