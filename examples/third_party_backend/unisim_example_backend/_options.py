"""Options of the example backend: the core's validators give every bad value one clear message."""

from __future__ import annotations

import attrs
import numpy as np

from unisim_core import BackendOptions
from unisim_core.contract.options import float_dtype, positive_int

__all__ = ["ExampleOptions"]


@attrs.frozen(kw_only=True)
class ExampleOptions(BackendOptions):
    """``ExampleBackend`` options, on top of :class:`unisim_core.BackendOptions`.

    - ``np_dtype``: float dtype of returned arrays; float64 by default (the integrator is float64).
    - ``substeps``: integrator steps per ``sim_dt`` (each ``sim_dt / substeps`` long), for stiff
      position servos at large ``sim_dt``.

    Bad values raise ``InvalidInputError`` naming the option, what it expects and what it got, e.g.
    ``substeps: expected an int >= 1, got 0`` (``unisim run --backend example --option substeps=0``).
    """

    np_dtype: type = attrs.field(default=np.float64, converter=float_dtype)
    substeps: int = attrs.field(default=1, validator=positive_int)
