"""Errors across a process boundary: captured as an :class:`ErrorRecord` where they are raised,
rebuilt from it on the caller side (one path for every transport: worker pipes, Ray actors)."""

from __future__ import annotations

import pickle
import traceback
from typing import Any

import attrs

from unisim_core.contract.errors import UniSimError, rebuild_error

__all__ = ["ErrorRecord", "RemoteError"]


def _picklable(value: Any) -> bool:
    try:
        pickle.loads(pickle.dumps(value))
    except Exception:  # noqa: BLE001 - any failure means "does not cross"
        return False
    return True


def _plain(value: Any) -> Any:
    """``value`` as plain data (enum members as their values), or ``...`` when it is not plain."""
    value = getattr(value, "value", value)
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, list | tuple) and all(isinstance(x, int | float | str) for x in value):
        return list(value)
    return ...


@attrs.frozen
class ErrorRecord:
    """An exception raised by a served backend, as data that crosses any transport.

    ``type``: ``module.QualName`` (bare name for builtins); ``message``: ``str(exc)``; ``args``:
    the exception's args when they cross, else ``None``; ``attrs``: its instance attributes that
    cross; ``safe``: the backend raised it on purpose (bad input, engine error) and stays usable.
    """

    type: str
    message: str
    traceback: str = ""
    attrs: dict = attrs.field(factory=dict)
    args: tuple | None = None
    safe: bool = False

    @classmethod
    def capture(cls, exc: BaseException, *, safe: bool | None = None) -> ErrorRecord:
        """The record of ``exc`` (``safe`` defaults to: ``exc`` is a UniSim error)."""
        t = type(exc)
        name = t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
        kept = {k: v for k, v in vars(exc).items() if not k.startswith("__") and _picklable(v)}
        return cls(name, str(exc), "".join(traceback.format_exception(exc)), kept,
                   tuple(exc.args) if _picklable(exc.args) else None,
                   isinstance(exc, UniSimError) if safe is None else bool(safe))

    def to_plain(self) -> dict[str, Any]:
        """The record as plain data (attributes and args that are not plain are dropped)."""
        plain = {k: p for k, p in ((k, _plain(v)) for k, v in self.attrs.items()) if p is not ...}
        args = None if self.args is None else [_plain(a) for a in self.args]
        return {"type": self.type, "message": self.message, "traceback": self.traceback, "attrs": plain,
                "args": None if args is None or ... in args else args}

    @classmethod
    def from_plain(cls, d: dict[str, Any], *, safe: bool = False) -> ErrorRecord:
        attrs_ = d.get("attrs")
        args = d.get("args")
        return cls(str(d.get("type")), str(d.get("message")), str(d.get("traceback") or ""),
                   attrs_ if type(attrs_) is dict else {}, tuple(args) if type(args) is list else None, safe)

    def rebuild(self) -> BaseException | None:
        """The exception on this side: same class, args and attributes, built without calling its
        ``__init__``; ``None`` when the class cannot be imported here."""
        err = rebuild_error(self.type, self.message, self.attrs)
        if err is not None and self.args is not None:
            err.args = self.args
        return err


class RemoteError(Exception):
    """Carries an :class:`ErrorRecord` through a transport that moves exceptions (a Ray actor
    call); the caller rebuilds the original with ``record.rebuild()``."""

    def __init__(self, record: ErrorRecord) -> None:
        super().__init__(record)
        self.record = record

    def __str__(self) -> str:
        return f"{self.record.type}: {self.record.message}"
