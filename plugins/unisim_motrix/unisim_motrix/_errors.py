"""Translate MotrixSim failures (Rust panics included) into UniSim errors."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from unisim_core.contract.errors import EngineError

__all__ = ["engine_call", "engine_error", "is_panic"]


def is_panic(exc: BaseException) -> bool:
    """Whether ``exc`` is a pyo3 ``PanicException`` (a ``BaseException``, not an ``Exception``)."""
    return type(exc).__name__ == "PanicException"


def engine_error(what: str, exc: BaseException) -> BaseException:
    """The error to raise for ``exc`` from engine code: UniSim's own errors unchanged, anything
    else (a panic included) an ``EngineError`` naming ``what``."""
    from unisim_core.contract.errors import UniSimError

    if isinstance(exc, UniSimError):
        return exc
    kind = "panicked" if is_panic(exc) else f"failed ({type(exc).__name__})"
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return EngineError(f"motrixsim {what} {kind}: {msg}")


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
        err = engine_error(what, exc)
        if err is exc:
            raise
        raise err from exc
