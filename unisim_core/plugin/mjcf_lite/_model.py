"""The reader's output: :class:`LiteModel` tables, MuJoCo's collision filter over them, sensor widths."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from unisim_core.contract import quat as Q
from unisim_core.contract.model import ModelInfo

__all__ = ["LiteModel", "collision_candidates", "FRAME_AXES", "SENSOR_DIMS", "in_reference_frame"]

SENSOR_DIMS = {"jointpos": 1, "jointvel": 1, "framepos": 3, "framequat": 4, "framelinvel": 3, "frameangvel": 3,
               "gyro": 3, "velocimeter": 3, "accelerometer": 3, "magnetometer": 3, "actuatorpos": 1, "tendonpos": 1,
               "subtreecom": 3, "subtreelinvel": 3, "subtreeangmom": 3, "framexaxis": 3, "frameyaxis": 3,
               "framezaxis": 3}
#: The frame-axis sensors: the frame's x, y or z axis in the world (a column of its rotation matrix, unit).
FRAME_AXES = {"framexaxis": 0, "frameyaxis": 1, "framezaxis": 2}


def in_reference_frame(kind: str, pos: np.ndarray, quat: np.ndarray, ref_pos: np.ndarray,
                       ref_quat: np.ndarray) -> np.ndarray:
    """A frame sensor's value measured in a reference frame (``reftype``/``refname``), as MuJoCo's
    ``mj_sensorPos``: ``framepos`` the position relative to the reference in its axes, ``framequat`` the
    orientation relative to it, a frame axis in its axes. ``pos``/``quat``: the object's world frame ``(n, 3)``,
    ``(n, 4)`` (wxyz), ``ref_*`` the reference's."""
    if kind == "framepos":
        return Q.quat_apply_inverse(ref_quat, pos - ref_pos)
    if kind == "framequat":
        return Q.quat_mul(Q.quat_conjugate(ref_quat), quat)
    return Q.quat_apply_inverse(ref_quat, Q.quat_apply(quat, np.eye(3)[FRAME_AXES[kind]]))

def collision_candidates(body_parent, body_has_joint, geom_body, geom_contype, geom_conaffinity,
                         body_mocap=None) -> list[tuple[int, int]]:
    """Geom id pairs ``(i, j)``, ``i < j``, that MuJoCo's collision filter lets touch, before
    ``<pair>``/``<exclude>``: geoms on bodies welded together (no joint between them) never
    collide; ``contype``/``conaffinity`` bitmasks must match (``ct_a & ca_b or ct_b & ca_a``); a
    parent-child pair of bodies (neither welded to the world) is filtered. A mocap body (``body_mocap``,
    per body; default none) is its own weld, and geoms welded to the world or to a mocap body are
    static: two static geoms never collide. Arrays per body / geom."""
    mocap = [False] * len(body_parent) if body_mocap is None else [bool(x) for x in body_mocap]
    weld = list(range(len(body_parent)))
    for b in range(1, len(weld)):
        if not (body_has_joint[b] or mocap[b]):
            weld[b] = weld[int(body_parent[b])]
    out = []
    ct, ca, gb = [int(x) for x in geom_contype], [int(x) for x in geom_conaffinity], [int(x) for x in geom_body]
    for i in range(len(gb)):
        for j in range(i + 1, len(gb)):
            wi, wj = weld[gb[i]], weld[gb[j]]
            if wi == wj or not (ct[i] & ca[j] or ct[j] & ca[i]) or ((not wi or mocap[wi]) and (not wj or mocap[wj])):
                continue
            if wi and wj and (wi == weld[int(body_parent[wj])] or wj == weld[int(body_parent[wi])]):
                continue
            out.append((i, j))
    return out


@dataclass
class LiteModel:
    """Parsed tables; body 0 is the world, bodies are in depth-first (MuJoCo) order.

    Per-body lists (``nbody`` entries, world first): ``body_pos`` / ``body_quat`` the body frame in
    its parent's frame (m, wxyz), ``body_ipos`` / ``body_iquat`` the inertial frame in the body
    frame, ``body_inertia`` principal moments (kg·m²), ``body_joint`` the body's joint id or -1.
    Dict rows (keys listed on each field) hold joints, actuators, sensors, sites and geoms in
    document order; ids refer to rows of these lists. SI units, radians, unit wxyz quaternions.
    """

    gravity: np.ndarray  #: (3,) m/s², world frame (zero when ``<flag gravity="disable">``)
    timestep: float  #: ``<option timestep>``, s
    #: ``<option magnetic>``, the global magnetic flux (world frame, MuJoCo's default ``0 -0.5 0``)
    magnetic: np.ndarray = field(default_factory=lambda: np.array([0.0, -0.5, 0.0]))
    contact: bool = True  #: False when ``<flag contact="disable">``
    body_names: list = field(default_factory=lambda: ["world"])
    body_parent: list = field(default_factory=lambda: [0])
    body_pos: list = field(default_factory=lambda: [np.zeros(3)])
    body_quat: list = field(default_factory=lambda: [np.array([1.0, 0, 0, 0])])
    body_mass: list = field(default_factory=lambda: [0.0])
    body_ipos: list = field(default_factory=lambda: [np.zeros(3)])
    body_iquat: list = field(default_factory=lambda: [np.array([1.0, 0, 0, 0])])
    body_inertia: list = field(default_factory=lambda: [np.zeros(3)])
    #: MJCF ``gravcomp`` per body (0 without it; non-zero only when the caller accepts ``body_gravcomp``):
    #: MuJoCo adds the passive force ``-gravcomp * mass * gravity`` at the body's COM
    body_gravcomp: list = field(default_factory=lambda: [0.0])
    #: the body's first joint id, -1 for none (a body holds several only with ``accept={"multi_joint_body"}``:
    #: then its joints are the consecutive rows of ``joints`` whose ``body`` it is)
    body_joint: list = field(default_factory=lambda: [-1])
    #: whether the body is a mocap body (``mocap="true"``: a jointless world child the user poses, read only
    #: when the caller accepts ``"mocap"``)
    body_mocap: list = field(default_factory=lambda: [False])
    #: dicts ``name type body qposadr dofadr pos axis range damping armature frictionloss stiffness springref
    #: ref actuatorfrcrange actuatorgravcomp``: ``pos`` and unit ``axis`` in the body frame, ``range`` (2,) rad
    #: or m and ``actuatorfrcrange`` (2,) N or N·m (``±inf`` when unlimited; already folded into the actuator's
    #: ``forcerange``, which is the whole clamp unless an accepted ``actuatorgravcomp`` adds the joint's gravity
    #: compensation under it), ``actuatorgravcomp`` bool
    joints: list = field(default_factory=list)
    #: dicts ``name kind joint site tendon gear gear6 ctrlrange forcerange kp kv dampratio``: ``kind`` motor |
    #: position | velocity, ``joint`` a joint id (-1 for a site motor, read only when ``site_transmission`` is
    #: accepted: then ``site`` is its site id, else -1; -1 for an actuator on a fixed tendon, read only when
    #: ``tendon_transmission`` is accepted: then ``tendon`` is its row of :attr:`tendons`, else -1), ``gear6``
    #: MuJoCo's 6-vector gear (``gear`` its first value), ranges (2,); a ``<general>`` actuator read as a servo
    #: with its own ctrl coefficient (``general_actuator`` accepted: ``gain u - kp q - kv qd``) has ``gain``
    #: (``±inf`` when unlimited); a position actuator's ``dampratio`` (0 for none, read only when accepted) gave
    #: its ``kv`` as MuJoCo's compiler does (``_dampratio``)
    actuators: list = field(default_factory=list)
    #: dicts ``name type obj objtype cutoff``: ``obj`` a joint, site, body or actuator id as ``objtype`` says
    #: (joint | site | body | xbody | actuator; ``body`` frame sensors read the inertial frame, as MuJoCo);
    #: ``cutoff`` MuJoCo's clamp of a real-valued sensor's output to [-cutoff, cutoff] (0: none; a quaternion
    #: is never clamped). ``magnetometer`` (``magnetic`` in the site frame), ``actuatorpos`` (the actuator's
    #: length: gear * qpos of its joint, 0 for a site motor) and ``tendonpos`` (objtype ``tendon``, a row of
    #: :attr:`tendons`: its length, the engine's to compute), ``subtreecom``/``subtreelinvel`` (objtype
    #: ``subtree``, a body id: :mod:`unisim_core.contract.subtree`) only when accepted (``<type>_sensor``)
    sensors: list = field(default_factory=list)
    sites: list = field(default_factory=list)  #: dicts ``name body pos quat`` (in the body frame)
    #: ``<tendon>`` rows in file order, read when the caller accepts ``tendon_transmission``: dicts ``name type
    #: joints coef`` (``type`` fixed | spatial; a fixed tendon's joint ids and coefficients, its length ``sum coef
    #: q``; a spatial one's lists empty: its path through sites and wrapping geoms is the engine's)
    tendons: list = field(default_factory=list)
    #: dicts ``name type body size pos quat hfield friction solref solimp contype conaffinity``: ``size`` (3,)
    #: (a height field's is MuJoCo's ``(x half, y half, z / 4 + base / 2)``), ``pos``/``quat`` the geom in
    #: its body's frame (m, wxyz), ``hfield`` the row of :attr:`hfields` of a height-field geom (-1 otherwise)
    geoms: list = field(default_factory=list)
    #: ``<asset><hfield>`` rows, read when the caller accepts ``"hfield"`` (else empty, and a height-field
    #: geom is refused): dicts ``name nrow ncol size data``: ``size`` (4,) ``[x half, y half, max z, base
    #: depth]`` m, ``data`` ``(nrow, ncol)`` float64 in [0, 1] exactly as MuJoCo's ``hfield_data`` (row 0 at
    #: ``y = -size[1]``, column 0 at ``x = -size[0]``; a sample's height is ``data * size[2]`` above the geom)
    hfields: list = field(default_factory=list)
    keyframes: dict = field(default_factory=dict)  #: ``{name: (nq,) qpos}``
    #: ``<contact><pair geom1 geom2>`` as geom-name pairs and ``<exclude body1 body2>`` as body-name pairs
    contact_pairs: list = field(default_factory=list)
    contact_excludes: list = field(default_factory=list)
    nq: int = 0
    nv: int = 0
    #: the factor ``<compiler settotalmass>`` put on every body mass and inertia (1 without it)
    mass_scale: float = 1.0
    #: how many equality constraints and tendons of each accepted feature the file holds
    #: (``{"joint_equality": 2, "fixed_tendon": 1}``; ``"<feature>_inactive"`` for ``active="false"``
    #: equalities); the reader does not read them further
    constraints: dict = field(default_factory=dict)

    def collision_pairs(self) -> list[tuple[int, int]]:
        """Geom id pairs MuJoCo's collision filter would test (:func:`collision_candidates`, then
        ``<exclude>`` removes a body pair and ``<pair>`` adds one); ``[]`` when contacts are disabled.
        A backend without contacts refuses a scene for which this is not empty."""
        if not self.contact:
            return []
        G = self.geoms
        has_joint = np.array(self.body_joint) >= 0
        cand = collision_candidates(self.body_parent, has_joint, [g["body"] for g in G], [g["contype"] for g in G],
                                    [g["conaffinity"] for g in G], self.body_mocap)
        excluded = {frozenset(pair) for pair in self.contact_excludes}
        names = [g["name"] for g in G]
        pairs = {tuple(sorted((names.index(a), names.index(b)))) for a, b in self.contact_pairs}
        bn = self.body_names
        pairs |= {(i, j) for i, j in cand if frozenset((bn[G[i]["body"]], bn[G[j]["body"]])) not in excluded}
        return sorted(pairs)

    def body_frames0(self) -> tuple[np.ndarray, np.ndarray]:
        """Every body frame's world position ``(nbody, 3)`` (m) and orientation ``(nbody, 4)`` (wxyz) at ``qpos0``
        (each hinge and slide at its ``ref``: the bodies where the file puts them)."""
        pos, quat = np.zeros((len(self.body_names), 3)), np.tile([1.0, 0.0, 0.0, 0.0], (len(self.body_names), 1))
        for b in range(1, len(self.body_names)):
            p = self.body_parent[b]
            pos[b] = pos[p] + Q.quat_apply(quat[p], np.asarray(self.body_pos[b], dtype=np.float64))
            quat[b] = Q.quat_mul(quat[p], np.asarray(self.body_quat[b], dtype=np.float64))
        return pos, quat

    def frame_offset(self, objtype: str, obj: int) -> tuple[int, np.ndarray, np.ndarray]:
        """``(body, pos, quat)``: the body a sensor's frame object is fixed to and the frame's pose in
        that body's frame (m, wxyz). ``objtype``: ``"site"``, ``"geom"``, ``"body"`` (the inertial frame) or
        ``"xbody"`` (the body frame itself)."""
        if objtype in ("site", "geom"):
            s = (self.sites if objtype == "site" else self.geoms)[obj]
            return s["body"], s["pos"], s["quat"]
        if objtype == "body":
            return obj, self.body_ipos[obj], self.body_iquat[obj]
        return obj, np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0])

    def geom_pose_w(self, geom: int) -> tuple[np.ndarray, np.ndarray]:
        """``(pos (3,), quat (4,))``: world pose (m, wxyz) of a geom fixed to the world, i.e. on the world
        body or on bodies welded to it (no joint up the chain). ``ValueError`` for a geom on a moving body."""
        b = self.geoms[geom]["body"]
        pos, quat = self.geoms[geom]["pos"], self.geoms[geom]["quat"]
        while b != 0:
            if self.body_joint[b] >= 0:
                raise ValueError(f"geom {geom} ({self.geoms[geom]['name']!r}) is on body {self.body_names[b]!r}, "
                                 "which moves (a joint up its chain); only geoms fixed to the world have a fixed pose")
            pos, quat = self.body_pos[b] + Q.quat_apply(self.body_quat[b], pos), Q.quat_mul(self.body_quat[b], quat)
            b = self.body_parent[b]
        return np.asarray(pos, dtype=np.float64), np.asarray(quat, dtype=np.float64)

    def qpos0(self) -> np.ndarray:
        q = np.zeros(self.nq)
        for j in self.joints:
            if j["type"] == "free":
                b = j["body"]
                q[j["qposadr"]:j["qposadr"] + 7] = np.concatenate((self.body_pos[b], self.body_quat[b]))
            elif j["type"] == "ball":
                q[j["qposadr"]] = 1.0  # the identity quaternion
            else:
                q[j["qposadr"]] = j["ref"]  # MuJoCo: qpos0 of a hinge or slide is its ref
        return q

    def model_info(self) -> ModelInfo:
        J, A, G = self.joints, self.actuators, self.geoms
        col = lambda rows, key, width=None: np.array([r[key] for r in rows], dtype=np.float64).reshape(
            (len(rows),) + (() if width is None else (width,)))
        dof = lambda key: np.array([j[key] for j in J for _ in range({"free": 6, "ball": 3}.get(j["type"], 1))])
        return ModelInfo(
            nq=self.nq, nv=self.nv, body_names=self.body_names, body_parent=self.body_parent,
            body_mass=self.body_mass, body_ipos=np.reshape(self.body_ipos, (-1, 3)),
            body_inertia=np.reshape(self.body_inertia, (-1, 3)),
            joint_names=[j["name"] for j in J], joint_types=[j["type"] for j in J],
            joint_body=[j["body"] for j in J], joint_qposadr=[j["qposadr"] for j in J],
            joint_dofadr=[j["dofadr"] for j in J], joint_range=col(J, "range", 2),
            dof_damping=dof("damping").reshape(-1), dof_armature=dof("armature").reshape(-1),
            dof_frictionloss=dof("frictionloss").reshape(-1),
            actuator_names=[a["name"] for a in A], actuator_joint=[a["joint"] for a in A],
            actuator_ctrl_range=col(A, "ctrlrange", 2), actuator_kp=col(A, "kp"), actuator_kd=col(A, "kv"),
            sensor_names=[s["name"] for s in self.sensors],
            sensor_dims=[SENSOR_DIMS[s["type"]] for s in self.sensors],
            site_names=[s["name"] for s in self.sites], site_body=[s["body"] for s in self.sites],
            site_pos=np.reshape([s["pos"] for s in self.sites], (-1, 3)),
            joint_pos=col(J, "pos", 3), joint_axis=col(J, "axis", 3),
            geom_names=[g["name"] for g in G], geom_types=[g["type"] for g in G], geom_body=[g["body"] for g in G],
            geom_size=col(G, "size", 3), geom_friction=col(G, "friction", 3), geom_solref=col(G, "solref", 2),
            geom_solimp=col(G, "solimp", 5), geom_contype=[g["contype"] for g in G],
            geom_conaffinity=[g["conaffinity"] for g in G], gravity=self.gravity, qpos0=self.qpos0(),
            keyframes=self.keyframes,
            mocap_body_names=[n for n, mocap in zip(self.body_names, self.body_mocap) if mocap],
        )
