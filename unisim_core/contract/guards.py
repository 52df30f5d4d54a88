"""Use-boundary guards every backend gets from ``SimBackend``.

- **One thread at a time.** Every public method runs under the backend's call guard: a call
  from a second thread while one is in flight raises ``ConcurrentUseError`` (nothing runs,
  nothing is written). Calls made from inside a call on the same thread (a pre-step hook, a
  derived getter calling a primitive) go through. ``close()`` is the exception: from another
  thread it waits for the call in flight to end, from inside a call (a hook) it is deferred to
  the end of that call (a step stops after the current substep).
- **No use in a forked child.** After ``os.fork()`` (``multiprocessing``'s default ``fork``
  start method on Linux) a backend created before the fork raises ``ForkedBackendError`` in the
  child, naming the remedy; its engine (thread pools, a worker process, shared memory) belongs
  to the parent: the child never steps it, never frees it (at exit either) and never stops the
  parent's worker. ``close()`` in the child only forgets it.
- **SIGINT deferred** over a block that must not be cut in two (a round trip to a worker, an
  engine call of a long step): :class:`DeferredInterrupt`.
"""

from __future__ import annotations

import ctypes
import functools
import inspect
import os
import signal
import threading
import weakref
from collections.abc import Callable
from threading import get_ident
from typing import Any

from unisim_core.contract.errors import BackendClosedError, ConcurrentUseError, ForkedBackendError

__all__ = ["DeferredInterrupt", "guard_methods", "guarded", "init_guard", "refusal"]


_live: weakref.WeakSet = weakref.WeakSet()
#: Engine state of backends inherited by a forked child: kept alive for good (their destructors
#: would join thread pools or free memory that belong to the parent).
_inherited: list[dict] = []


def init_guard(backend: Any) -> None:
    """Give a new backend object (``__new__``, unpickling) its own guard: one token in
    ``_slot``, taken by the outermost call (``_owner`` its thread), and by ``close()`` for good."""
    backend.__dict__.update(_slot=[True], _owner=None, _close_pending=False, _forked=False,
                            _created_pid=os.getpid())
    _live.add(backend)


def refusal(backend: Any, name: str) -> Exception:
    """The error for a call ``name`` its guard did not grant."""
    label = backend._label
    if backend.__dict__.get("_forked"):
        return ForkedBackendError(
            f"backend {label!r}: {name} called in a forked child (pid {os.getpid()}) of the process that created "
            f"the backend (pid {backend._created_pid}); its engine, threads and worker belong to that process and "
            f"cannot be shared. Create the backend in the child, after the fork, or start child processes with "
            f"the 'spawn' or 'forkserver' method (multiprocessing.get_context('spawn')).")
    if backend.__dict__.get("_closed", False):
        return BackendClosedError(f"backend {label!r} is closed: {name} is not available after close()")
    return ConcurrentUseError(
        f"backend {label!r}: {name} called from thread {threading.current_thread().name!r} while a call of "
        f"another thread runs on it; a backend is used from one thread at a time (nothing was done). "
        f"Serialise the calls (one lock around them) or give each thread its own backend.")


_GUARD_TEMPLATE = """
def _g_call({params}):
    _g_slot = self._slot
    _g_token = None
    if _g_slot:
        try:
            _g_token = _g_slot.pop()  # atomic under the GIL: the one token of a free backend
        except IndexError:  # another thread took it since the test above
            pass
    if _g_token is None:
        if self._owner != _g_ident():
            raise _g_refusal(self, {name!r})
        return _g_fn({args})  # inside a call on this thread: a hook, or one public method using another
    self._owner = _g_ident()
    try:
        return _g_fn({args})
    finally:
        self._owner = None
        _g_slot.append(_g_token)
        if self._close_pending:  # close() from inside a call: done when the outermost one ends
            self.close()
"""


def guarded(fn: Callable[..., Any], name: str | None = None) -> Callable[..., Any]:
    """``fn`` (a public method, any Python function: a ``def`` or a ``lambda``) under the backend's
    call guard (see the module docstring); ``name``: the attribute it is called by (``fn.__name__``).

    The wrapper is generated with ``fn``'s own parameters (as ``dataclasses`` does), so that a
    call pays no ``*args``/``**kwargs`` packing on the hot path.
    """
    name = fn.__name__ if name is None else name
    params, args, defaults = [], [], {}
    ps = list(inspect.signature(fn).parameters.values())
    for i, p in enumerate(ps):
        text, arg = p.name, p.name
        if p.kind is p.VAR_POSITIONAL:
            text = arg = f"*{p.name}"
        elif p.kind is p.VAR_KEYWORD:
            text = arg = f"**{p.name}"
        elif p.kind is p.KEYWORD_ONLY:
            arg = f"{p.name}={p.name}"
            if not any(q.kind is q.VAR_POSITIONAL or q.kind is q.KEYWORD_ONLY for q in ps[:i]):
                params.append("*")
        if p.default is not p.empty:
            defaults[f"_default{i}"] = p.default
            text += f"=_default{i}"
        params.append(text)
        args.append(arg)
        if p.kind is p.POSITIONAL_ONLY and (i + 1 == len(ps) or ps[i + 1].kind is not p.POSITIONAL_ONLY):
            params.append("/")
    namespace = {"_g_fn": fn, "_g_ident": get_ident, "_g_refusal": refusal, **defaults}
    # the generated function has a fixed name (a lambda's ``<lambda>`` is no identifier); ``wraps``
    # gives it ``fn``'s name, and the refusal names the attribute the method was found under
    exec(_GUARD_TEMPLATE.format(name=name, params=", ".join(params), args=", ".join(args)), namespace)
    call = functools.wraps(fn)(namespace["_g_call"])
    call.__unisim_guarded__ = True
    return call


def guard_methods(cls: type, namespace: dict[str, Any], exempt: frozenset[str]) -> None:
    """Put every public method defined in ``namespace`` (a class's own) under the call guard."""
    for name, attr in list(namespace.items()):
        if (name.startswith("_") or name.isupper() or name in exempt or not inspect.isfunction(attr)
                or getattr(attr, "__unisim_guarded__", False)):
            continue
        setattr(cls, name, guarded(attr, name))


def _after_fork_in_child() -> None:
    for backend in list(_live):
        state = backend.__dict__
        if "_slot" not in state:
            continue
        state.update(_slot=[], _owner=None, _close_pending=False, _forked=True)
        _inherited.append(state)
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(state))  # never freed, even at interpreter exit
        try:
            backend._after_fork_in_child()
        except Exception:  # noqa: BLE001 - a hook must not break the child's fork
            pass


os.register_at_fork(after_in_child=_after_fork_in_child)


class DeferredInterrupt:
    """Hold a SIGINT that arrives inside the block until the caller reaches a consistent point.

    Active in the main thread while a Python-level SIGINT handler is installed (the default one
    or the program's own; ``SIG_IGN``/``SIG_DFL`` need no deferral). ``stop`` tells that an
    interrupt arrived for the default handler (the caller may end its work early); leaving the
    block then runs the held handler, which for the default one raises
    ``KeyboardInterrupt(message)`` (not while another exception is propagating). Nested blocks:
    the outermost one holds the interrupt.
    """

    __slots__ = ("pending", "_previous", "message")

    def __enter__(self) -> DeferredInterrupt:
        self.pending = False
        self.message = ""
        self._previous = None
        if threading.current_thread() is threading.main_thread():
            handler = signal.getsignal(signal.SIGINT)
            if callable(handler) and not isinstance(getattr(handler, "__self__", None), DeferredInterrupt):
                self._previous = handler
                signal.signal(signal.SIGINT, self._hold)
        return self

    def _hold(self, signum: int, frame: object) -> None:
        self.pending = True

    @staticmethod
    def holder() -> DeferredInterrupt | None:
        """The block holding SIGINT now (the outermost active one), or ``None`` (none active, or
        not the main thread). Code waiting inside a nested block reads its ``stop``."""
        if threading.current_thread() is not threading.main_thread():
            return None
        owner = getattr(signal.getsignal(signal.SIGINT), "__self__", None)
        return owner if isinstance(owner, DeferredInterrupt) else None

    @property
    def stop(self) -> bool:
        """An interrupt arrived whose handler raises ``KeyboardInterrupt``: end the work early."""
        return self.pending and self._previous is signal.default_int_handler

    def __exit__(self, exc_type: type | None, *exc: object) -> None:
        previous = self._previous
        if previous is None:
            return
        signal.signal(signal.SIGINT, previous)
        if self.pending and exc_type is None:
            if previous is signal.default_int_handler:
                raise KeyboardInterrupt(self.message)
            previous(signal.SIGINT, None)
