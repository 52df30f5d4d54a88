"""Translate MotrixSim failures (Rust panics included) into UniSim errors."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from unisim_core.errors import EngineError

__all__ = ["engine_call", "is_panic"]


def is_panic(exc: BaseException) -> bool:
    """Whether ``exc`` is a pyo3 ``PanicException`` (a ``BaseException``, not an ``Exception``)."""
    return type(exc).__name__ == "PanicException"


@contextlib.contextmanager
def engine_call(what: str) -> Iterator[None]:
    """Run engine code; a panic or engine error becomes ``EngineError`` naming ``what``.

    ``KeyboardInterrupt``/``SystemExit`` and UniSim's own errors pass through unchanged.
    """
    try:
        yield
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - PanicException derives from BaseException
        from unisim_core.errors import UniSimError

        if isinstance(exc, UniSimError):
            raise
        kind = "panicked" if is_panic(exc) else f"failed ({type(exc).__name__})"
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise EngineError(f"motrixsim {what} {kind}: {msg}") from exc
