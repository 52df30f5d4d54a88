"""Lifecycle of a backend: construction-time dressing, ``close``, the closed variant, pickling.

``_BackendMeta`` (the metaclass of :class:`~unisim_core.contract.backend.SimBackend`) puts public methods under
the call guard (``guards``) and turns an engine's error while loading a scene into a UniSim error.
``close()`` swaps the instance's class for its *closed variant*, whose public members outside
``READABLE_AFTER_CLOSE`` raise ``BackendClosedError``. A backend pickles only to refuse in UniSim's
words what cannot be pickled (an engine in this process).
"""

from __future__ import annotations

import abc
import inspect
import pickle
import time
from collections.abc import Callable
from threading import get_ident
from typing import Any

from unisim_core.contract._typing import Backend
from unisim_core.contract.construction import construction_error
from unisim_core.contract.errors import BackendClosedError, InvalidTypeError
from unisim_core.contract.guards import guard_methods

__all__ = ["READABLE_AFTER_CLOSE", "Lifecycle", "is_backend_class"]

#: Public members a closed backend still answers: they describe the model, not its state.
READABLE_AFTER_CLOSE = frozenset({
    "close", "closed", "name", "version", "contract_range", "options_cls", "required_runtime", "options", "scene",
    "sim_dt", "np_dtype", "num_envs", "nq", "nv", "num_actuators", "num_dof", "num_dof_vel", "num_bodies",
    "base_body_id", "capabilities", "model_info", "physics_state_size", "noop_options",
})
#: Public members outside the call guard: the model description, and ``close`` (its own rules).
_UNGUARDED = READABLE_AFTER_CLOSE
_closed_classes: dict[type, type] = {}


def _closed_member(name: str) -> Callable[..., Any]:
    def closed(self: Backend, *args: Any, **kwargs: Any) -> Any:
        raise BackendClosedError(f"backend {self._label!r} is closed: {name} is not available after close()")

    closed.__name__ = closed.__qualname__ = name
    return closed


def _closed_variant(cls: type) -> type:
    """The class a backend of ``cls`` becomes on ``close()``: the same, except that every public
    member outside ``READABLE_AFTER_CLOSE`` raises ``BackendClosedError`` (no engine, worker or
    shared memory is touched after close, and the open hot path pays nothing for the check)."""
    variant = _closed_classes.get(cls)
    if variant is None:
        ns: dict[str, Any] = {"__module__": cls.__module__, "__qualname__": cls.__qualname__,
                              "__doc__": cls.__doc__}
        for name in dir(cls):
            if name.startswith("_") or name.isupper() or name in READABLE_AFTER_CLOSE:
                continue
            attr = inspect.getattr_static(cls, name)
            if isinstance(attr, property):
                ns[name] = property(_closed_member(name))
            elif callable(attr) or isinstance(attr, staticmethod | classmethod):
                ns[name] = _closed_member(name)
        ns["__unisim_closed__"] = True
        variant = _closed_classes[cls] = type(cls)(cls.__name__, (cls,), ns)
    return variant


class _BackendMeta(abc.ABCMeta):
    """Puts each class's public methods under the call guard (``guards``); runs the
    construction-time checks once the backend's own ``__init__`` returned, and dresses what an
    engine raised while loading the scene as a UniSim error naming the file."""

    def __init__(cls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(name, bases, namespace, **kwargs)
        if not namespace.get("__unisim_closed__"):
            guard_methods(cls, namespace, _UNGUARDED)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        backend = None
        try:
            backend = super().__call__(*args, **kwargs)
            backend._check_construction()
        except BaseException as exc:
            if backend is not None:
                backend.close()
            if not isinstance(exc, Exception):
                raise
            # an engine's own error while loading the scene or allocating the envs: in UniSim's words
            err = construction_error(cls.name or cls.__name__, args, kwargs, exc)
            if err is exc:
                raise
            raise err from exc
        return backend




def is_backend_class(obj: object) -> bool:
    """Whether ``obj`` is ``SimBackend`` or a subclass (the classes of metaclass ``_BackendMeta``):
    the registry's test, which cannot import ``backend.py`` (that imports the registry's users)."""
    return isinstance(obj, _BackendMeta)
class Lifecycle:
    """``close``/``closed``, the context manager, copy and pickling rules, ``_check_open``."""

    def close(self) -> None:
        """Release engine resources. Idempotent.

        Afterwards every public member raises ``BackendClosedError``, except those in
        ``READABLE_AFTER_CLOSE`` that describe the model (``num_envs``, ``nq``, ``nv``,
        ``num_actuators``, ``model_info``, ``capabilities``, ``options``, ...).

        From another thread it waits for the call in flight to end; from inside a call on this
        thread (a pre-step hook, a callback) it is deferred to the end of that call (a step stops
        after the current substep). In a forked child it only forgets the backend (the parent's
        engine and worker are left alone).
        """
        if self.__dict__.get("_closed", True):
            return
        if self._forked:
            self._closed = True
            self.__class__ = _closed_variant(type(self))
            return
        if self._owner == get_ident():  # inside a call on this thread (a hook): close when it returns
            self._close_pending = True
            return
        while True:  # take the guard's token for good; another thread's call in flight: once it ended
            try:
                self._slot.pop()
                break
            except IndexError:
                if self._closed:
                    return
                time.sleep(0.002)
        self._closed, self._close_pending = True, False
        try:
            try:
                self._release_renderer()  # the shared renderer (``playback``), before the engine goes
            finally:
                self._close()
        finally:
            self.__class__ = _closed_variant(type(self))

    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called."""
        return self._closed

    def _close(self) -> None:
        """Primitive (optional): release engine resources."""

    def _after_fork_in_child(self) -> None:
        """Hook: run in a child forked from the process that created the backend, once the backend
        refuses every call there (e.g. let go of a worker process without stopping it)."""

    def __copy__(self) -> Backend:
        raise InvalidTypeError(f"backend {self._label!r} cannot be copied: a shallow copy would share its engine "
                               f"(closing one would free the other's); create another with create_backend")

    def __reduce_ex__(self, protocol: int) -> Any:
        # the state is pickled here, so that what cannot be pickled is refused in UniSim's words
        try:
            payload = pickle.dumps(self.__getstate__(), protocol)
        except (TypeError, AttributeError, pickle.PicklingError) as exc:
            raise InvalidTypeError(self._unpicklable(str(exc))) from None
        return (_unpickled_backend, (type(self), payload))

    def _unpicklable(self, why: str) -> str:
        return (f"backend {self._label!r} cannot be pickled or deep-copied ({why}): it owns an engine in this "
                f"process; send its scene, num_envs, sim_dt and options instead and create it where it runs "
                f"(or use unisim-ray, which creates backends inside its actors)")

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for key in ("_slot", "_owner", "_close_pending", "_forked", "_created_pid"):
            state.pop(key, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)  # the guard is this object's own (``__new__``)

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise BackendClosedError(f"backend {self._label} is closed")

    @property
    def _label(self) -> str:
        return self.name or type(self).__name__


def _unpickled_backend(cls: type[Backend], payload: bytes) -> Backend:
    backend = cls.__new__(cls)
    try:
        state = pickle.loads(payload)
    except Exception as exc:  # an engine object that pickles but does not unpickle
        raise InvalidTypeError(backend._unpicklable(f"unpickling its state failed: {type(exc).__name__}: {exc}")
                               ) from exc
    backend.__setstate__(state)
    return backend
