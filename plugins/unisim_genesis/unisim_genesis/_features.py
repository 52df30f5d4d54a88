"""MJCF features Genesis simulates as MuJoCo does, and the checks that refuse the rest before anything is built.

``mjcf_lite`` reads the file with :data:`ACCEPTED`; the checks here read MuJoCo's compile of it (the
reference) and refuse, naming the feature and Genesis' limit:

- ``joint_springref``: a joint spring whose ``springref`` is not its ``ref``: Genesis pulls a joint
  toward ``qpos0`` (its ``ref``), MuJoCo toward ``springref``;
- ``fixed_tendon``: a tendon that acts (a range, stiffness, damping, frictionloss, armature, an
  actuator, a sensor or an equality on it): Genesis has no tendons. A tendon that does none of these
  changes no motion in MuJoCo either (gymnasium's humanoid), so it is simulated as written;
- ``<kind>_equality_inactive``: an equality with ``active="false"``: Genesis' importer makes every
  equality active;
- ``ball_joint_limit``/``ball_joint_stiffness``: Genesis' importer drops both on a ball joint.

:func:`contact_options` maps the file's contact model onto Genesis' ``RigidOptions``, which Genesis'
importer leaves at Genesis' own defaults.
"""

from __future__ import annotations

import numpy as np

from unisim_core.contract.errors import UnsupportedCapabilityError

from ._lazy import genesis as gs

__all__ = ["ACCEPTED", "ENGINE_LIMITS", "check_model", "contact_options", "with_engine_reason"]

#: ``mjcf_lite`` optional features Genesis honours (the reader refuses the others by name).
ACCEPTED = frozenset({"frictionloss", "hfield", "multi_joint_body", "joint_stiffness", "joint_equality",
                      "connect_equality", "weld_equality", "fixed_tendon", "body_gravcomp", "dampratio", "mocap",
                      "ball_joint", "site_transmission", "actuatorpos_sensor", "magnetometer_sensor",
                      "general_actuator", "subtreecom_sensor", "subtreelinvel_sensor", "subtreeangmom_sensor",
                      "framexaxis_sensor",
                      "frameyaxis_sensor", "framezaxis_sensor"})


#: Features ``mjcf_lite`` refuses because Genesis has no counterpart: the refusal carries Genesis' reason.
ENGINE_LIMITS = {
    "spatial_tendon": "Genesis has no tendons",
    "fixed_tendon": "Genesis has no tendons",
    "tendon_transmission": "Genesis has no tendons to drive",
    "tendon_equality": "Genesis has no tendons to couple",
    "plugin": "Genesis runs no MuJoCo engine plugins",
    "plugin_actuator": "Genesis runs no MuJoCo engine plugins",
    "flex": "Genesis' rigid solver has no MuJoCo flex bodies",
    "joint_actuatorgravcomp": "Genesis has no gravity compensation (the backend applies MuJoCo's as wrenches at the "
                              "COMs), and its actuators clamp their own law only: nothing routes a joint's share "
                              "through an actuator's force range",
}


def with_engine_reason(exc: UnsupportedCapabilityError) -> UnsupportedCapabilityError:
    """``exc`` (a reader refusal) with Genesis' own reason appended where Genesis has no such feature."""
    reason = ENGINE_LIMITS.get(str(getattr(exc.capability, "value", exc.capability)))
    if reason is None:
        return exc
    return UnsupportedCapabilityError(exc.backend, exc.capability, f"{exc._detail}; {reason}")


def check_model(m, lite, path: str, name: str) -> None:
    """Refuse what Genesis would simulate differently from MuJoCo's compile ``m`` of ``path`` (see the module)."""
    import mujoco

    for j in lite.joints:
        if j["type"] == "ball" and (np.isfinite(j["range"]).all() or j["stiffness"]):
            what = "a range (a cone limit)" if np.isfinite(j["range"]).all() else "stiffness"
            raise UnsupportedCapabilityError(name, "ball_joint_limit" if "range" in what else "ball_joint_stiffness",
                                             f"{path}: ball joint {j['name']!r} has {what}; Genesis' importer "
                                             "drops the limit and the spring of a ball joint")
        if j["stiffness"] and j["springref"] != j["ref"]:
            raise UnsupportedCapabilityError(name, "joint_springref", f"{path}: joint {j['name']!r} has stiffness "
                                             f"{j['stiffness']:g} with springref {j['springref']:g} and ref "
                                             f"{j['ref']:g}; Genesis pulls a joint spring toward qpos0 (ref)")
    for key in lite.constraints:
        if key.endswith("_inactive"):
            raise UnsupportedCapabilityError(name, key, f"{path}: {lite.constraints[key]} equality constraint(s) "
                                             "with active=\"false\"; Genesis' importer makes every equality active")
    if m.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC and m.opt.noslip_iterations:
        raise UnsupportedCapabilityError(name, "noslip_elliptic", f"{path}: <option cone=\"elliptic\" "
                                         f"noslip_iterations={m.opt.noslip_iterations}>; Genesis' noslip solver "
                                         "runs with the pyramidal cone only")
    trn, obj = mujoco.mjtTrn, mujoco.mjtObj
    eq_tendon = m.eq_type == mujoco.mjtEq.mjEQ_TENDON
    for t in range(m.ntendon):
        acting = [what for what, on in (
            ("range", m.tendon_limited[t]), ("stiffness", m.tendon_stiffness[t].any()),
            ("damping", m.tendon_damping[t].any()), ("frictionloss", m.tendon_frictionloss[t]),
            ("armature", getattr(m, "tendon_armature", np.zeros(m.ntendon))[t]),
            ("an actuator", ((m.actuator_trntype == trn.mjTRN_TENDON) & (m.actuator_trnid[:, 0] == t)).any()),
            ("a sensor", ((m.sensor_objtype == obj.mjOBJ_TENDON) & (m.sensor_objid == t)).any()),
            ("an equality", (eq_tendon & ((m.eq_obj1id == t) | (m.eq_obj2id == t))).any()),
        ) if on]
        if acting:
            tendon = mujoco.mj_id2name(m, obj.mjOBJ_TENDON, t) or f"#{t}"
            raise UnsupportedCapabilityError(name, "fixed_tendon", f"{path}: tendon {tendon!r} has "
                                             f"{', '.join(acting)}; Genesis has no tendons (its importer drops them)")


def contact_options(m) -> dict:
    """``RigidOptions`` for the contact model of MuJoCo's compile ``m``: its friction cone and ``impratio``
    (Genesis' own default with the elliptic cone is 100, MuJoCo's 1), ``noslip_iterations``, torsional and
    rolling friction where a geom's ``condim`` uses them (4 and 6), and MuJoCo's convex contact problem."""
    import mujoco

    elliptic = m.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC
    condim = int(m.geom_condim.max()) if m.ngeom else 3
    return {"friction_cone": gs.friction_cone.elliptic if elliptic else gs.friction_cone.pyramidal,
            "impratio": float(m.opt.impratio), "noslip_iterations": int(m.opt.noslip_iterations),
            "enable_torsional_friction": condim >= 4, "enable_rolling_friction": condim >= 6,
            "contact_resolution": gs.contact_resolution.convex}
