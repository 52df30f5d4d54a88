"""``MjwarpOptions``: the MuJoCo Warp backend's typed options (importable without warp)."""

from __future__ import annotations

import attrs

from unisim_core.contract.options import (
    BackendOptions,
    boolean,
    optional_choice,
    optional_device,
    optional_positive_int,
)
from unisim_mujoco import INTEGRATORS

__all__ = ["MjwarpOptions", "MjwarpModellingWarning", "CONES", "SOLVERS"]

#: ``cone`` values -> ``mjtCone`` member names.
CONES = {"pyramidal": "mjCONE_PYRAMIDAL", "elliptic": "mjCONE_ELLIPTIC"}
#: ``solver`` values -> ``mjtSolver`` member names (MuJoCo Warp has no PGS: a file's PGS runs as Newton).
SOLVERS = {"cg": "mjSOL_CG", "newton": "mjSOL_NEWTON"}


class MjwarpModellingWarning(UserWarning):
    """A model option MuJoCo Warp runs differently from the file, with the same answer (said once per backend)."""


@attrs.frozen(kw_only=True)
class MjwarpOptions(BackendOptions):
    """Options of the MuJoCo Warp backend (on top of :class:`BackendOptions`).

    - ``device``: warp device, ``"cpu"``, ``"cuda"`` or ``"cuda:N"``; ``None`` picks
      ``"cuda"`` when warp sees a CUDA device, else ``"cpu"``.
    - ``integrator`` (``"euler"``, ``"implicit"``, ``"implicitfast"``, ``"rk4"``), ``cone``
      (``"pyramidal"``, ``"elliptic"``), ``solver`` (``"cg"``, ``"newton"``), ``iterations``,
      ``ls_iterations``, ``noslip_iterations``: overrides of the model's options (``None``
      keeps the model's), as set in mjlab.
    - ``nconmax``: contacts allocated per world; ``njmax``: constraint rows per world
      (``None``: sized from the model, ``_buffers.py``: every collidable body's contacts at its
      cone's rows plus every equality/limit/friction row; never below MuJoCo Warp's defaults).
      Exceeding either is an ``EngineError`` naming the option to raise, never silently
      dropped contacts.
    - ``graph_capture``: replay each substep as a captured graph (``wp.ScopedCapture``): a CUDA
      graph on CUDA; on warp's CPU device the recorded launches, replayed in C++ without warp's
      per-launch Python (the quadruped: 0.35 ms per substep instead of 13.5 ms, bit-identical).
      ``None`` (default) or ``True`` captures; ``False`` runs every launch from Python.
    - ``add_body_sensors``: add ``<body>_pos``/``_quat``/``_linvel``/``_angvel`` frame
      sensors for every body (as in ``unisim-mujoco``).

    The time step always comes from ``sim_dt``.
    """

    device: str | None = attrs.field(default=None, validator=optional_device)
    integrator: str | None = attrs.field(default=None, validator=optional_choice(INTEGRATORS))
    cone: str | None = attrs.field(default=None, validator=optional_choice(CONES))
    solver: str | None = attrs.field(default=None, validator=optional_choice(SOLVERS))
    iterations: int | None = attrs.field(default=None, validator=optional_positive_int)
    ls_iterations: int | None = attrs.field(default=None, validator=optional_positive_int)
    noslip_iterations: int | None = attrs.field(default=None, validator=optional_positive_int)
    nconmax: int | None = attrs.field(default=None, validator=optional_positive_int)
    njmax: int | None = attrs.field(default=None, validator=optional_positive_int)
    graph_capture: bool | None = attrs.field(default=None, validator=attrs.validators.optional(boolean))
    add_body_sensors: bool = attrs.field(default=False, validator=boolean)
