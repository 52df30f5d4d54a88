"""MuJoCo's contact friction on PhysX materials.

MuJoCo gives a contact the larger sliding friction of its two geoms (``max(mu_i, mu_j)``); PhysX
averages the two shapes' materials (``(x_i + x_j) / 2``, its default combine mode, the only one
SAPIEN 3.0.3 builds materials with; measured: 0.2 on 1.0 slides as 0.6). So each shape gets a material
value ``x`` such that the pairs MuJoCo collides average to MuJoCo's friction, ``x_i + x_j = 2 max(mu_i,
mu_j)``. The pairs are taken in order of importance, each kept exact if the ones before allow it:
first those with a ground geom (a plane or height field: a floor and the geoms touching it always
have a solution), then those with another static or kinematic geom (an arm's fixed base, a mocap
body), then the moving pairs (self-collisions, objects). Each connected component of kept pairs
leaves one value free unless an odd cycle fixes it: the moving pairs first vote for it (the value most
of them can keep), else it keeps the smallest value as large as possible. A ground pair that cannot be
kept, or a negative value, has no PhysX materials with MuJoCo's friction: :func:`physx_frictions`
raises ``ValueError``; the other pairs that cannot be kept get the average of their materials and are
returned with both values (the backend warns). A quadruped on a floor of 1.0 whose body geoms have 0.6
and feet 0.8: every geom touches the floor, so all get the same value, and the foot-body pairs (0.8 in
MuJoCo) get the body pairs' 0.6.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from ._warnings import SapienModellingWarning

__all__ = ["physx_frictions", "physx_materials"]

_TOL = 1e-9  # relative: exact solutions hold to float64 rounding


def _label(g: int, names: Sequence[str]) -> str:
    return names[g] if g < len(names) and names[g] else str(g)


class _Components:
    """Geoms joined by kept pairs: each member ``x = c + s t`` of its component's value ``t`` (``fixed`` by
    an odd cycle, else free)."""

    def __init__(self) -> None:
        self.of: dict[int, int] = {}  # geom -> component id
        self.members: dict[int, dict[int, tuple[float, float]]] = {}  # component -> {geom: (c, s)}
        self.fixed: dict[int, float | None] = {}

    def add(self, g: int) -> None:
        if g not in self.of:
            self.of[g] = g
            self.members[g], self.fixed[g] = {g: (0.0, 1.0)}, None

    def keep(self, u: int, v: int, target: float, tol: float) -> bool:
        """Join ``x_u + x_v = target`` if the kept pairs allow it; whether it was kept."""
        a, b = self.of[u], self.of[v]
        (cu, su), (cv, sv) = self.members[a][u], self.members[b][v]
        if a == b:
            if su != sv:
                return abs(cu + cv - target) <= tol
            t = (target - cu - cv) / (2.0 * su)  # an odd cycle fixes t
            if self.fixed[a] is None:
                self.fixed[a] = t
                return True
            return abs(self.fixed[a] - t) <= tol
        # t_b = (target - c_u - c_v - s_u t_a) / s_v: b's members in terms of t_a
        k0, k1 = (target - cu - cv) / sv, -su / sv
        if self.fixed[b] is not None:
            t_a = (self.fixed[b] - k0) / k1  # b's fixed t fixes a's
            if self.fixed[a] is not None and abs(self.fixed[a] - t_a) > tol:
                return False
            self.fixed[a] = t_a
        for g, (c, s) in self.members.pop(b).items():
            self.members[a][g] = (c + s * k0, s * k1)
            self.of[g] = a
        self.fixed.pop(b)
        return True

    def vote(self, pairs: list[tuple[int, int, float]]) -> None:
        """Fix each free component's value to the one most of ``pairs`` (``(u, v, target)``, both in it, on
        an odd cycle) ask for, so that the most of them are kept."""
        asks: dict[int, dict[float, int]] = {}
        for u, v, target in pairs:
            a = self.of.get(u)
            if a is None or a != self.of.get(v) or self.fixed[a] is not None:
                continue
            (cu, su), (cv, sv) = self.members[a][u], self.members[a][v]
            if su == sv:
                t = round((target - cu - cv) / (2.0 * su), 9)
                asks.setdefault(a, {})[t] = asks.setdefault(a, {}).get(t, 0) + 1
        for a, counts in asks.items():
            self.fixed[a] = max(counts, key=lambda t: (counts[t], -t))

    def values(self) -> dict[int, float]:
        out = {}
        for comp, rows in self.members.items():
            t = self.fixed[comp]
            if t is None:  # the t keeping the smallest value largest
                plus = [c for c, s in rows.values() if s > 0]
                minus = [c for c, s in rows.values() if s < 0]
                t = (min(minus) - min(plus)) / 2.0 if minus else 0.0
            out.update({g: c + s * t for g, (c, s) in rows.items()})
        return out


def physx_frictions(mu: np.ndarray, pairs: Sequence[tuple[int, int]], rank: Sequence[int] | np.ndarray,
                    names: Sequence[str] = ()) -> tuple[np.ndarray, list[tuple[int, int, float, float]]]:
    """``(x, off)``: per geom, the PhysX material friction (static = dynamic); geoms in no pair keep ``mu``.
    ``mu (G,)``: MuJoCo's sliding friction per geom (``geom_friction[:, 0]``); ``pairs``: the geom pairs
    MuJoCo collides; ``rank (G,)``: per geom 0 for a ground geom (plane, height field), 1 another static
    or kinematic one, 2 a moving one (a pair's importance is its better geom's); ``names``: geom names
    for messages. ``off``: the pairs ``(i, j, PhysX's, MuJoCo's)`` that do not get MuJoCo's value."""
    mu = np.asarray(mu, dtype=np.float64)
    x = mu.copy()
    if not len(pairs):
        return x, []
    order = sorted(range(len(pairs)), key=lambda r: min(rank[pairs[r][0]], rank[pairs[r][1]]))
    comps, dropped = _Components(), []
    tol = _TOL * max(1.0, 2.0 * float(mu.max()))
    voted = False
    for r in order:
        i, j = pairs[r]
        if not voted and min(rank[i], rank[j]) == 2:  # the fixed geoms' pairs are in: the moving ones vote
            comps.vote([(u, v, 2.0 * max(mu[u], mu[v])) for u, v in (pairs[q] for q in order)
                        if min(rank[u], rank[v]) == 2])
            voted = True
        comps.add(i)
        comps.add(j)
        if not comps.keep(i, j, 2.0 * max(mu[i], mu[j]), tol):
            if min(rank[i], rank[j]) == 0:
                raise ValueError(f"the contact pairs of the ground geoms around {_label(i, names)!r} and "
                                 f"{_label(j, names)!r} (frictions {mu[i]:g}, {mu[j]:g}) contradict each other: no "
                                 "per-shape PhysX materials (PhysX averages the two in a contact) give MuJoCo's "
                                 "max(mu_i, mu_j) on every pair")
            dropped.append((i, j))
    for g, value in comps.values().items():
        x[g] = value
    if (x < -tol).any():
        bad = [_label(g, names) for g in np.flatnonzero(x < -tol)]
        raise ValueError(f"geoms {bad} would need a negative PhysX friction to give MuJoCo's max(mu_i, mu_j) on each "
                         "of their contact pairs (PhysX averages the two materials)")
    x = np.maximum(x, 0.0)
    off = [(i, j, float((x[i] + x[j]) / 2.0), float(max(mu[i], mu[j]))) for i, j in dropped
           if abs(x[i] + x[j] - 2.0 * max(mu[i], mu[j])) > tol]
    return x, off


def physx_materials(mu: np.ndarray, pairs: Sequence[tuple[int, int]], rank: Sequence[int] | np.ndarray,
                    names: Sequence[str], where: str) -> np.ndarray:
    """:func:`physx_frictions`' values; the pairs that do not get MuJoCo's friction are named in a
    :class:`SapienModellingWarning` (``where``: the file, or the env of a randomization)."""
    x, off = physx_frictions(mu, pairs, rank, names)
    if off:
        shown = ", ".join(f"{_label(i, names)!r}-{_label(j, names)!r} {got:.3g} (MuJoCo {want:.3g})"
                          for i, j, got, want in off[:4])
        warnings.warn(SapienModellingWarning(
            f"{where}: PhysX averages a contact's two materials and no per-shape values give MuJoCo's max(mu_i, mu_j) "
            f"on every pair: {len(off)} of {len(pairs)} pairs differ (each ground pair is exact), e.g. {shown}"),
            stacklevel=3)
    return x
