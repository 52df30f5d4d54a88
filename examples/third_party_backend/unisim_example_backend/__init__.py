"""An example third-party UniSim backend: the ``SimBackend`` primitives over a small numpy
rigid-body integrator (free bodies, fixed-base hinge/slide trees, motors and servos, damping,
armature, dry friction, joint limits), written from the public API of ``unisim_core`` only.

It declares the capabilities it honours and the scene features it refuses
(``ExampleBackend.UNSUPPORTED_SCENE_FEATURES``); the conformance kit checks both.
"""

from __future__ import annotations

from ._backend import ExampleBackend, __version__
from ._options import ExampleOptions

__all__ = ["ExampleBackend", "ExampleOptions", "__version__"]
