"""What a backend tells the conformance kit about itself: scene features it refuses, kit checks it
is known to fail, and the kit rules version it was written against.

Mixed into :class:`~unisim_core.contract.backend.SimBackend` as class attributes a backend overrides. The
kit (``unisim_conformance``) reads them; ``worker.hosted`` and ``unisim_ray`` ship them to the
process that stands in for the backend.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

__all__ = ["KitFacts"]


class KitFacts:
    """``UNSUPPORTED_SCENE_FEATURES``, ``KNOWN_KIT_DEVIATIONS``, ``KIT_RULES``."""

    #: Scene features the backend refuses, ``{feature: reason}``: its constructor raises
    #: ``UnsupportedCapabilityError(name, feature, detail)`` for a scene that uses one. The
    #: conformance kit fails a refusal that is not listed here, and a listed one that never refuses.
    UNSUPPORTED_SCENE_FEATURES: ClassVar[Mapping[str, str]] = {}
    #: Conformance checks the backend is known to fail, ``{check id: reason}`` (strict xfail in the kit).
    KNOWN_KIT_DEVIATIONS: ClassVar[Mapping[str, str]] = {}
    #: Kit rules version the backend was written against (``unisim_conformance._rules.KIT_RULES``; the
    #: kit CHANGELOG's "Kit rules N"). ``None`` reads as 1; failures of newer rules are reported as new.
    KIT_RULES: ClassVar[int | None] = None
