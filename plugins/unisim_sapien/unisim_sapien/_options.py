"""``SapienOptions``: the SAPIEN backend's typed options (importable without sapien)."""

from __future__ import annotations

import attrs

from unisim_core.contract.errors import InvalidInputError
from unisim_core.contract.options import BackendOptions
from unisim_physx import PhysxSolverConfig, physx_config_option

__all__ = ["SapienOptions"]

#: Fields of the shared config that only PhysX's GPU pipeline has (SAPIEN runs ``PhysxCpuSystem``).
GPU_ONLY = ("gpu_max_rigid_contact_count", "gpu_max_rigid_patch_count")


def _cpu_config(inst, attribute, value: PhysxSolverConfig) -> None:
    gpu = [f for f in GPU_ONLY if getattr(value, f) is not None]
    if gpu:
        raise InvalidInputError(f"{attribute.name}: {gpu} size PhysX's GPU buffers; unisim-sapien runs PhysX on the "
                                f"CPU (PhysxCpuSystem), which has none: got {value.to_payload()}")


@attrs.frozen(kw_only=True)
class SapienOptions(BackendOptions):
    """Options of the ``sapien`` backend (on top of :class:`BackendOptions`).

    - ``physx``: PhysX solver overrides (:class:`unisim_physx.PhysxSolverConfig` or a dict of
      its fields), applied to every env and read back from the engine (``solver_readback``).
      ``solver_type`` defaults to ``"PGS"`` here (SAPIEN's own default TGS drifts on articulated
      chains, docs/sapien.md); the GPU buffer capacities are refused (CPU PhysX).

    The time step always comes from ``sim_dt``.
    """

    physx: PhysxSolverConfig = attrs.field(factory=PhysxSolverConfig, converter=physx_config_option,
                                           validator=_cpu_config)
