"""Cross-backend options: knobs some engines need and others do not, accepted by every backend.

An app that drives several engines from one configuration (UniLab's ``EnvCfg``, a benchmark
matrix) passes the same option set to each. An option named here that a backend's options class
does not declare is accepted as a **declared no-op** on that backend, after its value is checked
against what a no-op can honestly mean; any other unknown option stays a ``TypeError`` listing
the valid ones (``options.build_options``). ``SimBackend.noop_options`` reports which were
accepted that way and why.

==================  ======================================  ========================================
option              meaning where an engine has it          accepted as a no-op elsewhere when
==================  ======================================  ========================================
``threads``         host worker threads of the engine       any int >= 1 or None (a speed knob)
``nconmax``         contact buffer size, per env            any int >= 1 or None (the engine grows
``njmax``           constraint buffer size, per env         or sizes its buffers itself)
``graph_capture``   capture the step as a CUDA graph        any bool (a speed knob)
``device``          where the engine runs                   ``None`` or ``"cpu"`` only: a CUDA
                                                            request on a CPU-only engine is refused
==================  ======================================  ========================================
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from unisim_core.contract.errors import InvalidInputError

__all__ = ["PORTABLE_OPTIONS", "PortableOption", "split_portable"]


def _opt_int(name: str, value: Any) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise InvalidInputError(f"{name}: expected an int >= 1 or None, got {value!r}")


def _bool(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise InvalidInputError(f"{name}: expected a bool, got {value!r}")


def _cpu_device(name: str, value: Any) -> None:
    if value not in (None, "cpu"):
        raise InvalidInputError(f"{name}: this backend runs on the CPU only; expected None or 'cpu', got {value!r}")


@attrs.frozen
class PortableOption:
    """``check(name, value)`` raises ``InvalidInputError`` for a value that is no no-op; ``why`` says
    why the option is not needed by a backend that lacks it."""

    check: Callable[[str, Any], None]
    why: str


#: The cross-backend options (see the module docstring).
PORTABLE_OPTIONS: Mapping[str, PortableOption] = {
    "threads": PortableOption(_opt_int, "the engine has no host thread pool to size"),
    "nconmax": PortableOption(_opt_int, "the engine sizes its contact buffers itself"),
    "njmax": PortableOption(_opt_int, "the engine sizes its constraint buffers itself"),
    "graph_capture": PortableOption(_bool, "the engine has no CUDA graph to capture"),
    "device": PortableOption(_cpu_device, "the engine runs on the CPU only"),
}


def split_portable(declared: set[str] | frozenset[str], kwargs: Mapping[str, Any]) -> tuple[dict, dict[str, str]]:
    """``(kwargs for the options class, {option: why it is a no-op})``: the portable options absent
    from ``declared`` (the options class's fields) are checked and set apart; the rest pass through."""
    own, noops = {}, {}
    for key, value in kwargs.items():
        portable = PORTABLE_OPTIONS.get(key)
        if key in declared or portable is None:
            own[key] = value
        else:
            portable.check(key, value)
            noops[key] = portable.why
    return own, noops
