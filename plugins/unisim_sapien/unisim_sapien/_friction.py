"""MuJoCo's contact friction on PhysX materials.

MuJoCo gives a contact the larger sliding friction of its two geoms (``max(mu_i, mu_j)``); PhysX
averages the two shapes' materials (``(x_i + x_j) / 2``, its default combine mode, the only one
SAPIEN 3.0.3 builds materials with; measured: 0.2 on 1.0 slides as 0.6). So each shape gets a material
value ``x`` chosen so that every pair MuJoCo collides averages to MuJoCo's friction:
``x_i + x_j = 2 max(mu_i, mu_j)``. On each connected component of the pair graph the values follow
from one of them; a bipartite component (a floor and the robot geoms touching it) leaves that one
free (chosen to keep every value as far above 0 as possible), an odd cycle fixes it. A component
whose pairs contradict each other, or that needs a negative value, has no PhysX materials that give
MuJoCo's friction: :func:`physx_frictions` raises ``ValueError`` naming the pairs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["physx_frictions"]

_TOL = 1e-9  # relative: the closed-form values are exact up to float64 rounding


def physx_frictions(mu: np.ndarray, pairs: Sequence[tuple[int, int]], names: Sequence[str] = ()) -> np.ndarray:
    """Per geom, the PhysX material friction (static = dynamic) that reproduces MuJoCo's ``max`` on every
    colliding geom pair of ``pairs``; geoms in no pair keep ``mu``. ``mu (G,)``: MuJoCo's sliding
    friction per geom (``geom_friction[:, 0]``), ``names``: geom names for the error."""
    mu = np.asarray(mu, dtype=np.float64)
    out = mu.copy()
    if not pairs:
        return out
    edges: dict[int, list[tuple[int, float]]] = {}
    for i, j in pairs:
        target = 2.0 * max(mu[i], mu[j])
        edges.setdefault(i, []).append((j, target))
        edges.setdefault(j, []).append((i, target))
    seen: dict[int, tuple[float, float]] = {}  # geom -> (c, s): x = c + s t, t the component's free value
    for root in sorted(edges):
        if root in seen:
            continue
        seen[root] = (0.0, 1.0)
        order, fixed = [root], None
        for u in order:  # breadth first; each edge gives x_v = target - x_u
            cu, su = seen[u]
            for v, target in edges[u]:
                if v not in seen:
                    seen[v] = (target - cu, -su)
                    order.append(v)
                    continue
                cv, sv = seen[v]
                if su == sv:  # an odd cycle: c_u + c_v + 2 s t = target fixes t
                    t = (target - cu - cv) / (2.0 * su)
                    if fixed is not None and abs(t - fixed) > _TOL * max(1.0, abs(t)):
                        raise _conflict(u, v, mu, names)
                    fixed = t if fixed is None else fixed
                elif abs(cu + cv - target) > _TOL * max(1.0, target):
                    raise _conflict(u, v, mu, names)
        if fixed is None:  # bipartite: the t that keeps the smallest value largest
            plus = min(seen[g][0] for g in order if seen[g][1] > 0)
            minus = [seen[g][0] for g in order if seen[g][1] < 0]
            fixed = (min(minus) - plus) / 2.0 if minus else mu[root]
        for g in order:
            c, s = seen[g]
            out[g] = c + s * fixed
        if (out[order] < -_TOL).any():
            label = {g: names[g] if g < len(names) and names[g] else str(g) for g in order}
            bad = [label[g] for g in order if out[g] < -_TOL]
            raise ValueError(f"geoms {bad} would need a negative PhysX friction to give MuJoCo's max(mu_i, mu_j) on "
                             "each of their contact pairs (PhysX averages the two materials; frictions "
                             f"{ {label[g]: float(mu[g]) for g in order} })")
        out[order] = np.maximum(out[order], 0.0)
    return out


def _conflict(u: int, v: int, mu: np.ndarray, names: Sequence[str]) -> ValueError:
    label = [names[g] if g < len(names) and names[g] else str(g) for g in (u, v)]
    return ValueError(f"the contact pairs around geoms {label[0]!r} and {label[1]!r} (frictions {mu[u]:g}, {mu[v]:g}) "
                      "contradict each other: no per-shape PhysX materials (PhysX averages the two in a contact) give "
                      "MuJoCo's max(mu_i, mu_j) on every pair")
