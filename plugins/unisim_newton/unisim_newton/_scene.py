"""From an MJCF file to a replicated Newton model, refusing what Newton's importer would lose.

The scene is read twice: by ``unisim_core.plugin.mjcf_lite`` (the contract's ``ModelInfo``, sensors and
keyframes, and the scene features outside its subset, refused by name) and by Newton's own MJCF
importer (``ModelBuilder.add_mjcf``, what the engine simulates). Every value UniSim relies on is
then compared between the two; a difference means the importer dropped or changed it, and the
scene is refused naming the feature rather than simulated as something else.
"""

from __future__ import annotations

import os
import re
import warnings
from dataclasses import dataclass

import mujoco
import newton
import numpy as np
import warp as wp
from newton.solvers import SolverMuJoCo

from unisim_core import LiteModel, UnsupportedCapabilityError
from unisim_core.contract import quat as Q
from unisim_core.contract.errors import InvalidInputError
from unisim_core.plugin.mjcf_lite import read_tree
from unisim_mjwarp import buffer_sizes

__all__ = ["ACCEPTED", "ENGINE_LIMITS", "Layout", "NewtonModellingWarning", "build_model", "build_solver",
           "check_engine_limits", "geom_maps", "scene_buffer_sizes"]

#: ``mjcf_lite`` optional features the importer and SolverMuJoCo simulate (each checked after the build: fixed
#: tendons and the actuators on them against MuJoCo's compile, ``_check_tendons``);
#: ``gravcomp``/``actuatorgravcomp`` reach MuJoCo Warp as its ``body_gravcomp``/``jnt_actgravcomp``
ACCEPTED = frozenset({"frictionloss", "multi_joint_body", "joint_stiffness", "joint_equality", "connect_equality",
                      "ball_joint", "magnetometer_sensor", "actuatorpos_sensor",
                      "weld_equality", "body_gravcomp", "joint_actuatorgravcomp", "hfield", "mocap", "dampratio",
                      "site_transmission", "fixed_tendon", "tendon_transmission", "general_actuator",
                      "spatial_tendon", "option_flag", "tendonpos_sensor", "subtreecom_sensor",
                      "subtreelinvel_sensor", "subtreeangmom_sensor", "framexaxis_sensor", "frameyaxis_sensor",
                      "framezaxis_sensor", "tendon_equality"})


_JOINT_TYPES = {"free": newton.JointType.FREE, "hinge": newton.JointType.REVOLUTE,
                "slide": newton.JointType.PRISMATIC, "ball": newton.JointType.BALL}
_RTOL = 1e-6  # float32 round trip of the importer
_FRAME_TOL = 1e-5  # absolute, for poses composed in float32 (m, rotation-matrix entries, inertia / its largest moment)


@dataclass(frozen=True)
class Layout:
    """Where the contract's quantities live in one Newton world (index arrays into its per-world blocks).

    ``q_src (nq,)``: Newton coordinate of each MuJoCo qpos column (free joints reordered xyzw -> wxyz);
    ``q_ref (nq,)``: each column's joint ``ref`` (MuJoCo's qpos is Newton's coordinate + ref);
    ``qd_src (nv,)``: Newton dof of each qvel column; ``body_src (nbody,)``: Newton body of each
    contract body (-1 for the world); ``free``: ``(qpos column, qvel column, contract body)`` of each free joint;
    ``ball``: ``(qpos column, qvel column)`` of each ball joint (Newton's angular velocity is in the parent's
    frame, MuJoCo's in the body's: rotated by the joint's quaternion); ``mocap``: the Newton joint (a fixed
    root, posed by its ``joint_X_p``) of each mocap body, in mocap id order;
    ``coords``, ``dofs``, ``joints``, ``bodies``, ``actuators``: per-world counts.
    """

    q_src: np.ndarray
    q_ref: np.ndarray
    qd_src: np.ndarray
    body_src: np.ndarray
    free: tuple[tuple[int, int, int], ...]
    ball: tuple[tuple[int, int], ...]
    mocap: tuple[int, ...]
    coords: int
    dofs: int
    joints: int
    bodies: int
    actuators: int


def _named(label: str, name: str) -> bool:
    """Whether the importer's path label (``model/.../name``) ends in ``name`` (which may hold ``/``; the
    importer writes a ``-`` as ``_``: newton's ``sanitize_name``)."""
    name = name.replace("-", "_")
    return label == name or label.endswith("/" + name)


def _refuse(feature: str, path: str, detail: str) -> UnsupportedCapabilityError:
    return UnsupportedCapabilityError("newton", feature, f"{path}: Newton's MJCF importer {detail}; the scene is "
                                      "refused rather than simulated without it")


def _check_close(feature: str, path: str, what: str, got, want, atol: float = 1e-7) -> None:
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape or not np.allclose(got, want, rtol=_RTOL, atol=atol):
        raise _refuse(feature, path, f"gives {what} {got.tolist()}, the file says {want.tolist()}")


def _scale_masses(b: newton.ModelBuilder, scale: float, bodies=None) -> None:
    """The mass and inertia of ``bodies`` (default: every body) times ``scale`` (and their inverses), in the
    builder."""
    for i in range(b.body_count) if bodies is None else bodies:
        b.body_mass[i] = b.body_mass[i] * scale
        b.body_inertia[i] = b.body_inertia[i] * scale
        b.body_inv_mass[i] = b.body_inv_mass[i] / scale
        b.body_inv_inertia[i] = b.body_inv_inertia[i] / scale


#: Relative difference of a body's mass within which the file's mass is written over the importer's.
MESH_MASS_RTOL = 1e-3


def _file_masses(b: newton.ModelBuilder, body_src: np.ndarray, lite: LiteModel) -> None:
    """Newton's importer computes a mesh's volume, so the mass of a body whose geoms are meshes, its own way:
    up to 4e-4 off MuJoCo's compile (google_robot, trossen_wxai, measured). A mass within
    :data:`MESH_MASS_RTOL` of the file's becomes the file's, its inertia scaled alike (same shape); a larger
    difference is left for the audit to refuse."""
    for i, want in zip(body_src[1:], np.asarray(lite.body_mass[1:], np.float64)):
        got = float(b.body_mass[i])
        if got > 0 and want > 0 and got != want and abs(got - want) <= MESH_MASS_RTOL * want:
            _scale_masses(b, float(want / got), [int(i)])  # a Python float: warp's mat33f * float


def _d6_slot(path: str, lite: LiteModel, joint: dict, names: list) -> int | None:
    """The axis of ``joint`` in the one D6 joint Newton's importer makes of a body with several
    hinge/slide joints (its slides first, then its hinges, each in file order, all anchored at one
    point: ``_anchor_at_hinges`` moves it to the hinges' ``pos``); ``None`` for a body's only joint. A
    body Newton would move otherwise than MuJoCo (a hinge before a slide, hinges about different
    points) is refused."""
    own = [j for j in lite.joints if j["body"] == joint["body"]]
    if len(own) == 1:
        return None
    kinds = [j["type"] for j in own]
    hinges = [j for j in own if j["type"] == "hinge"]
    if "hinge" in kinds and "slide" in kinds[kinds.index("hinge"):]:
        raise _refuse("multi_joint_body", path, f"orders the slide joints of body {names[joint['body']]!r} before "
                      f"its hinges (the file: {kinds})")
    if any(not np.allclose(h["pos"], hinges[0]["pos"]) for h in hinges):
        raise _refuse("multi_joint_body", path, f"turns every hinge of body {names[joint['body']]!r} about one "
                      f"point, the file about {[h['pos'].tolist() for h in hinges]}")
    ordered = [j for j in own if j["type"] == "slide"] + hinges
    return next(i for i, j in enumerate(ordered) if j is joint)


#: features of the file Newton's engine cannot honour -> why (the reader's refusal of them says so)
ENGINE_LIMITS = {"plugin": "SolverMuJoCo runs MuJoCo Warp, which has no engine plugins",
                 "plugin_actuator": "SolverMuJoCo runs MuJoCo Warp, which has no engine plugins"}


def check_engine_limits(path: str) -> None:
    """Refuse, before anything is read, what Newton's engine cannot run whatever the readers do:
    ``<option solver="PGS">`` (gymnasium's humanoids; MuJoCo Warp has CG and Newton only, and Newton's
    importer fails parsing the name as a number); ``<attach>`` of an ``<asset><model>`` (iit_softfoot:
    Newton 1.8's importer does not expand it and loads the bodies around it only)."""
    tree = read_tree(path)
    solver = next((o.get("solver") for o in reversed(list(tree.iter("option"))) if o.get("solver")), "")
    if solver.upper() not in ("", "CG", "NEWTON", "1", "2"):
        raise UnsupportedCapabilityError("newton", "option_solver", f"{path}: <option solver={solver!r}>: "
                                         "SolverMuJoCo runs MuJoCo Warp, which has the CG and Newton solvers only")
    attached = next((a.get("model") for a in tree.iter("attach")), None)
    if attached is not None:
        raise UnsupportedCapabilityError("newton", "model_asset", f"{path}: <attach model={attached!r}>: Newton "
                                         "1.8's MJCF importer does not expand attached models")


def _welded(lite: LiteModel, body: int) -> bool:
    """Whether ``body`` is the world or fixed to it (no joint on the path up)."""
    while body and lite.body_joint[body] < 0:
        body = lite.body_parent[body]
    return body == 0


def _anchor_at_hinges(b: newton.ModelBuilder, nj: int, own: list[dict]) -> None:
    """Move the anchor of Newton's D6 joint ``nj`` (the first of the body's joints ``own``, as the importer
    places it) to the hinges' ``pos``: its rotation then turns about the point MuJoCo's hinges turn
    about (a slide's ``pos`` moves nothing), and the body's pose at q = 0 is unchanged (``X_p`` and
    ``X_c`` move together)."""
    hinges = [j for j in own if j["type"] == "hinge"]
    shift = hinges[0]["pos"] - own[0]["pos"] if hinges else np.zeros(3)
    if not shift.any():
        return
    for frames in (b.joint_X_p, b.joint_X_c):  # X * T(R^T shift): the anchor moves by `shift` in the child frame
        p, q = np.asarray(frames[nj][:3], dtype=np.float64), np.asarray(frames[nj][3:], dtype=np.float64)
        child_q = np.asarray(b.joint_X_c[nj][3:], dtype=np.float64)
        local = Q.quat_apply_inverse(Q.quat_xyzw_to_wxyz(child_q), shift)  # the shift in the joint frame
        frames[nj] = wp.transform(p + Q.quat_apply(Q.quat_xyzw_to_wxyz(q), local), q)


def _template(path: str, lite: LiteModel) -> tuple[newton.ModelBuilder, Layout]:
    b = newton.ModelBuilder()
    SolverMuJoCo.register_custom_attributes(b)
    # a geom without `gap` has MuJoCo's gap 0, not Newton's rigid_gap 0.1 m: such contacts are detected
    # and inactive (no force) but take MuJoCo Warp's contact slots (the Go2 standing: 64 a world overflowed)
    b.rigid_gap = 0.0
    # ctrl_direct: every actuator keeps MuJoCo's own law (gain, bias, gear, clamps) in SolverMuJoCo.
    # mesh_maxhullvert=-1: MuJoCo collides a mesh as its whole convex hull unless the file sets maxhullvert;
    # Newton's default cuts the hull it hands MuJoCo to 64 vertices (pal_talos: docs/newton.md)
    b.add_mjcf(path, ctrl_direct=True, parse_visuals=False, mesh_maxhullvert=-1)
    b.gravity = lite.gravity  # <option gravity> (the importer reads only <flag gravity>): per world on replicate
    if lite.mass_scale != 1.0:  # <compiler settotalmass>, which the importer does not apply: MuJoCo's rule here
        _scale_masses(b, lite.mass_scale)
    # bodies and joints in file order (the importer names unnamed ones itself): a named one must keep its name
    names, labels = lite.body_names, list(b.body_label)
    if b.body_count != len(names) - 1 or any(n and not _named(lbl, n) for n, lbl in zip(names[1:], labels)):
        raise _refuse("body", path, f"gives bodies {labels}, the file has {names[1:]}")
    body_src = np.arange(-1, len(names) - 1, dtype=np.int64)
    _file_masses(b, body_src, lite)
    _check_close("body_mass", path, "body masses", [b.body_mass[i] for i in body_src[1:]], lite.body_mass[1:])
    # each body's tree joint (fixed or not): the first with it as child (the importer appends loop joints of
    # <connect>/<weld> equalities, with the same child, after the tree)
    joint_of = {}
    for i, c in enumerate(b.joint_child):
        joint_of.setdefault(int(c), i)
    q_src, qd_src, q_ref = np.zeros(lite.nq, np.int64), np.zeros(lite.nv, np.int64), np.zeros(lite.nq)
    free, ball = [], []
    for j in lite.joints:
        name, kind = j["name"], j["type"]
        nj = joint_of.get(int(body_src[j["body"]]))
        slot = _d6_slot(path, lite, j, names)
        if slot == 0 and nj is not None:
            _anchor_at_hinges(b, nj, [k for k in lite.joints if k["body"] == j["body"]])
        want = _JOINT_TYPES[kind] if slot is None else newton.JointType.D6
        if nj is None or b.joint_type[nj] != want or (name and slot is None and not _named(b.joint_label[nj], name)):
            raise _refuse(f"{kind}_joint", path, f"does not give joint {name!r} of body "
                          f"{names[j['body']]!r} as a {kind} joint")
        qs, ds, qa, da = b.joint_q_start[nj] + (slot or 0), b.joint_qd_start[nj] + (slot or 0), j["qposadr"], \
            j["dofadr"]
        if kind == "free":
            xform = np.asarray(b.joint_X_p[nj], dtype=np.float64)
            if not np.allclose(xform, [0, 0, 0, 0, 0, 0, 1]):
                raise _refuse("free_joint", path, f"anchors free joint {name!r} at {xform.tolist()} (not the world)")
            q_src[qa:qa + 7] = [qs, qs + 1, qs + 2, qs + 6, qs + 3, qs + 4, qs + 5]
            qd_src[da:da + 6] = np.arange(ds, ds + 6)
            free.append((qa, da, j["body"]))
            continue
        if kind == "ball":  # Newton: [x y z w], angular velocity in the parent's frame; MuJoCo: wxyz, body frame
            if not np.allclose(np.asarray(b.joint_X_c[nj][3:], dtype=np.float64), [0, 0, 0, 1]):
                raise _refuse("ball_joint", path, f"turns ball joint {name!r}'s frame in its body (SolverMuJoCo "
                              "conjugates its quaternion; not converted here)")
            if np.isfinite(j["range"]).all():
                raise _refuse("ball_joint", path, f"does not limit ball joint {name!r} (range {j['range'].tolist()}) "
                              "as MuJoCo's cone")
            if _welded(lite, lite.body_parent[j["body"]]):  # measured: a ball root under a static body
                raise UnsupportedCapabilityError("newton", "ball_joint", f"{path}: ball joint {name!r} turns a body "
                                                 "fixed to the world: MuJoCo Warp moves such a ball root otherwise "
                                                 "than MuJoCo (a pendulum: 0.015 rad/s apart after one 1 ms step, "
                                                 "SolverMuJoCo 0.11; on a moving parent they agree to 1e-6)")
            q_src[qa:qa + 4] = [qs + 3, qs, qs + 1, qs + 2]
            qd_src[da:da + 3] = np.arange(ds, ds + 3)
            ball.append((qa, da))
            for key, table in (("damping", b.joint_damping), ("armature", b.joint_armature),
                               ("frictionloss", b.joint_friction)):
                _check_close(key, path, f"ball joint {name!r} {key}", table[ds:ds + 3], [j[key]] * 3)
            continue
        q_src[qa], qd_src[da] = qs, ds
        # the importer measures a joint from its ref (its zero is the file's pose; MuJoCo's qpos0 is ref):
        # the contract's qpos is Newton's coordinate + ref, and so are its range and springref
        q_ref[qa] = ref = j["ref"]
        _check_close("joint_axis", path, f"joint {name!r} axis", b.joint_axis[ds], j["axis"])
        lo, hi = (np.clip(j["range"] - ref, -1e10, 1e10))
        _check_close("joint_range", path, f"joint {name!r} range", [b.joint_limit_lower[ds], b.joint_limit_upper[ds]],
                     [lo, hi])
        for feature, key, value in (("damping", "damping", b.joint_damping[ds]),
                                    ("armature", "armature", b.joint_armature[ds]),
                                    ("frictionloss", "frictionloss", b.joint_friction[ds]),
                                    ("joint_stiffness", "stiffness", b.joint_stiffness[ds]),
                                    ("joint_stiffness", "springref", b.joint_rest_q[qs] + ref)):  # per coordinate
            _check_close(feature, path, f"joint {name!r} {key}", value, j[key])
        frc = j["actuatorfrcrange"]
        if np.isfinite(frc).any():  # the importer keeps max |bound| as a symmetric effort limit (jnt_actfrcrange)
            effort = float(b.joint_effort_limit[ds])
            _check_close("joint_actuatorfrcrange", path, f"joint {name!r} actuatorfrcrange", [-effort, effort], frc)
    mocap = []
    for body in (i for i, is_mocap in enumerate(lite.body_mocap) if is_mocap):
        nj = joint_of.get(int(body_src[body]))  # the importer ignores mocap="true": a body fixed to the world
        if (nj is None or b.joint_type[nj] != newton.JointType.FIXED or b.joint_parent[nj] != -1
                or not np.allclose(np.asarray(b.joint_X_c[nj], dtype=np.float64), [0, 0, 0, 0, 0, 0, 1])):
            raise _refuse("mocap", path, f"does not fix mocap body {names[body]!r} to the world by a joint it can pose")
        mocap.append(nj)
    layout = Layout(q_src=q_src, q_ref=q_ref, qd_src=qd_src, body_src=body_src, free=tuple(free), ball=tuple(ball),
                    mocap=tuple(mocap),
                    coords=b.joint_coord_count, dofs=b.joint_dof_count, joints=b.joint_count, bodies=b.body_count,
                    actuators=len(lite.actuators))
    return b, layout


def _check_actuators(model: newton.Model, lite: LiteModel, layout: Layout, path: str) -> None:
    """Gear, ranges and PD gains of the importer's actuators (world 0's rows) against the file.

    ``mjcf_lite`` folds a joint's ``actuatorfrcrange`` into its one actuator's forcerange; the importer
    keeps it on the joint (its effort limit, ``jnt_actfrcrange`` in SolverMuJoCo, checked in
    ``_template``), so the engine's forcerange is compared after the same fold."""
    mj, A = model.mujoco, lite.actuators
    nu = len(A)
    if not nu:
        return
    gear6 = mj.actuator_gear.numpy()[:nu]
    _check_close("actuator_gear", path, "actuator gears", gear6, [a["gear6"] if a["site"] >= 0 else
                                                                  [a["gear"], *gear6[i, 1:]] for i, a in enumerate(A)])
    gear = gear6[:, 0]
    effort = model.joint_effort_limit.numpy()[:layout.dofs]
    for key, table, flag in (("ctrlrange", mj.actuator_ctrlrange, mj.actuator_ctrllimited),
                             ("forcerange", mj.actuator_forcerange, mj.actuator_forcelimited)):
        want = np.array([a[key] for a in A], dtype=np.float64)
        limited = np.isfinite(want).all(axis=1)
        has = (mj.actuator_has_ctrlrange if key == "ctrlrange" else mj.actuator_has_forcerange).numpy()[:nu]
        flags = flag.numpy()[:nu]  # 0 false, 1 true, 2 auto (limited when a range is given)
        got_limited = (flags == 1) | ((flags == 2) & (has != 0))
        got = np.where(got_limited[:, None], table.numpy()[:nu].astype(np.float64), [-np.inf, np.inf])
        for i, a in enumerate(A if key == "forcerange" else ()):
            if a["joint"] < 0:  # a site motor: no joint limit folded in
                continue
            joint = lite.joints[a["joint"]]
            if np.isfinite(joint["actuatorfrcrange"]).any() and gear[i] != 0:  # mjcf_lite's fold, on Newton's limit
                e = float(effort[layout.qd_src[joint["dofadr"]]])
                lo, hi = sorted(np.array([-e, e]) / gear[i])
                got[i] = [max(got[i, 0], lo), min(got[i, 1], hi)]
        got_limited = np.isfinite(got).all(axis=1)
        if (got_limited != limited).any():
            raise _refuse(f"actuator_{key}", path, f"limits actuators {got_limited.tolist()} by {key}, "
                          f"the file {limited.tolist()}")
        _check_close(f"actuator_{key}", path, f"actuator {key}s", got[limited], want[limited])
    gain, bias = mj.actuator_gainprm.numpy()[:nu], mj.actuator_biasprm.numpy()[:nu]
    kind = np.array([a["kind"] for a in A])
    kp = np.where(kind == "position", -bias[:, 1], 0.0)
    kv = np.where(kind == "motor", 0.0, -bias[:, 2])
    _check_close("actuator_gains", path, "actuator ctrl gains", gain[:, 0],  # a <general> servo's own "gain"
                 [a.get("gain", {"motor": 1.0, "position": a["kp"], "velocity": a["kv"]}[a["kind"]]) for a in A])
    _check_close("actuator_gains", path, "actuator kp", kp, [a["kp"] if a["kind"] == "position" else 0.0 for a in A])
    fixed = [i for i, a in enumerate(A) if not a["dampratio"]]  # a dampratio's kv is SolverMuJoCo's (_freeze_kv)
    _check_close("actuator_gains", path, "actuator kv", kv[fixed], [A[i]["kv"] if A[i]["kind"] != "motor" else 0.0
                                                                    for i in fixed])


def build_model(path: str, lite: LiteModel, num_envs: int, device: str) -> tuple[newton.Model, Layout]:
    """``num_envs`` copies of the scene in separate worlds on ``device``, and their layout. A model without a
    body (only world geoms: dm_control's lqr template) is refused: Newton's state holds no body arrays then."""
    if len(lite.body_names) == 1:
        raise UnsupportedCapabilityError("newton", "empty_model", f"{path}: the model has no body; a Newton state "
                                         "without bodies has no body arrays to simulate or read")
    template, layout = _template(path, lite)
    scene = newton.ModelBuilder()
    scene.replicate(template, num_envs)
    with warnings.catch_warnings():
        # Newton's own collision pipeline skips height field pairs; SolverMuJoCo runs MuJoCo Warp's, where
        # two height fields never collide either (MuJoCo has no hfield-hfield collider)
        warnings.filterwarnings("ignore", message="Heightfield-vs-heightfield collision is not supported")
        # skip_validation_inertia: Newton would raise principal moments below max(1e-6 * the largest, 1e-10)
        # by 1e-6 kg m^2 (gymnasium pusher's 1e-11 object: 1e5 times its inertia); MuJoCo keeps the file's
        model = scene.finalize(device=device, skip_validation_inertia=True)
    _check_close("gravity", path, "gravity", model.gravity.numpy()[0], lite.gravity)
    hinge_slide = [j for j in lite.joints if j["type"] in ("hinge", "slide")]
    if hinge_slide:  # (a model without dofs has no dof_ref)
        _check_close("joint_ref", path, "joint refs (SolverMuJoCo's offset from Newton's coordinates)",  # world 0
                     model.mujoco.dof_ref.numpy()[[layout.qd_src[j["dofadr"]] for j in hinge_slide]],
                     [j["ref"] for j in hinge_slide])
    _check_actuators(model, lite, layout, path)
    _check_gravcomp(model, lite, layout, path)
    _check_frames(model, lite, layout, path)
    return model, layout


def _check_frames(model: newton.Model, lite: LiteModel, layout: Layout, path: str) -> None:
    """World 0's body frames at the file's pose (forward kinematics of the importer's joints), each body's
    COM and inertia tensor, and each hinge's world anchor against ``mjcf_lite``'s: what ``<frame>``,
    ``<attach>``, ``<compiler>`` settings or a default class could make the importer place otherwise."""
    state = model.state()
    newton.eval_fk(model, model.joint_q, model.joint_qd, state)
    rows = layout.body_src[1:]
    body_q = state.body_q.numpy()[rows].astype(np.float64)
    pos, quat = lite.body_frames0()
    rot = Q.matrix_from_quat(quat)
    got_rot = Q.matrix_from_quat(Q.quat_xyzw_to_wxyz(body_q[:, 3:]))
    # float32 kinematics: 1e-5 m and 1e-5 in rotation-matrix entries
    _check_close("body", path, "body positions at the file's pose", body_q[:, :3], pos[1:], _FRAME_TOL)
    _check_close("body", path, "body orientations at the file's pose (rotation matrices)", got_rot, rot[1:], _FRAME_TOL)
    heavy = np.flatnonzero(np.asarray(lite.body_mass[1:]) > 0)  # a massless body's COM and inertia move nothing
    _check_close("body_ipos", path, "body COMs", model.body_com.numpy()[rows[heavy]],
                 np.reshape(lite.body_ipos, (-1, 3))[1:][heavy], _FRAME_TOL)
    iner = np.array([Q.matrix_from_quat(lite.body_iquat[1 + b]) @ np.diag(lite.body_inertia[1 + b])
                     @ Q.matrix_from_quat(lite.body_iquat[1 + b]).T for b in heavy]).reshape(-1, 3, 3)
    got = model.body_inertia.numpy()[rows[heavy]].astype(np.float64)
    scale = np.maximum(np.abs(iner).max(axis=(1, 2)), 1e-12)[:, None, None]
    # 1e-3 of the largest moment: the importer composes inertias from geoms with its own formulas (a capsule's
    # off-diagonal 2e-5 off in inverted_pendulum, wonik_allegro's finger boxes 4e-4), not a frame or a factor
    _check_close("body_inertia", path, "body inertia tensors (relative to their largest moment)", got / scale,
                 iner / scale, 1e-3)
    joint_of: dict[int, int] = {}
    for i, c in enumerate(model.joint_child.numpy()):  # each body's tree joint (loop joints come after)
        joint_of.setdefault(int(c), i)
    X_p, parents = model.joint_X_p.numpy().astype(np.float64), model.joint_parent.numpy()
    for j in (j for j in lite.joints if j["type"] in ("hinge", "ball")):
        nj = joint_of[int(layout.body_src[j["body"]])]
        parent = int(parents[nj])
        p_pos, p_rot = (np.zeros(3), np.eye(3)) if parent < 0 else (
            state.body_q.numpy()[parent, :3].astype(np.float64),
            Q.matrix_from_quat(Q.quat_xyzw_to_wxyz(state.body_q.numpy()[parent, 3:].astype(np.float64))))
        _check_close("joint_pos", path, f"joint {j['name']!r} anchor (world, at the file's pose)",
                     p_pos + p_rot @ X_p[nj, :3], pos[j["body"]] + rot[j["body"]] @ j["pos"], _FRAME_TOL)


def _check_gravcomp(model: newton.Model, lite: LiteModel, layout: Layout, path: str) -> None:
    """Each body's ``gravcomp`` and each joint's ``actuatorgravcomp`` (world 0's rows of the importer's
    ``mujoco`` attributes, which SolverMuJoCo hands MuJoCo Warp) against the file."""
    mj = model.mujoco
    _check_close("body_gravcomp", path, "body gravcomp", mj.gravcomp.numpy()[layout.body_src[1:]],
                 lite.body_gravcomp[1:])
    dofs = [int(layout.qd_src[j["dofadr"]]) for j in lite.joints]
    if dofs:  # (a model without joints has no jnt_actgravcomp)
        _check_close("joint_actuatorgravcomp", path, "joint actuatorgravcomp", mj.jnt_actgravcomp.numpy()[dofs],
                     [j["actuatorgravcomp"] for j in lite.joints])


def _check_constraints(solver: SolverMuJoCo, lite: LiteModel, path: str) -> None:
    """The active equality constraints and the tendons ``SolverMuJoCo`` compiled (its ``mj_model``,
    world 0) against the file's count (``lite.constraints``): one missing refuses the scene by name."""
    mj = solver.mj_model  # SolverMuJoCo adds inactive welds of its own (e.g. for bodies fixed to the world)
    kinds = {"equality": (int(np.sum(mj.eq_active0)), [k for k in lite.constraints if k.endswith("_equality")]),
             "tendon": (int(mj.ntendon), [k for k in lite.constraints if k.endswith("_tendon")])}
    for kind, (got, features) in kinds.items():
        want = sum(lite.constraints[k] for k in features)
        if got != want:
            raise _refuse(features[0] if features else f"{kind}", path,
                          f"gives {got} {kind} rows to SolverMuJoCo, the file has {want}")


#: MuJoCo's per-tendon values SolverMuJoCo must hand MuJoCo Warp as the file's compile has them
_TENDON_FIELDS = ("tendon_num", "tendon_limited", "tendon_range", "tendon_stiffness", "tendon_damping",
                  "tendon_frictionloss", "tendon_lengthspring", "tendon_armature", "tendon_margin", "tendon_solref_lim",
                  "tendon_solimp_lim", "tendon_solref_fri", "tendon_solimp_fri")


_WRAP_NAMES = {int(mujoco.mjtWrap.mjWRAP_JOINT): "joint", int(mujoco.mjtWrap.mjWRAP_SITE): "site",
               int(mujoco.mjtWrap.mjWRAP_SPHERE): "sphere", int(mujoco.mjtWrap.mjWRAP_CYLINDER): "cylinder",
               int(mujoco.mjtWrap.mjWRAP_PULLEY): "pulley"}


def _wrap_names(wraps: list[tuple]) -> list[str]:
    """:func:`_wraps` rows as ``"<kind> <contract dof or body>"``."""
    return [f"{_WRAP_NAMES[w[1]]} {w[2]}" for w in wraps]


def _wraps(m, body_of, dof_of) -> list[tuple]:
    """Each tendon wrap of MuJoCo model ``m`` in the contract's terms: ``(tendon, kind, object, values)`` with
    the joint's contract dof and coefficient, a site's contract body and position in it, a wrapping geom's body,
    type, size, position and side site (its body and position; none: -1), a pulley's divisor. ``body_of``/
    ``dof_of`` map ``m``'s body and joint ids to the contract's."""
    out = []
    for t in range(m.ntendon):
        for w in range(m.tendon_adr[t], m.tendon_adr[t] + m.tendon_num[t]):
            kind, obj, prm = int(m.wrap_type[w]), int(m.wrap_objid[w]), float(m.wrap_prm[w])
            if kind == mujoco.mjtWrap.mjWRAP_JOINT:
                out.append((t, kind, dof_of(obj), [prm]))
            elif kind == mujoco.mjtWrap.mjWRAP_SITE:
                out.append((t, kind, body_of(m.site_bodyid[obj]), list(m.site_pos[obj])))
            elif kind in (mujoco.mjtWrap.mjWRAP_SPHERE, mujoco.mjtWrap.mjWRAP_CYLINDER):
                side = int(prm)
                out.append((t, kind, body_of(m.geom_bodyid[obj]), [*m.geom_size[obj], *m.geom_pos[obj]] + (
                    [body_of(m.site_bodyid[side]), *m.site_pos[side]] if side >= 0 else [-1, 0.0, 0.0, 0.0])))
            else:  # a pulley: its divisor
                out.append((t, kind, -1, [prm]))
    return out


def _check_tendons(solver: SolverMuJoCo, lite: LiteModel, layout: Layout, path: str) -> None:
    """The tendons SolverMuJoCo compiled (world 0) against MuJoCo's compile of the file: each tendon's values
    (:data:`_TENDON_FIELDS`), each wrap in the contract's terms (:func:`_wraps`: joints as contract dofs with
    their coefficients, sites and wrapping geoms on the same bodies where the file puts them), and each
    actuator on a tendon driving that tendon. Newton 1.8's importer drops a wrap on an axis of a multi-joint
    body (its D6 joint): such a tendon is refused by name rather than simulated shorter."""
    mj = solver.mj_model
    if not mj.ntendon:
        return
    ref = mujoco.MjModel.from_xml_path(path)  # its bodies and joints are the contract's (file order)
    contract = {int(nb): cb for cb, nb in enumerate(layout.body_src) if nb >= 0}
    newton_body, newton_dof = solver.mjc_body_to_newton.numpy()[0], solver.mjc_jnt_to_newton_dof.numpy()[0]
    dof_src = {int(d): c for c, d in enumerate(layout.qd_src)}
    got = _wraps(mj, lambda b: contract.get(int(newton_body[b]), 0), lambda j: dof_src.get(int(newton_dof[j]), -1))
    want = _wraps(ref, int, lambda j: int(ref.jnt_dofadr[j]))
    for t in range(ref.ntendon):
        mine, theirs = [w for w in got if w[0] == t], [w for w in want if w[0] == t]
        if [w[1:3] for w in mine] != [w[1:3] for w in theirs] or not all(
                np.allclose(a[3], b[3], rtol=_RTOL, atol=_FRAME_TOL) for a, b in zip(mine, theirs)):
            kind = "fixed" if all(w[1] == mujoco.mjtWrap.mjWRAP_JOINT for w in theirs) else "spatial"
            raise _refuse(f"{kind}_tendon", path, f"gives tendon {ref.tendon(t).name or t!r} the wraps (kind, contract "
                          f"dof or body) {_wrap_names(mine)}, the file {_wrap_names(theirs)} (Newton 1.8's importer "
                          "keeps no wrapping geom of a spatial tendon and no joint axis of a multi-joint body)")
    for field in _TENDON_FIELDS:
        _check_close("fixed_tendon", path, field, getattr(mj, field), getattr(ref, field))
    for i, a in enumerate(lite.actuators):
        if a["tendon"] >= 0 and (mj.actuator_trntype[i] != mujoco.mjtTrn.mjTRN_TENDON
                                 or mj.actuator_trnid[i, 0] != a["tendon"]):
            raise _refuse("tendon_transmission", path, f"does not drive actuator {a['name']!r} on its tendon")


def _check_flags(solver: SolverMuJoCo, path: str) -> None:
    """MuJoCo's disable and enable flags as SolverMuJoCo hands them MuJoCo Warp (the importer reads the file's
    ``<option><flag>``) against MuJoCo's compile of the file."""
    got, want = solver.mj_model.opt, mujoco.MjModel.from_xml_path(path).opt
    for name, table in (("disable", mujoco.mjtDisableBit), ("enable", mujoco.mjtEnableBit)):
        differ = getattr(got, f"{name}flags") ^ getattr(want, f"{name}flags")
        if differ:
            bits = [n for n in dir(table) if n.startswith("mj") and int(getattr(table, n)) & differ]
            raise _refuse("option_flag", path, f"sets MuJoCo's {name} flags {bits} otherwise than the file")


def scene_buffer_sizes(path: str, keyframe: str | None) -> tuple[int, int]:
    """``(nconmax, njmax)`` per world for the scene, sized as ``unisim-mjwarp`` sizes them
    (``unisim_mjwarp.buffer_sizes``) from MuJoCo's compile of the file, at ``qpos0`` (the state
    ``SolverMuJoCo`` starts from; google_barkour_vb: 76 contacts there, none at its keyframe) and at the
    default keyframe, the larger of each: the model ``SolverMuJoCo`` hands MuJoCo Warp is compiled from
    the same file (Newton's defaults for a geom's margin only remove contacts)."""
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    sizes = [buffer_sizes(m, d)]
    key = -1 if keyframe is None else mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_KEY, keyframe)
    if key >= 0:
        mujoco.mj_resetDataKeyframe(m, d, key)
        sizes.append(buffer_sizes(m, d))
    return max(s[0] for s in sizes), max(s[1] for s in sizes)


def build_solver(model: newton.Model, path: str, lite: LiteModel | None = None,
                 buffers: tuple[int | None, int | None] = (None, None), layout: Layout | None = None) -> SolverMuJoCo:
    """``SolverMuJoCo`` over all worlds with ``buffers = (nconmax, njmax)`` per world (``None``: Newton's
    estimate); a model MuJoCo's compiler rejects is refused by feature, and so is one whose equality
    constraints or tendons (``lite.constraints``) did not all reach it, or whose mocap bodies
    (``layout.mocap``) it did not make MuJoCo mocap bodies. MuJoCo Warp's overflow warnings (a
    ``wp.printf`` per world and substep) are off: the backend raises ``EngineError`` instead."""
    solver = _solver(model, path, *buffers)
    solver.mjw_model.opt.warn_overflow = 0
    if lite is not None:
        _check_constraints(solver, lite, path)
        _freeze_kv(solver, model, lite, path)
    if lite is not None and layout is not None:
        _check_site_motors(solver, lite, layout, path)
        _check_tendons(solver, lite, layout, path)
        _check_flags(solver, path)
        _check_geoms(solver, lite, geom_maps(model, solver, lite, layout.body_src, 1)[1][0], path)
    if layout is not None and layout.mocap:
        # SolverMuJoCo makes a root fixed to the world a MuJoCo mocap body posed from the joint's X_p every step
        mjc_of = {int(nb): mb for mb, nb in enumerate(solver.mjc_body_to_newton.numpy()[0]) if nb >= 0}
        children = model.joint_child.numpy()
        if any(solver.mj_model.body_mocapid[mjc_of.get(int(children[j]), 0)] < 0 for j in layout.mocap):
            raise _refuse("mocap", path, "leaves a mocap body static in SolverMuJoCo")
    return solver


#: the size entries MuJoCo reads per primitive
_SIZE_WIDTH = {"sphere": 1, "capsule": 2, "cylinder": 2, "ellipsoid": 3, "box": 3}


def _check_geoms(solver: SolverMuJoCo, lite: LiteModel, mjgeom: np.ndarray, path: str) -> None:
    """Size and pose in its body of every primitive geom SolverMuJoCo collides (world 0, ``mjgeom``: the
    MuJoCo Warp geom of each of ``lite``'s, -1 where none) against ``mjcf_lite``'s (``fromto``, ``<frame>``,
    a fit to a mesh: the importer computes them itself)."""
    mj = solver.mj_model
    for g, k in enumerate(mjgeom):
        geom, width = lite.geoms[g], _SIZE_WIDTH.get(lite.geoms[g]["type"])
        if k < 0 or width is None:
            continue
        what = f"geom {geom['name'] or g!r}"
        _check_close("geom_size", path, f"{what} size", mj.geom_size[k][:width], geom["size"][:width], _FRAME_TOL)
        _check_close("geom_pos", path, f"{what} position in its body", mj.geom_pos[k], geom["pos"], _FRAME_TOL)
        # the orientation up to the primitive's symmetries: a capsule's or cylinder's axis up to its sign,
        # a box's or ellipsoid's axes each up to its sign (a sphere has none to compare)
        relative = np.abs(Q.matrix_from_quat(mj.geom_quat[k]).T @ Q.matrix_from_quat(geom["quat"]))
        got = relative[2, 2] if geom["type"] in ("capsule", "cylinder") else np.diag(relative)
        if geom["type"] != "sphere":
            _check_close("geom_quat", path, f"{what} axes in its body (|cos| with the file's)", got,
                         np.ones_like(got), _FRAME_TOL)


def _check_site_motors(solver: SolverMuJoCo, lite: LiteModel, layout: Layout, path: str) -> None:
    """Each site motor of the file drives, in SolverMuJoCo's model, a site transmission on the file's
    site: the same body and the same position in it (the gear was compared with the importer's)."""
    mj = solver.mj_model
    contract_of = {int(nb): cb for cb, nb in enumerate(layout.body_src) if nb >= 0}
    body_of_mj = solver.mjc_body_to_newton.numpy()[0]
    for i, a in enumerate(lite.actuators):
        if a["site"] < 0:
            continue
        want = lite.sites[a["site"]]
        site = int(mj.actuator_trnid[i, 0])
        body = contract_of.get(int(body_of_mj[mj.site_bodyid[site]]), -1)
        if (mj.actuator_trntype[i] != mujoco.mjtTrn.mjTRN_SITE or body != want["body"]
                or not np.allclose(mj.site_pos[site], want["pos"], atol=1e-6)):
            raise _refuse("site_transmission", path, f"does not drive actuator {a['name']!r} on site {want['name']!r}")


def _freeze_kv(solver: SolverMuJoCo, model: newton.Model, lite: LiteModel, path: str) -> None:
    """A ``dampratio`` actuator's kv as MuJoCo's compiler resolves it at ``qpos0`` (SolverMuJoCo compiles it
    that way) against ``mjcf_lite``'s (the same rule), then kept as Newton's explicit ``biasprm[2]``: Newton
    would resolve it again from the current inertia and kp after a model change, MuJoCo keeps the compiled
    one (a randomized mass or kp leaves kv as it was)."""
    A = lite.actuators
    ratio = [i for i, a in enumerate(A) if a["dampratio"]]
    if not ratio:
        return
    resolved = solver.mjw_model.actuator_biasprm.numpy()[:, ratio, 2]  # (worlds, k), -kv
    _check_close("dampratio", path, "dampratio kv", -resolved[0], [A[i]["kv"] for i in ratio])
    table = model.mujoco.actuator_biasprm
    rows = table.numpy()
    rows.reshape(resolved.shape[0], len(A), -1)[:, ratio, 2] = resolved
    table.assign(rows)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="set_const", category=DeprecationWarning)
        solver.notify_model_changed(newton.ModelFlags.ACTUATOR_PROPERTIES)


def _integrator(path: str) -> str:
    """The file's ``<option integrator>`` (the last one given), ``"euler"`` (MuJoCo's default) without one."""
    names = [o.get("integrator") for o in read_tree(path).iter("option") if o.get("integrator")]
    return names[-1].lower() if names else "euler"


class NewtonModellingWarning(UserWarning):
    """A value of the file that ``SolverMuJoCo`` simulates otherwise than MuJoCo (measured, docs/newton.md)."""


#: SolverMuJoCo's warning for each geom whose margin it zeroes (its workaround for MuJoCo Warp's CCD, newton #2106)
_MARGIN_ZEROED = re.compile(r"authored margin=([0-9.eE+-]+) zeroed")
#: SolverMuJoCo's warning when the initial state needs more room than an explicit nconmax/njmax gives
_BUFFER_RAISED = re.compile(r"Value for (nconmax|njmax) is changed from (\d+) to (\d+)")


def _solver(model: newton.Model, path: str, nconmax: int | None, njmax: int | None) -> SolverMuJoCo:
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            # newton[sim] pins mujoco(-warp) 3.17; UniSim runs 4.x (docs/newton.md)
            warnings.filterwarnings("ignore", message="MuJoCo dependency version mismatch")
            warnings.filterwarnings("ignore", message="set_const", category=DeprecationWarning)
            # enable_multiccd: MuJoCo 4 makes up to 4 contacts per convex pair (mjDSBL_MULTICCD clear) unless the
            # file disables it (an <option><flag> mjcf_lite refuses); Newton's default disables it
            # integrator: the file's, MuJoCo's Euler when it names none (SolverMuJoCo's own default is implicitfast)
            solver = SolverMuJoCo(model, separate_worlds=True, enable_multiccd=True, nconmax=nconmax, njmax=njmax,
                                  integrator=_integrator(path))
    except ValueError as exc:
        if "inertia must satisfy" in str(exc):  # principal inertias on the triangle edge (A + B = C): float32
            # rounding inside Newton breaks them for SolverMuJoCo's compiler
            raise UnsupportedCapabilityError("newton", "edge_inertia", f"{path}: {exc}".replace("\n", " ")) from None
        raise
    _report(caught, path)
    return solver


def _report(caught: list, path: str) -> None:
    """SolverMuJoCo's construction warnings, made the backend's: an explicit ``nconmax``/``njmax`` it
    raised is an error naming the option (never silently changed); its one warning per geom whose
    margin it zeroed becomes one ``NewtonModellingWarning`` for the scene; any other is re-issued."""
    margins = []
    for w in caught:
        text = str(w.message)
        raised, zeroed = _BUFFER_RAISED.search(text), _MARGIN_ZEROED.search(text)
        if raised:
            option, given, needed = raised.groups()
            raise InvalidInputError(f"{option}: expected at least {needed} for scene {path!r} (its initial state "
                                    f"uses {needed} per env), got {given}")
        if zeroed:
            margins.append(float(zeroed.group(1)))
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if margins:
        warnings.warn(f"{os.path.basename(path)}: SolverMuJoCo zeroes the margin of {len(margins)} geom(s) (largest "
                      f"{max(margins):g} m) for MuJoCo Warp's convex collision (newton #2106): their contacts start "
                      "at touch, MuJoCo's at the margin (docs/newton.md)", NewtonModellingWarning, stacklevel=5)


_MJ_GEOM_TYPES = {int(getattr(mujoco.mjtGeom, f"mjGEOM_{t.upper()}")): t
                  for t in ("plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh")}


def geom_maps(model: newton.Model, solver: SolverMuJoCo, lite: LiteModel, body_src: np.ndarray,
              n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(shape, mjgeom)``, each ``(num_envs, ngeom)``: each contract geom's Newton shape and MuJoCo Warp
    geom per world, -1 for a geom Newton's importer does not simulate. Per body, the importer keeps the
    geoms that collide in file order: those are matched in order when their number and types agree
    with SolverMuJoCo's geoms of the body, else by name (the importer's label ``.../<name>``)."""
    world = model.shape_world.numpy()
    site = (model.shape_flags.numpy() & int(newton.ShapeFlags.SITE)) != 0
    per_world = [np.flatnonzero((world == w) & ~site) for w in range(n)]
    mj_of_shape = {int(s): g for g, s in enumerate(solver.mjc_geom_to_newton_shape.numpy()[0]) if s >= 0}
    contract = {int(nb): cb for cb, nb in enumerate(body_src) if nb >= 0}
    shape_body = model.shape_body.numpy()
    local = np.full(len(lite.geoms), -1, dtype=np.int64)
    for b in range(len(lite.body_names)):
        mine = [g for g, geom in enumerate(lite.geoms) if geom["body"] == b and geom["contype"] | geom["conaffinity"]]
        theirs = [i for i, sh in enumerate(per_world[0]) if contract.get(int(shape_body[sh]), 0) == b]
        kinds = [_MJ_GEOM_TYPES.get(int(solver.mj_model.geom_type[mj_of_shape[int(per_world[0][i])]]))
                 if int(per_world[0][i]) in mj_of_shape else None for i in theirs]
        if kinds == [lite.geoms[g]["type"] for g in mine]:
            local[mine] = theirs
            continue
        for g in (g for g in mine if lite.geoms[g]["name"]):
            found = [i for i in theirs if _named(model.shape_label[per_world[0][i]], lite.geoms[g]["name"])]
            local[g] = found[0] if len(found) == 1 else -1
    shapes = np.stack(per_world)  # (n, shapes per world)
    shape = np.full((n, len(local)), -1, dtype=np.int64)
    shape[:, local >= 0] = shapes[:, local[local >= 0]]
    mj_all = {int(sh): g for row in solver.mjc_geom_to_newton_shape.numpy() for g, sh in enumerate(row) if sh >= 0}
    mjgeom = np.vectorize(lambda sh: mj_all.get(int(sh), -1), otypes=[np.int64])(shape) if shape.size else shape
    return np.where(mjgeom >= 0, shape, -1), mjgeom
