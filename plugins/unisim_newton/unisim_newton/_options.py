"""``NewtonOptions``: the Newton backend's typed options (importable without warp or newton)."""

from __future__ import annotations

import attrs

from unisim_core.contract.errors import InvalidInputError
from unisim_core.contract.options import BackendOptions, boolean, optional_device, optional_positive_int

__all__ = ["NewtonOptions", "SOLVERS"]

#: ``solver`` values offered -> what they run (docs/newton.md says why the others are not offered).
SOLVERS = {"mujoco": "newton.solvers.SolverMuJoCo (MuJoCo Warp, generalized coordinates)"}


def _solver(inst, attribute, value):
    if value not in SOLVERS:
        raise InvalidInputError(f"{attribute.name}: expected one of {sorted(SOLVERS)}, got {value!r}")


@attrs.frozen(kw_only=True)
class NewtonOptions(BackendOptions):
    """Options of the Newton backend (on top of :class:`BackendOptions`).

    - ``device``: warp device, ``"cpu"``, ``"cuda"`` or ``"cuda:N"``; ``None`` picks ``"cuda"``
      when warp sees a CUDA device, else ``"cpu"``.
    - ``solver``: Newton solver, ``"mujoco"`` (``SolverMuJoCo`` on MuJoCo Warp). Newton's
      maximal-coordinate solvers are not offered (docs/newton.md: measured reasons).
    - ``graph_capture``: replay each substep (``SolverMuJoCo.step`` from one state buffer into the
      other) as a captured graph, one per direction: a CUDA graph on CUDA, warp's recorded launches
      on its CPU device (no per-launch Python); ``False`` launches every kernel from Python.
    - ``nconmax``: contacts allocated per world; ``njmax``: constraint rows per world (``None``: sized
      from the model as ``unisim-mjwarp`` sizes them, ``unisim_mjwarp.buffer_sizes``). MuJoCo Warp's
      contact pool ``naconmax`` is ``nconmax`` times ``num_envs``. Exceeding either is an
      ``EngineError`` naming the buffer and the option, never silently dropped contacts.

    The time step always comes from ``sim_dt``.
    """

    device: str | None = attrs.field(default=None, validator=optional_device)
    solver: str = attrs.field(default="mujoco", validator=_solver)
    graph_capture: bool = attrs.field(default=True, validator=boolean)
    nconmax: int | None = attrs.field(default=None, validator=optional_positive_int)
    njmax: int | None = attrs.field(default=None, validator=optional_positive_int)
