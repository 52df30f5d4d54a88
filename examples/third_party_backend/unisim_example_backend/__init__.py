"""An example third-party UniSim backend.

It reuses the core's analytic engine (``unisim_core.fake``) but ships its own options
(float64 by default) and declares an honest, smaller capability set: no randomization and
no push. Everything it does not declare raises ``UnsupportedCapabilityError``, which the
conformance kit checks.
"""

from __future__ import annotations

import attrs
import numpy as np

from unisim_core import BackendOptions, Capability
from unisim_core.fake import FakeBackend
from unisim_core.options import _to_dtype

__all__ = ["ExampleBackend", "ExampleOptions"]
__version__ = "0.1.0"


@attrs.frozen(kw_only=True)
class ExampleOptions(BackendOptions):
    """Example options: float64 reads by default."""

    np_dtype: type = attrs.field(default=np.float64, converter=_to_dtype)


class ExampleBackend(FakeBackend):
    """The analytic engine with float64 defaults and fewer declared capabilities."""

    name = "example"
    version = __version__
    options_cls = ExampleOptions
    CAPABILITIES = frozenset({
        Capability.PRE_STEP_CONTROL, Capability.SENSORS, Capability.BODY_FORCE, Capability.BODY_TORQUE,
        Capability.PHYSICS_SNAPSHOT, Capability.SITE_JACOBIAN,
    })
    INIT_TERMS = INTERVAL_TERMS = RESET_TERMS = frozenset()
