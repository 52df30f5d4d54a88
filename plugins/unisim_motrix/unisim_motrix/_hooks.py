"""The plugin's hooks (the ``unisim.backends`` entry point is the package): static facts and the
raw-engine loops of ``unisim bench``; nothing here imports MotrixSim."""

from __future__ import annotations

import attrs

from unisim_core.hooks import hookimpl
from unisim_core.registry import BackendSpec

from ._backend import MotrixBackend

__all__ = ["unisim_backend_spec", "unisim_raw_stepper", "unisim_step_cost_probe"]


@hookimpl
def unisim_backend_spec() -> BackendSpec:
    return attrs.evolve(BackendSpec.from_class("motrix", MotrixBackend), required_modules=("motrixsim",))


@hookimpl
def unisim_raw_stepper():
    from ._bench import raw_stepper

    return raw_stepper


@hookimpl
def unisim_step_cost_probe():
    from ._bench import step_cost_probe

    return step_cost_probe
