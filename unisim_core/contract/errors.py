"""The errors UniSim raises: each names what was wrong and what was expected."""

from __future__ import annotations

__all__ = [
    "UniSimError",
    "UnsupportedCapabilityError",
    "BackendNotFoundError",
    "BackendLoadError",
    "DuplicateBackendError",
    "OptionalDependencyError",
    "InvalidInputError",
    "InvalidTypeError",
    "UnknownNameError",
    "RenderClosedError",
    "EngineError",
    "DivergenceError",
    "BackendClosedError",
    "ConcurrentUseError",
    "ForkedBackendError",
    "rebuild_error",
    "with_context",
]


class UniSimError(Exception):
    """Base class of UniSim's own errors."""


class UnsupportedCapabilityError(UniSimError, NotImplementedError):
    """A backend was asked for an optional feature it does not declare."""

    def __init__(self, backend: str, capability: object, detail: str = "") -> None:
        name = getattr(capability, "value", capability)
        msg = f"backend {backend!r} does not support capability {name!r}"
        super().__init__(f"{msg}: {detail}" if detail else msg)
        self.backend = backend
        self.capability = capability
        self._detail = detail

    def __reduce__(self):  # picklable across processes (Ray, workers)
        return (type(self), (self.backend, self.capability, self._detail))


class BackendNotFoundError(UniSimError, LookupError):
    """No installed backend answers to the requested name."""


class BackendLoadError(UniSimError, ImportError):
    """A backend was found but could not be loaded (import error, bad spec, incompatible)."""


class DuplicateBackendError(BackendLoadError):
    """Two distributions claim the same backend name."""


class OptionalDependencyError(UniSimError, ImportError):
    """A runtime that an optional feature or backend needs is not installed."""


class InvalidInputError(UniSimError, ValueError):
    """An argument has the wrong shape, value, or contains non-finite numbers."""


class InvalidTypeError(UniSimError, TypeError):
    """An argument has the wrong type or dtype kind."""


class UnknownNameError(UniSimError, KeyError, ValueError):
    """A body, joint, sensor, site, geom, actuator or keyframe name is not in the model.

    Subclasses both ``KeyError`` and ``ValueError`` (the reference contract raises
    ``ValueError`` for unknown names).
    """

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable.
        return str(self.args[0]) if self.args else ""


class RenderClosedError(UniSimError, RuntimeError):
    """The user closed the render window."""


class EngineError(UniSimError, RuntimeError):
    """The engine failed inside a call (a wrapped engine panic or error)."""


class DivergenceError(EngineError):
    """The simulation of some envs diverged (non-finite state, or beyond the engine's bound).

    ``env_ids``: the envs concerned (contract ids). Raised by ``step`` under the backend option
    ``divergence="raise"``, after those envs were reset to the default state.
    """

    def __init__(self, message: str, env_ids: tuple[int, ...] = ()) -> None:
        super().__init__(message)
        self.env_ids = tuple(env_ids)

    def __reduce__(self):  # picklable across processes (Ray, workers)
        return (type(self), (self.args[0], self.env_ids))


class BackendClosedError(UniSimError, RuntimeError):
    """A call was made on a backend after ``close()``."""


class ConcurrentUseError(UniSimError, RuntimeError):
    """A call reached a backend while another thread's call was running on it (a backend is used
    from one thread at a time); the refused call did nothing."""


class ForkedBackendError(UniSimError, RuntimeError):
    """A backend created before ``os.fork()`` was used in the forked child (its engine belongs to
    the parent): create it in the child, or use the ``spawn`` start method."""


def _exception_class(qualified_type: str) -> type | None:
    """The class named ``module.QualName`` when it is UniSim's or the standard library's, looked
    up without running foreign code: builtins, and modules this process has already imported whose
    top-level package is the standard library's or UniSim's (``unisim_core``, ``unisim_*``);
    ``unisim_core`` modules may be imported. ``None`` for anything else (a record naming ``this``
    or a third-party module must not run its import side effects here)."""
    import importlib
    import sys

    module, _, qualname = qualified_type.rpartition(".")
    module = module or "builtins"
    top = module.partition(".")[0]
    if not (top == "builtins" or top in sys.stdlib_module_names or top.startswith("unisim_")):
        return None
    obj = sys.modules.get(module)
    if obj is None and top == "unisim_core":
        try:
            obj = importlib.import_module(module)
        except ImportError:
            return None
    try:
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        return None
    return obj if isinstance(obj, type) and issubclass(obj, BaseException) else None


def rebuild_error(qualified_type: str, message: str, attrs: dict | None = None) -> BaseException | None:
    """The exception ``module.QualName(message)`` raised in another process, rebuilt on this side.

    Built without calling ``__init__`` (whose arguments may differ from the message), with
    ``args = (message,)`` and ``attrs`` restored. Only UniSim's and the standard library's classes
    are rebuilt (:func:`_exception_class`); ``None`` for any other type, or one that is not an
    exception: the caller raises a UniSim error carrying the text instead.
    """
    cls = _exception_class(qualified_type)
    if cls is None:
        return None
    err = cls.__new__(cls)
    err.args = (message,)
    err.__dict__.update(attrs or {})
    return err


def with_context(exc: BaseException, context: str) -> BaseException:
    """A copy of ``exc``, same class and attributes, whose message starts with ``context``
    (e.g. ``"in shard 1, envs [4:8)"``); chained to ``exc``."""
    err = type(exc).__new__(type(exc))
    err.args = (f"{context}: {exc}",)
    err.__dict__.update(vars(exc))
    err.__cause__ = exc
    return err
