"""MuJoCo's joint equality constraints as PhysX fixed tendons.

``<equality><joint joint1 joint2 polycoef="a0 a1 0 0 0">`` holds ``q1 - q1_0 = a0 + a1 (q2 - q2_0)``
(positions from ``qpos0``, which is PhysX's joint zero here) as a soft constraint. A PhysX fixed tendon
of one articulation measures ``L = sum c_i q_i`` and pulls it to its rest length with an implicit
spring-damper whose force reaches joint ``i`` as ``c_i F`` (the reciprocal coefficients set to the
coefficients; measured: a tendon of coefficients 1, -2 pulled to 0.1 from 0 splits it 0.02, -0.04 on
equal links, as ``c_i F`` does). So ``c = (1, -a1)``, rest length ``a0``. MuJoCo's soft constraint
(``solref``, ``solimp``) moves the constraint coordinate ``r`` as ``r'' = (1 - d) a0 - d b r' - d k r``
(``a0`` its unconstrained acceleration, ``b = 2 / (dmax tau)``, ``k = d / (dmax tau zeta)^2``, ``tau`` at
least ``2 dt`` as MuJoCo clamps it, the impedance ``d = dmax = solimp[1]`` beyond solimp's 1e-3 width):
a spring-damper of ``m d k / (1 - d)`` and ``m d b / (1 - d)`` on an inertia ``m / (1 - d)``, with
``m = 1 / (c M^-1 c)`` the coordinate's inertia (``M``: the joint-space mass matrix at ``qpos0``). The
tendon gets that spring-damper on the coordinate's own inertia ``m``: the same deflection under a
steady load (a gripper's fingers held against each other), a response ``1 / sqrt(1 - d)`` faster and
more damped. A polynomial equality (``a2..a4``) or one coupling joints of two articulations is refused
by name; an inactive one is skipped (MuJoCo does not apply it). ``<equality><tendon>`` between fixed tendons
is the same constraint on their joints (``L1 - a1 L2 = a0``, lengths from ``qpos0``: coefficients ``c1 - a1 c2``).

``<equality><connect>`` (a ball joint closing a loop: cassie's rods, a gripper's four-bar linkage) becomes a
PhysX D6 joint between the two bodies' links with its three translations locked and its rotations free
(:class:`Connect`): PhysX solves it as a hard constraint beside the articulations (a loop closure), where
MuJoCo's is soft (``solref``: 0.005-0.02 s): the anchors coincide in PhysX, MuJoCo lets them part by the
constraint force over its stiffness. ``anchor`` is in ``body1``'s frame; ``body2``'s anchor is the same
world point at ``qpos0`` (MuJoCo's compiler); with ``site1``/``site2`` the two sites coincide.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from unisim_core import LiteModel, UnsupportedCapabilityError
from unisim_core.contract import quat as Q
from unisim_core.plugin.mjcf_lite import mass_matrix0, read_tree

__all__ = ["Connect", "JointTendon", "connects", "joint_tendons"]

_SOLREF = (0.02, 1.0)  # MuJoCo's defaults for equality constraints
_SOLIMP = (0.9, 0.95, 0.001, 0.5, 2.0)


@dataclass(frozen=True)
class JointTendon:
    """A fixed tendon for one joint equality: ``joints`` (MJCF joint ids; one when ``joint2`` is absent),
    ``coefficients`` per joint, ``rest`` (rad or m), ``stiffness`` and ``damping`` (per unit of ``L``)."""

    joints: tuple[int, ...]
    coefficients: tuple[float, ...]
    rest: float
    stiffness: float
    damping: float


def _floats(text: str | None, default: tuple[float, ...]) -> np.ndarray:
    values = np.array([float(x) for x in text.split()], dtype=np.float64) if text else np.zeros(0)
    padded = np.array(default, dtype=np.float64)
    padded[:len(values)] = values[:len(padded)]
    return padded


def _equality_defaults(root) -> dict[str, dict[str, str]]:
    """``<equality>`` attributes of every default class, inherited down the nesting (``main`` at the top)."""
    defaults: dict[str, dict[str, str]] = {}

    def walk(elem, inherited: dict[str, str]) -> None:
        table = dict(inherited)
        for child in elem.findall("equality"):
            table.update(child.attrib)
        defaults[elem.get("class", "main")] = table
        for child in elem.findall("default"):
            walk(child, table)

    for d in root.findall("default"):
        walk(d, {})
    return defaults


def _linear_terms(eq, a: dict, lite: LiteModel, path: str, backend: str) -> tuple[dict[int, float], float]:
    """``({joint id: coefficient}, rest)`` of a linear joint or tendon equality: ``x1 - a1 x2 = a0`` with
    ``x`` a joint's position or a fixed tendon's length ``sum c q``, both measured from ``qpos0`` (PhysX's joint
    zero here); a polynomial one, or one on a spatial tendon, is refused by its feature naming it."""
    kind = eq.tag
    label = a.get("name") or f"{a.get(f'{kind}1')}-{a.get(f'{kind}2')}"
    poly = _floats(a.get("polycoef"), (0.0, 1.0, 0.0, 0.0, 0.0))
    if np.any(poly[2:]):
        raise UnsupportedCapabilityError(backend, f"{kind}_equality", f"{path}: {kind} equality {label!r} has "
                                         f"polycoef {poly.tolist()}; a PhysX fixed tendon couples joints linearly")
    if kind == "joint":
        names = [j["name"] for j in lite.joints]
        rows = [{names.index(a[key]): 1.0} if a.get(key) else {} for key in ("joint1", "joint2")]
    else:
        tendons = {t["name"]: t for t in lite.tendons}
        rows = []
        for key in ("tendon1", "tendon2"):
            t = tendons.get(a.get(key)) if a.get(key) else None
            if t is not None and t["type"] != "fixed":
                raise UnsupportedCapabilityError(backend, "tendon_equality", f"{path}: tendon equality {label!r} "
                                                 f"couples spatial tendon {t['name']!r}; SAPIEN builds fixed tendons "
                                                 "only")
            rows.append({} if t is None else dict(zip(t["joints"], t["coef"])))
    terms = dict(rows[0])
    for j, c in rows[1].items():
        terms[j] = terms.get(j, 0.0) - float(poly[1]) * c
    return terms, float(poly[0])


def joint_tendons(path: str, lite: LiteModel, dt: float, backend: str) -> list[JointTendon]:
    """The active ``<equality><joint>`` and ``<equality><tendon>`` (of fixed tendons) elements of ``path`` as PhysX
    fixed tendons (module docstring: a tendon equality is the same linear constraint on its tendons' joints)."""
    root = read_tree(path)
    defaults = _equality_defaults(root)
    tendons, inverse = [], None
    for eq in (e for section in root.findall("equality") for e in section if e.tag in ("joint", "tendon")):
        a = {**defaults.get(eq.get("class", "main"), {}), **eq.attrib}
        if a.get("active", "true") == "false":  # off from the start: MuJoCo does not apply it
            continue
        terms, rest = _linear_terms(eq, a, lite, path, backend)
        joints, coefficients = tuple(terms), tuple(terms.values())
        if inverse is None:
            inverse = np.linalg.inv(mass_matrix0(lite))
        c = np.zeros(lite.nv)
        for j, k in zip(joints, coefficients):
            c[lite.joints[j]["dofadr"]] += k
        inertia = 1.0 / float(c @ inverse @ c)
        solref, solimp = _floats(a.get("solref"), _SOLREF), _floats(a.get("solimp"), _SOLIMP)
        d = float(solimp[1])  # dmax: the impedance beyond solimp's width (1e-3 by default)
        if solref[0] > 0:  # time constant and damping ratio: d k = (d / (dmax tau zeta))^2, d b = 2 d / (dmax tau)
            tau = max(float(solref[0]), 2.0 * dt)
            dk, db = 1.0 / (tau * solref[1]) ** 2, 2.0 / tau
        else:  # direct stiffness and damping: d k = -solref[0], d b = -solref[1]
            dk, db = -float(solref[0]), -float(solref[1])
        scale = inertia / (1.0 - d)  # MuJoCo's response held by the coordinate's inertia (module docstring)
        tendons.append(JointTendon(joints=joints, coefficients=coefficients, rest=rest,
                                   stiffness=scale * dk, damping=scale * db))
    return tendons


@dataclass(frozen=True)
class Connect:
    """A ball joint between bodies ``body1`` and ``body2`` (MJCF body ids; 0: the world) at ``anchor1``/``anchor2``
    (m, in each body's frame), the same point at ``qpos0``."""

    body1: int
    body2: int
    anchor1: tuple[float, float, float]
    anchor2: tuple[float, float, float]


def connects(path: str, lite: LiteModel, backend: str) -> list[Connect]:
    """The active ``<equality><connect>`` elements of ``path`` (module docstring); one on a mocap body is refused
    as ``connect_equality`` naming it (a kinematic actor is no link to join)."""
    root = read_tree(path)
    defaults = _equality_defaults(root)
    bodies, sites = list(lite.body_names), [x["name"] for x in lite.sites]
    pos, quat = lite.body_frames0()
    out = []
    for eq in (e for section in root.findall("equality") for e in section.findall("connect")):
        a = {**defaults.get(eq.get("class", "main"), {}), **eq.attrib}
        if a.get("active", "true") == "false":  # off from the start: MuJoCo does not apply it
            continue
        if "site1" in a:  # the two sites coincide
            s1, s2 = lite.sites[sites.index(a["site1"])], lite.sites[sites.index(a["site2"])]
            b1, b2, p1, p2 = s1["body"], s2["body"], np.asarray(s1["pos"]), np.asarray(s2["pos"])
        else:  # body1's anchor and the point of body2 there at qpos0
            b1, b2 = bodies.index(a["body1"]), bodies.index(a["body2"]) if a.get("body2") else 0
            p1 = np.array([float(x) for x in a.get("anchor", "0 0 0").split()])
            world = pos[b1] + Q.quat_apply(quat[b1], p1)
            p2 = Q.quat_apply_inverse(quat[b2], world - pos[b2])
        mocap = [lite.body_names[b] for b in (b1, b2) if lite.body_mocap[b]]
        if mocap:
            raise UnsupportedCapabilityError(backend, "connect_equality", f"{path}: a connect equality joins mocap "
                                             f"body {mocap[0]!r}, a kinematic PhysX actor here, not a link")
        out.append(Connect(b1, b2, tuple(float(x) for x in p1), tuple(float(x) for x in p2)))
    return out
