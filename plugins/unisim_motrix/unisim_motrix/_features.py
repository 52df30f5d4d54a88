"""Which MJCF features MotrixSim 0.10 honours (probed on the engine), and the checks at construction.

MotrixSim's loader parses many MJCF elements it then drops with a log line (sensors it lacks,
actuators with a site transmission, spatial tendons, tendon equalities): a model would run
as another model. Those are refused by feature name (``unisim_core.plugin.mjcf_features``) before the
engine loads the file; after loading, the engine's model sizes are compared with MuJoCo's
compilation of the same file (:func:`check_layout`).
"""

from __future__ import annotations

import os
import re
import warnings

from unisim_core.contract.errors import EngineError, InvalidInputError, UnsupportedCapabilityError
from unisim_core.plugin.mjcf_features import (
    ACTUATOR_TAGS,
    EQUALITY_TAGS,
    SENSOR_TAGS,
    TRANSMISSIONS,
    FeatureUse,
    check_features,
    feature_name,
    unsupported_error,
    use,
    walk_mjcf,
)
from unisim_core.plugin.mjcf_features import check_layout as _compare

__all__ = ["SUPPORTED", "REFUSED_FEATURES", "check_model_features", "check_layout", "load_error",
           "warn_stiff_contacts", "warn_inertia"]

_ENGINE = "MotrixSim 0.10"
_SENSORS = ("touch", "accelerometer", "velocimeter", "gyro", "jointpos", "jointvel", "framepos", "framequat",
            "framexaxis", "frameyaxis", "framezaxis", "framelinvel", "frameangvel", "subtreecom", "subtreelinvel",
            "subtreeangmom", "actuatorpos", "actuatorvel", "magnetometer")  # the last three: _derived_sensors
#: ``{kind: features}`` MotrixSim honours; any other feature of these kinds is refused.
SUPPORTED: dict[str, frozenset[str]] = {
    "sensor": frozenset(feature_name("sensor", t) for t in _SENSORS),
    "actuator": frozenset(feature_name("actuator", t) for t in ("general", "motor", "position", "velocity",
                                                                "adhesion")),
    "transmission": frozenset(feature_name("transmission", t) for t in ("joint", "tendon", "body", "site")),
    "tendon": frozenset({"fixed_tendon"}),
    "equality": frozenset(feature_name("equality", t) for t in ("connect", "weld", "joint")),
    "model": frozenset({"contact_pair", "contact_exclude", "mocap", "replicate", "attach"}),
}
_WHY = {
    "sensor": f"{_ENGINE} has no such sensor (its loader drops it)",
    "actuator": f"{_ENGINE} has no such actuator",
    "transmission": f"{_ENGINE} drops actuators with this transmission (the model would have fewer actuators)",
    "tendon": f"{_ENGINE} ignores spatial tendons",
    "equality": f"{_ENGINE} ignores this equality constraint",
    "model": f"{_ENGINE}'s MJCF loader does not support it",
}
_KNOWN = {
    "sensor": SENSOR_TAGS - {"plugin"},
    "actuator": ACTUATOR_TAGS,
    "transmission": TRANSMISSIONS,
    "tendon": ("spatial", "fixed"),
    "equality": EQUALITY_TAGS,
}
#: The vocabulary's features this backend refuses, with the reason. Not the class's
#: ``REFUSED_FEATURES``: the kit holds those to its own scenes, which use none of these.
REFUSED_FEATURES: dict[str, str] = {
    **{feature_name(k, t): _WHY[k] for k, tags in _KNOWN.items() for t in tags
       if feature_name(k, t) not in SUPPORTED[k]},
    **{f: _WHY["model"] for f in ("plugin", "flex", "skin", "composite")},
    "plugin_sensor": _WHY["sensor"],
    "unnamed_sensor": f"{_ENGINE} reads sensors by name only; name the sensor",
    "joint_actuatorgravcomp": f"{_ENGINE} applies gravcomp as a passive force on every joint: it does not route a "
                              "joint's share through its actuators and their actuatorfrcrange clamp (measured: an "
                              "arm whose 2.45 N m of compensation MuJoCo clamps to 1 N m stays put)",
}


def _world_equalities(path: str) -> FeatureUse | None:
    """An equality that names the world body (MotrixSim panics: ``invalid link name: world``)."""
    for el, anc, f in walk_mjcf(path):
        if anc and anc[-1].tag == "equality" and "world" in (el.get("body1"), el.get("body2")):
            return FeatureUse(feature_name("equality", el.tag), "equality", el.tag, el.get("name", ""), f)
    return None


def check_model_features(backend: str, path: str, uses: tuple[FeatureUse, ...]) -> None:
    """Refuse (``UnsupportedCapabilityError`` naming the feature and element) what MotrixSim drops."""
    refused = {f: why for f, why in REFUSED_FEATURES.items() if f != "unnamed_sensor"}
    check_features(backend, uses, refused=refused, supported=SUPPORTED)
    for u in uses:
        if u.kind == "sensor" and not u.name:
            raise unsupported_error(backend, FeatureUse("unnamed_sensor", "model", u.tag, "", u.file),
                                    REFUSED_FEATURES["unnamed_sensor"])
    world = _world_equalities(path)
    if world is not None:
        raise unsupported_error(backend, world, f"{_ENGINE} cannot name the world body in an equality "
                                "(omit body2 to attach to the world)")


def check_layout(backend: str, path: str, got: dict[str, int], m=None):
    """Compare the engine's sizes with MuJoCo's compilation ``m`` of ``path`` (compiled here when
    ``None``; ``EngineError`` on a difference); returns that ``mujoco.MjModel``."""
    import mujoco

    if m is None:
        try:
            m = mujoco.MjModel.from_xml_path(os.fspath(path))
        except ValueError as exc:
            raise InvalidInputError(f"{path}: MuJoCo's compiler rejects the model: {exc}") from None
    expected = {"nq": m.nq, "nv": m.nv, "nu": m.nu, "nbody": m.nbody, "njnt": m.njnt,
                "nsensordata": m.nsensordata}
    _compare(backend, path, expected, got)
    return m


def warn_stiff_contacts(path: str, m, sim_dt: float) -> None:
    """Warn (``MotrixModellingWarning``) when a collidable geom's ``solref`` time constant is below
    ``2 * sim_dt``: MuJoCo raises it to ``2 * sim_dt`` (``refsafe``) where a contact uses it alone,
    MotrixSim uses it as given, so such contacts are stiffer. Where two geoms' solrefs are mixed the
    engines differ otherwise (MuJoCo averages the time constants, MotrixSim the stiffness and damping:
    pal_talos' 0.001 feet on the 0.02 floor, docs/motrix.md), which this warning does not cover."""
    import mujoco
    import numpy as np

    from ._mjcf import MotrixModellingWarning

    if m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_REFSAFE:
        return
    collides = (m.geom_contype != 0) | (m.geom_conaffinity != 0)
    tc = m.geom_solref[:, 0]
    stiff = np.flatnonzero(collides & (tc > 0) & (tc < 2 * sim_dt))
    if stiff.size:
        warnings.warn(f"{os.path.basename(path)}: {stiff.size} collidable geom(s) have a solref time constant below "
                      f"2 * timestep ({float(tc[stiff].min()):g} s < {2 * sim_dt:g} s); MuJoCo raises it to "
                      f"{2 * sim_dt:g} s, MotrixSim uses it as given, so contacts are stiffer than MuJoCo's",
                      MotrixModellingWarning, stacklevel=4)


#: Valid MJCF the engine's parser rejects: ``(pattern of its message, tag of the attribute)``;
#: group 1 names the element where the message does.
_PARSER_REJECTS = (
    (re.compile(r"(\w+)@(\w+): (?:invalid|unknown variant)"), None),  # an attribute value it rejects
    (re.compile(r"visual (\w+) (\w+) should be"), None),  # a <visual> value (the rewrite drops <visual>)
)


def load_error(backend: str, path: str, exc: BaseException, loaded: str | None = None
               ) -> UnsupportedCapabilityError | EngineError:
    """The error for a failed ``load_model``: valid MJCF that MotrixSim's parser rejects is refused
    by the attribute (``<element>_<attribute>``); anything else is an ``EngineError`` quoting the
    engine. ``loaded``: the file the engine read when it was a rewritten copy of ``path`` (named so
    in the quote)."""
    text = str(exc.__cause__ or exc).strip()
    if loaded is not None and loaded != path:
        text = text.replace(loaded, f"{path} (as rewritten for MotrixSim, <include>s expanded)")
    first = text.splitlines()[0] if text else type(exc).__name__
    if "invalid link name: world" in text:  # a sensor on (or relative to) the world body: valid MJCF (mjlab's Go1)
        return UnsupportedCapabilityError(backend, "world_body_sensor", f"{path}: a sensor names the world body "
                                          f"(objname or refname \"world\"); {_ENGINE}'s loader rejects it. Engine "
                                          f"said: {first}")
    for pattern, tag in _PARSER_REJECTS:
        m = pattern.search(text)
        if m:
            u = use("attribute", tag or f"{m.group(1)}@{m.group(2)}", m.group(1) if tag else "", path)
            return unsupported_error(backend, u, f"{_ENGINE}'s MJCF parser rejects it. Engine said: {first}")
    m = re.search(r"unknown (?:variant|field) `([^`]+)`", text)
    what = f"unsupported MJCF element {m.group(1)!r}" if m else "the engine rejected the model"
    return EngineError(f"MotrixSim cannot load {path}: {what}. Engine said: {first}")


def warn_inertia(path: str, links: list, principal: list, m) -> None:
    """Warn (``MotrixModellingWarning``) when a body's mass or principal inertia differs from
    MuJoCo's compilation by more than 1e-3 relative: MotrixSim derives inertia from geoms its own
    way (gymnasium's humanoid: 0.135 rad off MuJoCo in 200 steps, 0.017 with MuJoCo's inertia made
    explicit). ``principal``: MotrixSim's principal moments per link (``None`` for a welded link)."""
    import numpy as np

    from ._mjcf import MotrixModellingWarning

    worst, where = 0.0, ""
    for i, (ln, mine) in enumerate(zip(links, principal)):
        if mine is None:
            continue
        ref = np.sort(m.body_inertia[i + 1])
        scale = max(float(ref.max()), 1e-12)
        rel = max(float(np.abs(np.sort(mine) - ref).max()) / scale,
                  abs(float(ln.mass) - float(m.body_mass[i + 1])) / max(float(m.body_mass[i + 1]), 1e-12))
        if rel > worst:
            worst, where = rel, f"body {ln.name!r}: mass {float(ln.mass):.4g} vs {float(m.body_mass[i + 1]):.4g}, " \
                f"principal inertia {np.round(np.sort(mine), 6).tolist()} vs {np.round(ref, 6).tolist()}"
    if worst > 1e-3:
        warnings.warn(f"{os.path.basename(path)}: MotrixSim's masses/inertias differ from MuJoCo's (largest, "
                      f"{worst:.0%} relative, {where}); MotrixSim derives inertia from geoms differently: give "
                      "explicit <inertial> elements", MotrixModellingWarning, stacklevel=4)
