"""Stepping of the contract: ``step`` (chunked engine calls, SIGINT deferral), the pre-step control
hook, and divergence (detection, reset to the default state, counts).

Mixed into :class:`~unisim_core.contract.backend.SimBackend`, which calls the ``_step`` primitive. A long step
runs in engine calls of about ``INTERRUPT_LATENCY_S`` each, so that a ``KeyboardInterrupt`` lands
between two substeps.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from unisim_core.contract._typing import Backend
from unisim_core.contract.capabilities import Capability
from unisim_core.contract.errors import DivergenceError, InvalidInputError, InvalidTypeError
from unisim_core.contract.guards import DeferredInterrupt
from unisim_core.contract.validation import check_float_array, check_int, check_limit

__all__ = ["INTERRUPT_LATENCY_S", "Stepping", "diverged_rows"]

#: Seconds a long ``step`` runs between two points where a ``KeyboardInterrupt`` can land.
INTERRUPT_LATENCY_S = 0.2
_MIN_CHUNK = 8


class Stepping:
    """``step``, ``set_pre_step_control``, ``get_diverged_envs``, ``get_divergence_counts``."""

    def set_pre_step_control(self, fn: Callable[[Backend, np.ndarray], np.ndarray] | None) -> None:
        """Register ``fn(backend, ctrl) -> ctrl`` called before every substep (``None`` clears)."""
        self._require(Capability.PRE_STEP_CONTROL)
        if fn is not None and not callable(fn):
            raise InvalidTypeError(f"fn: expected a callable or None, got {type(fn).__name__}")
        self._pre_step = fn

    def step(self, ctrl: np.ndarray, nsteps: int = 1) -> dict | None:
        """Hold ``ctrl (num_envs, num_actuators)`` over ``nsteps`` substeps of ``sim_dt``.

        Staged body forces act over all substeps and are cleared afterwards. A long call runs
        in engine calls of about ``INTERRUPT_LATENCY_S`` each: a ``KeyboardInterrupt`` lands at
        the end of one, leaving the state a whole number of substeps on. Envs whose state
        diverged during the step are reset to the default state at its end and reported (see
        ``BackendOptions.divergence``). If the pre-step
        control's output is rejected on substep k, the k - 1 substeps before it have run
        (the error says so) and the state is theirs.
        """
        if self._closed:  # a step method looked up before close()
            self._check_open()
        # Fast path: a float C-contiguous array of the right shape whose sum of squares is finite
        # and within the squared bound (then every |value| is; NaN/inf make it fail); everything
        # else gets the full check and its error message.
        if not (type(ctrl) is np.ndarray and ctrl.shape == self._ctrl_shape and ctrl.dtype.kind == "f"
                and ctrl.flags.c_contiguous and _within(ctrl, self.MAX_ABS_VALUE)):
            ctrl = self._check_ctrl("ctrl", ctrl)
        if type(nsteps) is not int or nsteps < 1:
            nsteps = check_int("nsteps", nsteps, 1)
        self._last_diverged = None
        if self._pre_step is None and nsteps <= self._chunk and not self.ATOMIC_STEP_CALLS:
            try:  # the hot path: one engine call (timed only when it may size the chunks of long steps)
                if nsteps <= _MIN_CHUNK:
                    self._step(ctrl, nsteps)
                else:
                    t0 = time.perf_counter()
                    self._step(ctrl, nsteps)
                    self._time_chunk(time.perf_counter() - t0, nsteps)
                mask = self._diverged_mask()  # _collect_divergence inlined: one engine call
                if mask is not None and mask.any():
                    self._last_diverged = mask
            finally:
                if self._clears_forces:
                    self._clear_body_forces()
            if self._contact_watch or self._last_diverged is not None:  # _step_done's tests, inlined
                self._step_done(nsteps)
            return None
        with DeferredInterrupt() as interrupt:
            try:
                self._step_chunked(ctrl, nsteps, interrupt)
            finally:
                self._final_call = True  # outside a chunked step, every _step call ends its step
                if self._clears_forces:
                    self._clear_body_forces()
            self._step_done(nsteps)
        return None

    def _step_done(self, nsteps: int) -> None:
        """After the engine calls of a step: contact timers, then the envs that diverged in it."""
        if self._contact_watch:
            self._contacts_stepped(nsteps)
        if self._last_diverged is not None:
            self._settle_divergence(nsteps)

    def _step_chunked(self, ctrl: np.ndarray, nsteps: int, interrupt: DeferredInterrupt) -> None:
        done = 0
        while done < nsteps:
            if self._pre_step is None:
                k = min(self._chunk, nsteps - done)
                self._final_call = done + k == nsteps
                t0 = time.perf_counter()
                self._step(ctrl, k)
                self._time_chunk(time.perf_counter() - t0, k)
            else:
                k = 1
                try:
                    sub_ctrl = self._check_ctrl("pre-step control output", self._pre_step(self, ctrl))
                except (InvalidInputError, InvalidTypeError) as exc:
                    raise type(exc)(f"{exc} (on substep {done + 1} of {nsteps}; the {done} substep(s) before "
                                    f"it ran and the state is theirs)") from None
                self._final_call = done + 1 == nsteps
                self._step(sub_ctrl, 1)
            done += k
            self._collect_divergence()
            if self._close_pending:  # close() from the hook: it runs once this step returns
                return
            if interrupt.stop:
                interrupt.message = f"step interrupted after {done} of {nsteps} substeps (state consistent)"
                return

    def _time_chunk(self, seconds: float, substeps: int) -> None:
        """Size the engine calls of long steps from the last call's duration (at least
        ``_MIN_CHUNK`` substeps: a short step stays one engine call, whatever its overhead)."""
        self._chunk = max(_MIN_CHUNK, int(INTERRUPT_LATENCY_S * substeps / max(seconds, 1e-9)))

    def _check_ctrl(self, name: str, ctrl: object) -> np.ndarray:
        shape = (self._num_envs, self.num_actuators)
        if (type(ctrl) is np.ndarray and ctrl.shape == shape and ctrl.dtype.kind == "f"
                and ctrl.flags.c_contiguous):
            if not np.isfinite(ctrl).all():
                check_float_array(name, ctrl, shape)  # raises with the offending index
            check_limit(name, ctrl, self.MAX_ABS_VALUE)
            return ctrl
        return check_float_array(name, ctrl, shape, limit=self.MAX_ABS_VALUE)

    # divergence -----------------------------------------------------------------------
    def _diverged_mask(self) -> np.ndarray | None:
        """Hook: ``(num_envs,)`` bool mask of the envs whose state diverged during the last
        ``_step`` call (non-finite, or beyond ``MAX_ABS_VALUE``), or ``None`` when none did.

        The default reads ``get_qpos``/``get_qvel``. Override where the engine detects it itself
        (MuJoCo resets an unstable env on its own) or where the state lives elsewhere.
        """
        with np.errstate(over="ignore", invalid="ignore"):  # a state cast to float32 may overflow: detected
            q, v = self.get_qpos(), self.get_qvel()
        return diverged_rows(self.MAX_ABS_VALUE, q, v)

    def _collect_divergence(self) -> None:
        """After each engine call of a step: remember the envs that diverged in it."""
        mask = self._diverged_mask()
        if mask is not None and mask.any():
            self._last_diverged = mask if self._last_diverged is None else self._last_diverged | mask

    def _settle_divergence(self, nsteps: int) -> None:
        """At the end of a step: reset the envs that diverged in it, count them, apply the policy."""
        ids = np.flatnonzero(self._last_diverged)
        self._reset_to_default(ids)
        self._divergence_counts[ids] += 1
        if self.options.divergence == "raise":
            raise DivergenceError(
                f"backend {self._label!r}: the simulation diverged in env(s) {ids.tolist()} during a step of "
                f"{nsteps} substep(s): a state value became non-finite or exceeded {self.MAX_ABS_VALUE:g}. "
                f"Those envs were reset to the default state at the end of the step; the others stepped "
                f"normally. Reduce sim_dt or the controls/forces, or pass divergence='reset' to reset and "
                f"carry on (see get_diverged_envs).", tuple(int(i) for i in ids))

    def _reset_to_default(self, env_ids: np.ndarray) -> None:
        """Write the default state (default keyframe or ``qpos0``, zero velocity) into ``env_ids``."""
        qpos0 = np.asarray(self.get_default_qpos(), dtype=np.float64)  # UnknownNameError for a bad keyframe
        self._set_state(env_ids, np.tile(qpos0, (len(env_ids), 1)), np.zeros((len(env_ids), self.nv)))
        self._contacts_reset(env_ids)

    def get_diverged_envs(self) -> np.ndarray:
        """``(num_envs,)`` bool: the envs the last ``step`` reset because their state diverged."""
        if self._last_diverged is None:
            return np.zeros(self._num_envs, dtype=bool)
        return self._last_diverged.copy()

    def get_divergence_counts(self) -> np.ndarray:
        """``(num_envs,)`` int64: how many times each env was reset for divergence since construction."""
        return self._divergence_counts.copy()


def diverged_rows(limit: float, *state: np.ndarray) -> np.ndarray | None:
    """``(num_envs,)`` mask of the envs with a value non-finite or beyond ``limit`` in any of the
    ``(num_envs, k)`` ``state`` arrays, or ``None`` when there is none (the common case: one BLAS
    reduction per array)."""
    for a in state:
        if not _within(a, limit):
            break
    else:
        return None
    with np.errstate(invalid="ignore"):
        return ~np.logical_and.reduce([(np.abs(a) <= limit).all(axis=1) for a in state])


def _within(arr: np.ndarray, limit: float) -> bool:
    """Sufficient test that every ``|value| <= limit`` (one BLAS reduction, no temporary): the
    sum of squares is finite and at most ``limit**2``. ``False`` (NaN, inf, overflow of the sum,
    or many values near the limit) sends the caller to the exact check."""
    ss = float(np.vdot(arr, arr))  # a BLAS call: no floating-point warnings
    return math.isfinite(ss) and ss <= limit * limit
