"""``GenesisOptions``: the Genesis backend's typed options (importable without genesis)."""

from __future__ import annotations

import attrs

from unisim_core.contract.options import BackendOptions, optional_choice, optional_device, optional_positive_int

__all__ = ["GenesisOptions", "CONSTRAINT_SOLVERS", "LOG_LEVELS", "PRECISIONS"]

#: ``constraint_solver`` values -> ``gs.constraint_solver`` member names.
CONSTRAINT_SOLVERS = {"newton": "Newton", "cg": "CG"}
#: ``precision`` values (Genesis' ``gs.init(precision=...)``).
PRECISIONS = ("32", "64")
#: ``log_level`` values (Genesis' logger; ``"error"`` also silences the kernel compiler's warnings).
LOG_LEVELS = ("debug", "info", "warning", "error")


@attrs.frozen(kw_only=True)
class GenesisOptions(BackendOptions):
    """Options of the Genesis backend (on top of :class:`BackendOptions`).

    - ``device``: ``"cpu"`` (Genesis' CPU backend), ``"cuda"`` or ``"cuda:N"``; ``None`` picks
      ``"cuda"`` when torch sees a CUDA device, else ``"cpu"``.
    - ``precision``: Genesis' float width, ``"32"`` or ``"64"``; ``None`` is ``"64"`` on the CPU
      (MuJoCo's precision, the parity reference) and ``"32"`` on CUDA.
    - ``constraint_solver`` (``"newton"``, ``"cg"``), ``iterations``: Genesis' rigid constraint
      solver and its iteration cap (``None``: Genesis' defaults, Newton and 25).
    - ``log_level``: Genesis' console verbosity (default ``"error"``: its INFO/WARNING lines and
      the kernel compiler's warnings stay out of the user's output).

    Genesis is initialized once per process (``gs.init``): every Genesis backend of a process
    shares one device and precision; asking for another is an error naming both.
    """

    device: str | None = attrs.field(default=None, validator=optional_device)
    precision: str | None = attrs.field(default=None, validator=optional_choice(PRECISIONS))
    constraint_solver: str | None = attrs.field(default=None, validator=optional_choice(CONSTRAINT_SOLVERS))
    iterations: int | None = attrs.field(default=None, validator=optional_positive_int)
    log_level: str = attrs.field(default="error", validator=optional_choice(LOG_LEVELS))
