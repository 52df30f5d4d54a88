"""A small MJCF subset parser (stdlib ``xml.etree`` + numpy), used by the fake backend.

Supported: ``<compiler angle eulerseq="xyz">``, ``<option timestep gravity>`` (+ ``<flag gravity>``),
``<default>`` classes (nested, ``class``/``childclass``), bodies (``pos``, ``quat``, ``euler``,
``axisangle``), ``<inertial pos quat mass diaginertia>``, one joint per body (``free``/``<freejoint>``,
``hinge``, ``slide``: ``pos axis range limited damping armature frictionloss``), sites, geoms
(table values only: ``name type size fromto friction solref solimp contype conaffinity``),
``<motor>`` (``gear``) and ``<position>`` (``kp kv``) actuators on joints (``ctrlrange``,
``forcerange``), sensors ``jointpos jointvel framepos framequat gyro velocimeter accelerometer``,
``<key qpos>``. Height-field/texture/material assets are accepted (no contacts are simulated).

Anything else that changes the model (``<include>``, meshes, tendons, equality constraints, ball
joints, other actuator or sensor types, inertia from geoms, ...) raises :class:`MjcfLiteError`
naming the element, so a scene is never silently simulated as something else.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np

from . import quat as Q
from .errors import InvalidInputError
from .model import ModelInfo

__all__ = ["MjcfLiteError", "LiteModel", "load_mjcf"]

SENSOR_DIMS = {"jointpos": 1, "jointvel": 1, "framepos": 3, "framequat": 4, "framelinvel": 3, "frameangvel": 3,
               "gyro": 3, "velocimeter": 3, "accelerometer": 3}
_TOP = {"compiler", "option", "size", "visual", "statistic", "default", "asset", "worldbody", "actuator",
        "sensor", "keyframe", "contact", "custom"}
_IGNORED_IN_BODY = {"light", "camera"}
_ASSETS_OK = {"hfield", "texture", "material"}
_GEOM_DEFAULTS = {"type": "sphere", "friction": "1 0.005 0.0001", "solref": "0.02 1",
                  "solimp": "0.9 0.95 0.001 0.5 2", "contype": "1", "conaffinity": "1"}


class MjcfLiteError(InvalidInputError):
    """The MJCF file uses something outside the reader's subset.

    ``feature`` names the unsupported scene feature (e.g. ``"frictionloss"``) where the file is
    valid MJCF that the subset does not model; ``None`` for malformed input.
    """

    def __init__(self, message: str, feature: str | None = None) -> None:
        super().__init__(message)
        self.feature = feature


def _vec(text: str | None, n: int | None, default, what: str) -> np.ndarray:
    if text is None:
        return np.array(default, dtype=np.float64)
    try:
        arr = np.array([float(x) for x in text.split()], dtype=np.float64)
    except ValueError:
        raise MjcfLiteError(f"{what}: expected numbers, got {text!r}") from None
    if n is not None and arr.size != n:
        raise MjcfLiteError(f"{what}: expected {n} numbers, got {text!r}")
    return arr


def _padded(given: np.ndarray, default: list) -> np.ndarray:
    out = np.array(default, dtype=np.float64)
    out[:min(len(given), len(out))] = given[:len(out)]
    return out


@dataclass
class LiteModel:
    """Parsed tables; body 0 is the world, bodies are in depth-first (MuJoCo) order."""

    gravity: np.ndarray
    timestep: float
    body_names: list = field(default_factory=lambda: ["world"])
    body_parent: list = field(default_factory=lambda: [0])
    body_pos: list = field(default_factory=lambda: [np.zeros(3)])
    body_quat: list = field(default_factory=lambda: [np.array([1.0, 0, 0, 0])])
    body_mass: list = field(default_factory=lambda: [0.0])
    body_ipos: list = field(default_factory=lambda: [np.zeros(3)])
    body_iquat: list = field(default_factory=lambda: [np.array([1.0, 0, 0, 0])])
    body_inertia: list = field(default_factory=lambda: [np.zeros(3)])
    body_joint: list = field(default_factory=lambda: [-1])
    joints: list = field(default_factory=list)  # dicts: name type body pos axis range damping ...
    actuators: list = field(default_factory=list)  # dicts: name kind joint gear ctrlrange forcerange kp kv
    sensors: list = field(default_factory=list)  # dicts: name type obj objtype
    sites: list = field(default_factory=list)  # dicts: name body pos quat
    geoms: list = field(default_factory=list)  # dicts: name type body size friction solref solimp ...
    keyframes: dict = field(default_factory=dict)
    nq: int = 0
    nv: int = 0

    def qpos0(self) -> np.ndarray:
        q = np.zeros(self.nq)
        for j in self.joints:
            if j["type"] == "free":
                b = j["body"]
                q[j["qposadr"]:j["qposadr"] + 7] = np.concatenate((self.body_pos[b], self.body_quat[b]))
        return q

    def model_info(self) -> ModelInfo:
        J, A, G = self.joints, self.actuators, self.geoms
        col = lambda rows, key, width=None: np.array([r[key] for r in rows], dtype=np.float64).reshape(
            (len(rows),) + (() if width is None else (width,)))
        dof = lambda key: np.array([j[key] for j in J for _ in range(6 if j["type"] == "free" else 1)])
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
            geom_names=[g["name"] for g in G], geom_types=[g["type"] for g in G], geom_body=[g["body"] for g in G],
            geom_size=col(G, "size", 3), geom_friction=col(G, "friction", 3), geom_solref=col(G, "solref", 2),
            geom_solimp=col(G, "solimp", 5), geom_contype=[g["contype"] for g in G],
            geom_conaffinity=[g["conaffinity"] for g in G], gravity=self.gravity, qpos0=self.qpos0(),
            keyframes=self.keyframes,
        )


class _Parser:
    def __init__(self, path: str):
        self.path = path
        try:
            self.root = ET.parse(path).getroot()
        except ET.ParseError as exc:
            raise MjcfLiteError(f"{path}: not well-formed XML: {exc}") from None
        if self.root.tag != "mujoco":
            raise MjcfLiteError(f"{path}: root element is <{self.root.tag}>, expected <mujoco>")
        self.angle = math.pi / 180.0  # MJCF default: degrees
        self.autolimits = True
        self.defaults: dict[str, dict[str, dict[str, str]]] = {"main": {}}

    def fail(self, elem: ET.Element, why: str = "is not supported by the fake backend's MJCF subset",
             feature: str | None = None):
        name = elem.get("name")
        return MjcfLiteError(f"{self.path}: <{elem.tag}{f' name={name!r}' if name else ''}> {why}", feature)

    # defaults -------------------------------------------------------------------------
    def _read_defaults(self, elem: ET.Element, inherited: dict) -> None:
        cls = elem.get("class", "main")
        table = {tag: dict(d) for tag, d in inherited.items()}
        for child in elem:
            if child.tag != "default":
                table.setdefault(child.tag, {}).update(child.attrib)
        self.defaults[cls] = table
        for child in elem:
            if child.tag == "default":
                self._read_defaults(child, table)

    def attrs(self, elem: ET.Element, childclass: str, tag: str | None = None) -> dict[str, str]:
        cls = elem.get("class", childclass)
        if cls not in self.defaults:
            raise self.fail(elem, f"uses unknown default class {cls!r}")
        out = dict(self.defaults[cls].get(tag or elem.tag, {}))
        out.update(elem.attrib)
        return out

    # orientation ----------------------------------------------------------------------
    def orient(self, a: dict, elem: ET.Element) -> np.ndarray:
        keys = [k for k in ("quat", "euler", "axisangle", "xyaxes", "zaxis") if k in a]
        if len(keys) > 1:
            raise self.fail(elem, f"specifies several orientations {keys}")
        if not keys:
            return np.array([1.0, 0.0, 0.0, 0.0])
        k = keys[0]
        if k == "quat":
            return Q.quat_normalize(_vec(a[k], 4, None, f"{elem.tag}.quat"))
        if k == "euler":
            e = _vec(a[k], 3, None, f"{elem.tag}.euler") * self.angle
            qs = [Q.quat_from_axis_angle(np.eye(3)[i], e[i]) for i in range(3)]
            return Q.quat_mul(Q.quat_mul(qs[0], qs[1]), qs[2])  # intrinsic x-y-z (MJCF default eulerseq)
        if k == "axisangle":
            v = _vec(a[k], 4, None, f"{elem.tag}.axisangle")
            return Q.quat_from_axis_angle(v[:3], v[3] * self.angle)
        raise self.fail(elem, f"uses orientation attribute {k!r}, which is not supported")

    # top level ------------------------------------------------------------------------
    def parse(self) -> LiteModel:
        root = self.root
        for elem in root:
            if elem.tag not in _TOP:
                raise self.fail(elem)
        for c in root.iter("compiler"):
            if c.get("angle", "degree") not in ("degree", "radian"):
                raise self.fail(c, f"has angle={c.get('angle')!r}, expected 'degree' or 'radian'")
            self.angle = 1.0 if c.get("angle") == "radian" else math.pi / 180.0
            if c.get("eulerseq", "xyz") != "xyz":
                raise self.fail(c, "sets eulerseq; only the default 'xyz' is supported")
            self.autolimits = c.get("autolimits", "true") == "true"
        gravity, timestep = np.array([0.0, 0.0, -9.81]), 0.002
        for o in root.findall("option"):
            gravity = _vec(o.get("gravity"), 3, gravity, "option.gravity")
            timestep = float(o.get("timestep", timestep))
            for flag in o:
                if flag.tag != "flag" or set(flag.attrib) - {"gravity", "contact"}:
                    raise self.fail(flag, "(option child/flag) is not supported; only flag gravity/contact")
                if flag.get("gravity") == "disable":
                    gravity = np.zeros(3)
        for d in root.findall("default"):
            self._read_defaults(d, self.defaults["main"])
        for asset in root.findall("asset"):
            for a in asset:
                if a.tag not in _ASSETS_OK:
                    raise self.fail(a, "(asset) is not supported: the fake backend has no meshes")
        m = LiteModel(gravity=gravity, timestep=timestep)
        for wb in root.findall("worldbody"):
            self._body_children(m, wb, 0, "main")
        for act in root.findall("actuator"):
            for a in act:
                self._actuator(m, a)
        for sens in root.findall("sensor"):
            for s in sens:
                self._sensor(m, s)
        for kf in root.findall("keyframe"):
            for key in kf:
                q = _vec(key.get("qpos"), m.nq, m.qpos0(), f"key {key.get('name')!r} qpos")
                m.keyframes[key.get("name", f"key{len(m.keyframes)}")] = q
        return m

    # bodies ---------------------------------------------------------------------------
    def _body_children(self, m: LiteModel, elem: ET.Element, b: int, childclass: str) -> None:
        for child in elem:
            tag = child.tag
            if tag == "body":
                self._body(m, child, b, child.get("childclass", childclass))
            elif tag == "geom":
                self._geom(m, child, b, childclass)
            elif tag == "site":
                a = self.attrs(child, childclass)
                m.sites.append({"name": a.get("name", ""), "body": b, "quat": self.orient(a, child),
                                "pos": _vec(a.get("pos"), 3, [0, 0, 0], "site.pos")})
            elif tag in ("joint", "freejoint", "inertial") and b != 0:
                continue  # handled by _body
            elif tag not in _IGNORED_IN_BODY:
                raise self.fail(child)

    def _body(self, m: LiteModel, elem: ET.Element, parent: int, childclass: str) -> None:
        b = len(m.body_names)
        a = self.attrs(elem, childclass)
        if "mocap" in a and a["mocap"] == "true":
            raise self.fail(elem, "is a mocap body; mocap is not supported by the fake backend")
        m.body_names.append(a.get("name", ""))
        m.body_parent.append(parent)
        m.body_pos.append(_vec(a.get("pos"), 3, [0, 0, 0], "body.pos"))
        m.body_quat.append(self.orient(a, elem))
        inertials = elem.findall("inertial")
        if inertials:
            ia = inertials[0].attrib
            if "fullinertia" in ia:
                raise self.fail(inertials[0], "uses fullinertia; give diaginertia (and quat)")
            m.body_mass.append(float(ia.get("mass", "0")))
            m.body_ipos.append(_vec(ia.get("pos"), 3, [0, 0, 0], "inertial.pos"))
            m.body_iquat.append(self.orient(ia, inertials[0]))
            m.body_inertia.append(_vec(ia.get("diaginertia"), 3, [0, 0, 0], "inertial.diaginertia"))
        else:
            for g in elem.findall("geom"):
                if float(self.attrs(g, childclass).get("mass", "-1")) != 0.0:
                    raise self.fail(elem, "has no <inertial> and a geom with mass: inertia from geoms is not "
                                          "supported, add an explicit <inertial>")
            m.body_mass.append(0.0)
            m.body_ipos.append(np.zeros(3))
            m.body_iquat.append(np.array([1.0, 0, 0, 0]))
            m.body_inertia.append(np.zeros(3))
        joints = [j for j in elem if j.tag in ("joint", "freejoint")]
        if len(joints) > 1:
            raise self.fail(elem, "has more than one joint; the fake backend supports one joint per body")
        m.body_joint.append(-1)
        if joints:
            self._joint(m, joints[0], b, childclass)
        self._body_children(m, elem, b, childclass)

    def _joint(self, m: LiteModel, elem: ET.Element, b: int, childclass: str) -> None:
        a = self.attrs(elem, childclass) if elem.tag == "joint" else dict(elem.attrib, type="free")
        jtype = a.get("type", "hinge")
        if jtype not in ("free", "hinge", "slide"):
            raise self.fail(elem, f"has type {jtype!r}; supported joint types: free, hinge, slide")
        if jtype == "free" and m.body_parent[b] != 0:
            raise self.fail(elem, "is a free joint on a non-root body (not supported)")
        for key in ("stiffness", "frictionloss"):
            if float(a.get(key, "0")) != 0.0:
                raise self.fail(elem, f"has {key}; joint {key} is not supported by this MJCF reader "
                                      f"(unisim_core.mjcf_lite: the fake backend, the Isaac Sim worker)", key)
        rng = _vec(a.get("range"), 2, [0, 0], "joint.range") * (self.angle if jtype == "hinge" else 1.0)
        limited = a.get("limited", "auto")
        limited = ("range" in a and self.autolimits) if limited == "auto" else limited == "true"
        axis = _vec(a.get("axis"), 3, [0, 0, 1], "joint.axis")
        m.body_joint[b] = len(m.joints)
        m.joints.append({
            "name": a.get("name", ""), "type": jtype, "body": b, "qposadr": m.nq, "dofadr": m.nv,
            "pos": _vec(a.get("pos"), 3, [0, 0, 0], "joint.pos"), "axis": axis / np.linalg.norm(axis),
            "range": rng if (limited and jtype != "free") else np.array([-np.inf, np.inf]),
            "damping": float(a.get("damping", "0")), "armature": float(a.get("armature", "0")),
            "frictionloss": float(a.get("frictionloss", "0")),
        })
        m.nq += 7 if jtype == "free" else 1
        m.nv += 6 if jtype == "free" else 1

    def _geom(self, m: LiteModel, elem: ET.Element, b: int, childclass: str) -> None:
        a = dict(_GEOM_DEFAULTS)
        a.update(self.attrs(elem, childclass))
        if a["type"] in ("mesh", "sdf"):
            raise self.fail(elem, f"is a {a['type']} geom; meshes are not supported by the fake backend")
        size = _padded(_vec(a.get("size"), None, [], "geom.size"), [0.0, 0.0, 0.0])
        if "fromto" in a:
            ft = _vec(a["fromto"], 6, None, "geom.fromto")
            size[1] = np.linalg.norm(ft[3:] - ft[:3]) / 2.0
        m.geoms.append({
            "name": a.get("name", ""), "type": a["type"], "body": b, "size": size,
            "friction": _padded(_vec(a["friction"], None, None, "geom.friction"), [1.0, 0.005, 0.0001]),
            "solref": _vec(a["solref"], 2, None, "geom.solref"), "solimp": _vec(a["solimp"], 5, None, "geom.solimp"),
            "contype": int(a["contype"]), "conaffinity": int(a["conaffinity"]),
        })

    def _actuator(self, m: LiteModel, elem: ET.Element) -> None:
        if elem.tag not in ("motor", "position", "velocity"):
            raise self.fail(elem, "is not supported; actuators: motor, position, velocity")
        a = self.attrs(elem, "main")
        joint = a.get("joint")
        if joint is None:
            raise self.fail(elem, "has no joint transmission; only joint actuators are supported")
        ids = [i for i, j in enumerate(m.joints) if j["name"] == joint]
        if not ids or m.joints[ids[0]]["type"] == "free":
            raise self.fail(elem, f"targets {joint!r}, which is not a hinge/slide joint of the model")

        def limit(key: str) -> np.ndarray:
            lim = a.get(f"{key}limited", "auto")
            on = (f"{key}range" in a and self.autolimits) if lim == "auto" else lim == "true"
            return _vec(a.get(f"{key}range"), 2, None, f"{key}range") if on else np.array([-np.inf, np.inf])

        pos, servo = elem.tag == "position", elem.tag in ("position", "velocity")
        m.actuators.append({
            "name": a.get("name", ""), "kind": elem.tag, "joint": ids[0],
            "gear": float(_vec(a.get("gear"), None, [1.0], "gear")[0]), "ctrlrange": limit("ctrl"),
            "forcerange": limit("force"), "kp": float(a.get("kp", "1")) if pos else 0.0,
            "kv": float(a.get("kv", "1" if elem.tag == "velocity" else "0")) if servo else 0.0,
        })

    def _sensor(self, m: LiteModel, elem: ET.Element) -> None:
        if elem.tag not in SENSOR_DIMS:
            raise self.fail(elem, f"is not supported; sensors: {', '.join(SENSOR_DIMS)}")
        a = elem.attrib
        if elem.tag in ("jointpos", "jointvel"):
            ids = [i for i, j in enumerate(m.joints) if j["name"] == a.get("joint") and j["type"] != "free"]
            objtype, names = "joint", []
        elif elem.tag.startswith("frame"):
            objtype = a.get("objtype")
            if objtype not in ("site", "body", "xbody"):
                raise self.fail(elem, f"has objtype {objtype!r}; supported: site, body, xbody")
            names = [s["name"] for s in m.sites] if objtype == "site" else m.body_names
            ids = [i for i, n in enumerate(names) if n == a.get("objname")]
        else:
            objtype, names = "site", [s["name"] for s in m.sites]
            ids = [i for i, n in enumerate(names) if n == a.get("site")]
        if not ids:
            raise self.fail(elem, "refers to an object that is not in the model (or is unsupported)")
        m.sensors.append({"name": a.get("name", ""), "type": elem.tag, "obj": ids[0], "objtype": objtype})


def load_mjcf(path: str) -> LiteModel:
    """Parse ``path`` into a :class:`LiteModel`; raises :class:`MjcfLiteError` outside the subset."""
    return _Parser(path).parse()
