"""Observation terms as config: order, scale, noise, delay and history, seeded and reproducible.

An observation is the concatenation of its :class:`ObsTermCfg` terms, in order. Each term's
value (the task computes it by name) goes through, in this order: noise (:class:`NoiseCfg`,
drawn from the env's generator, so ``reset(seed=...)`` reproduces it), ``clip``, ``scale``, a
delay line (each env's lag drawn in ``delay = (min, max)`` control steps at its reset, mjlab's
``delay_min_lag``/``delay_max_lag``) and a history of the last ``history`` (delayed) values,
oldest first. Configs are attrs, frozen: ``attrs.asdict`` serializes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs
import numpy as np

from unisim_core import InvalidInputError

__all__ = ["NoiseCfg", "ObsTermCfg", "ObservationManager"]


def _non_negative(inst, attribute, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value) or value < 0:
        raise InvalidInputError(f"{type(inst).__name__}.{attribute.name}: expected a number >= 0, got {value!r}")


def _distribution(inst, attribute, value) -> None:
    if value not in ("uniform", "gaussian"):
        raise InvalidInputError(f"NoiseCfg.{attribute.name}: expected 'uniform' or 'gaussian', got {value!r}")


@attrs.frozen(kw_only=True)
class NoiseCfg:
    """Noise on a term: ``x (1 + s) + a``, with ``a`` additive and ``s`` scaled, each uniform in
    ``[-additive, additive]`` / ``[-scaled, scaled]`` (``"uniform"``) or normal with that standard
    deviation (``"gaussian"``), drawn per env, value and step."""

    additive: float = attrs.field(default=0.0, validator=_non_negative)
    scaled: float = attrs.field(default=0.0, validator=_non_negative)
    distribution: str = attrs.field(default="uniform", validator=_distribution)

    def apply(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        draw = ((lambda w: rng.uniform(-w, w, x.shape)) if self.distribution == "uniform"
                else (lambda w: rng.normal(0.0, w, x.shape)))
        if self.scaled:
            x = x * (1.0 + draw(self.scaled))
        if self.additive:
            x = x + draw(self.additive)
        return x


def _lag(value) -> tuple[int, ...]:
    return (value, value) if isinstance(value, int) and not isinstance(value, bool) else tuple(value)


def _delay(inst, attribute, value) -> None:
    if (len(value) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
            or not 0 <= value[0] <= value[1]):
        raise InvalidInputError(f"ObsTermCfg.{attribute.name}: expected (min, max) control steps with "
                                f"0 <= min <= max, or one int, got {value!r}")


def _history(inst, attribute, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError(f"ObsTermCfg.{attribute.name}: expected an int >= 1, got {value!r}")


def _clip(inst, attribute, value) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or not value > 0):
        raise InvalidInputError(f"ObsTermCfg.{attribute.name}: expected None or a positive number, got {value!r}")


@attrs.frozen(kw_only=True)
class ObsTermCfg:
    """One observation term: its ``name`` (the task's term), ``scale``, ``noise``, ``clip`` (±),
    ``delay`` ((min, max) control steps or one int) and ``history`` (values stacked)."""

    name: str
    scale: float = 1.0
    noise: NoiseCfg | None = None
    clip: float | None = attrs.field(default=None, validator=_clip)
    delay: tuple[int, int] = attrs.field(default=(0, 0), converter=_lag, validator=_delay)
    history: int = attrs.field(default=1, validator=_history)


class ObservationManager:
    """Terms bound to their widths for ``num_envs`` envs; :meth:`compute` builds the observation."""

    def __init__(self, terms: Sequence[ObsTermCfg], widths: Mapping[str, int], num_envs: int) -> None:
        unknown = [t.name for t in terms if t.name not in widths]
        if unknown:
            raise InvalidInputError(f"observations: unknown terms {unknown}; this task has {list(widths)}")
        names = [t.name for t in terms]
        if len(set(names)) != len(names):
            raise InvalidInputError(f"observations: a term appears twice in {names}")
        self.terms = tuple(terms)
        self.n = num_envs
        self.widths = {t.name: int(widths[t.name]) for t in terms}
        #: ``((name, width in the observation), ...)`` in order; the width counts the history.
        self.layout = tuple((t.name, self.widths[t.name] * t.history) for t in terms)
        self.size = sum(w for _, w in self.layout)
        self._depth = {t.name: t.delay[1] + t.history for t in terms}
        self._buf = {t.name: np.zeros((self._depth[t.name], num_envs, self.widths[t.name])) for t in terms
                     if self._depth[t.name] > 1}
        self._lag = {name: np.zeros(num_envs, dtype=np.int64) for name in self._buf}
        self._head = 0
        self._rows = np.arange(num_envs)

    def _process(self, term: ObsTermCfg, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if term.noise is not None:
            x = term.noise.apply(x, rng)
        if term.clip is not None:
            x = np.clip(x, -term.clip, term.clip)
        return x * term.scale if term.scale != 1.0 else x

    def reset(self, env_ids: np.ndarray, values: Mapping[str, np.ndarray], rng: np.random.Generator) -> None:
        """Draw ``env_ids``' lags and fill their delay lines with their processed ``values``
        (``{name: (len(env_ids), width)}``, current state), so no value crosses an episode."""
        for t in self.terms:
            if t.name in self._buf:
                lo, hi = t.delay
                self._lag[t.name][env_ids] = rng.integers(lo, hi + 1, len(env_ids)) if hi > lo else hi
                self._buf[t.name][:, env_ids] = self._process(t, np.asarray(values[t.name], np.float64), rng)[None]

    def compute(self, values: Mapping[str, np.ndarray], rng: np.random.Generator, *, advance: bool = True
                ) -> np.ndarray:
        """``(num_envs, size)`` float32 from ``{name: (num_envs, width)}``. ``advance=False`` reads
        without pushing a new step into the delay lines (a second read in the same step)."""
        if advance:
            self._head += 1
        out = []
        for t in self.terms:
            if t.name not in self._buf:
                out.append(self._process(t, values[t.name], rng))
                continue
            buf, depth = self._buf[t.name], self._depth[t.name]
            if advance:
                buf[self._head % depth] = self._process(t, values[t.name], rng)
            lag = self._lag[t.name]
            for k in range(t.history - 1, -1, -1):  # oldest first
                out.append(buf[(self._head - lag - k) % depth, self._rows])
        return np.concatenate(out, axis=1, dtype=np.float32)
