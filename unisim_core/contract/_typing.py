"""The backend as the modules :class:`~unisim_core.contract.backend.SimBackend` is built from see it.

``backend.py`` imports its mixins (``_lifecycle``, ``_stepping``, ...) and helpers (``bindings``,
``contacts``, ``heightfield``, ``kinematics``); they annotate the backend they serve with
:class:`Backend`, a Protocol of the members they read, instead of importing ``backend.py`` back
(no import circle: docs/architecture.md). For annotations only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Protocol

import numpy as np

from unisim_core.contract.model import ModelInfo

__all__ = ["Backend"]


class Backend(Protocol):
    """A :class:`~unisim_core.contract.backend.SimBackend` (structurally)."""

    name: ClassVar[str]
    num_envs: int
    #: numpy scalar type of every array the backend returns.
    np_dtype: type[np.floating]

    @property
    def model_info(self) -> ModelInfo: ...

    def get_qpos(self, env_ids: Sequence[int] | np.ndarray | None = None) -> np.ndarray: ...

    def _check_open(self) -> None: ...
