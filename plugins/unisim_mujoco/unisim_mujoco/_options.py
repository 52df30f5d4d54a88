"""``MujocoOptions``: the MuJoCo backend's typed options."""

from __future__ import annotations

import attrs

from unisim_core.contract.errors import InvalidInputError
from unisim_core.contract.options import BackendOptions, boolean, optional_positive_int

__all__ = ["MujocoOptions", "INTEGRATORS"]

#: Integrator names accepted by ``MujocoOptions.integrator`` -> ``mjtIntegrator`` member names.
INTEGRATORS = {"euler": "mjINT_EULER", "implicit": "mjINT_IMPLICIT",
               "implicitfast": "mjINT_IMPLICITFAST", "rk4": "mjINT_RK4"}


def _integrator(inst, attribute, value):
    if value is not None and value not in INTEGRATORS:
        raise InvalidInputError(f"{attribute.name}: expected None or one of {sorted(INTEGRATORS)}, got {value!r}")


@attrs.frozen(kw_only=True)
class MujocoOptions(BackendOptions):
    """Options of the MuJoCo backend (on top of :class:`BackendOptions`).

    - ``threads``: threads of the batch's pool (``None``: all CPUs).
    - ``add_body_sensors``: add ``<body>_pos``/``_quat``/``_linvel``/``_angvel`` frame
      sensors (body frame origin, world frame) for every body before compiling.
    - ``integrator``: override the model's integrator (``"euler"``, ``"implicit"``,
      ``"implicitfast"``, ``"rk4"``); ``None`` keeps the model's.
    - ``iterations`` / ``ls_iterations``: solver iteration overrides (``None`` keeps the model's).
    - ``noslip_iterations``: iterations of MuJoCo's no-slip post-solver (removes the creep
      of soft contacts; ``None`` keeps the model's).

    The time step always comes from ``sim_dt`` (``model.opt.timestep = sim_dt``).
    """

    threads: int | None = attrs.field(default=None, validator=optional_positive_int)
    add_body_sensors: bool = attrs.field(default=False, validator=boolean)
    integrator: str | None = attrs.field(default=None, validator=_integrator)
    iterations: int | None = attrs.field(default=None, validator=optional_positive_int)
    ls_iterations: int | None = attrs.field(default=None, validator=optional_positive_int)
    noslip_iterations: int | None = attrs.field(default=None, validator=optional_positive_int)
