"""The plugin's hooks (the ``unisim.backends`` entry point is the package): static facts and the
raw-engine loops of ``unisim bench``; nothing here imports MotrixSim."""

from __future__ import annotations

import attrs

from unisim_core.contract.hooks import bench_hooks, hookimpl
from unisim_core.contract.registry import BackendSpec

from ._backend import MotrixBackend

__all__ = ["unisim_backend_spec", "unisim_raw_stepper", "unisim_step_cost_probe",
           "unisim_zoo_causes"]


@hookimpl
def unisim_backend_spec() -> BackendSpec:
    return attrs.evolve(BackendSpec.from_class("motrix", MotrixBackend), required_modules=("motrixsim",))


@hookimpl
def unisim_zoo_causes() -> dict[str, str]:
    from ._zoo_causes import CAUSES  # the documented causes of this engine's deviating zoo cells

    return CAUSES


unisim_raw_stepper, unisim_step_cost_probe = bench_hooks(__package__)
