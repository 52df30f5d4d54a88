"""``GenesisOptions``: the Genesis backend's typed options (importable without genesis)."""

from __future__ import annotations

import re

import attrs

from unisim_core.errors import InvalidInputError
from unisim_core.options import BackendOptions, optional_positive_int

__all__ = ["GenesisOptions", "CONSTRAINT_SOLVERS", "LOG_LEVELS", "PRECISIONS"]

#: ``constraint_solver`` values -> ``gs.constraint_solver`` member names.
CONSTRAINT_SOLVERS = {"newton": "Newton", "cg": "CG"}
#: ``precision`` values (Genesis' ``gs.init(precision=...)``).
PRECISIONS = ("32", "64")
#: ``log_level`` values (Genesis' logger; ``"error"`` also silences the kernel compiler's warnings).
LOG_LEVELS = ("debug", "info", "warning", "error")
_DEVICE = re.compile(r"cpu|cuda(:\d+)?")


def _one_of(choices):
    def check(inst, attribute, value):
        if value is not None and value not in choices:
            raise InvalidInputError(f"{attribute.name}: expected None or one of {sorted(choices)}, got {value!r}")
    return check


def _device(inst, attribute, value):
    if value is not None and not (isinstance(value, str) and _DEVICE.fullmatch(value)):
        raise InvalidInputError(f"{attribute.name}: expected None, 'cpu', 'cuda' or 'cuda:N', got {value!r}")


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

    device: str | None = attrs.field(default=None, validator=_device)
    precision: str | None = attrs.field(default=None, validator=_one_of(PRECISIONS))
    constraint_solver: str | None = attrs.field(default=None, validator=_one_of(CONSTRAINT_SOLVERS))
    iterations: int | None = attrs.field(default=None, validator=optional_positive_int)
    log_level: str = attrs.field(default="error", validator=_one_of(LOG_LEVELS))
