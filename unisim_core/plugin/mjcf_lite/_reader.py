"""The reader: MJCF tree -> :class:`LiteModel` tables (see the package docstring for the subset)."""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from collections.abc import Collection

import numpy as np

from unisim_core.contract import quat as Q
from unisim_core.contract.errors import InvalidInputError
from unisim_core.contract.mjcf_tree import read_tree
from unisim_core.plugin.mjcf_features import TRANSMISSIONS, feature_name, normalize_key_quats
from unisim_core.plugin.mjcf_lite._attach import ATTACH_MARK, attached_key_qpos, expand_attachments
from unisim_core.plugin.mjcf_lite._dampratio import resolve_dampratio
from unisim_core.plugin.mjcf_lite._errors import MjcfLiteError
from unisim_core.plugin.mjcf_lite._fit import FITTED, fit_primitive
from unisim_core.plugin.mjcf_lite._frame import expand_frames
from unisim_core.plugin.mjcf_lite._hfield import hfield_data
from unisim_core.plugin.mjcf_lite._inertia import PRIMITIVES, combine, eig3, unit_inertia, z_to_quat
from unisim_core.plugin.mjcf_lite._mesh import MODES as MESH_MODES
from unisim_core.plugin.mjcf_lite._mesh import mesh_inertia, mesh_vertices, read_mesh
from unisim_core.plugin.mjcf_lite._model import SENSOR_DIMS, LiteModel

__all__ = ["load_mjcf", "OPTIONAL_FEATURES"]

#: Features the reader parses only when the caller models them (``load_mjcf(path, accept=...)``);
#: otherwise they raise :class:`MjcfLiteError` with that ``feature``.
OPTIONAL_FEATURES = frozenset({"frictionloss", "multi_joint_body", "joint_stiffness", "joint_equality",
                               "connect_equality", "weld_equality", "fixed_tendon", "body_gravcomp",
                               "joint_actuatorgravcomp", "hfield", "mocap", "dampratio", "site_transmission",
                               "magnetometer_sensor", "actuatorpos_sensor", "tendon_transmission", "general_actuator",
                               "spatial_tendon", "option_flag", "tendonpos_sensor", "subtreecom_sensor",
                               "subtreelinvel_sensor", "subtreeangmom_sensor", "framexaxis_sensor", "frameyaxis_sensor",
                               "framezaxis_sensor", "tendon_equality",
                               "ball_joint"})
#: Sensors read only when the caller evaluates them (``<tag>_sensor`` in ``accept``).
_GATED_SENSORS = ("magnetometer", "actuatorpos", "tendonpos", "subtreecom", "subtreelinvel", "subtreeangmom",
                  "framexaxis", "frameyaxis", "framezaxis")
#: Sections whose elements a caller that accepts them all simulates itself; the reader only counts them
#: (:attr:`LiteModel.constraints`): they change no layout (nq, nv, nu, sensors).
_COUNTED_SECTIONS = ("equality", "tendon")

_TOP = {"compiler", "option", "size", "visual", "statistic", "default", "asset", "worldbody", "actuator",
        "sensor", "keyframe", "contact", "custom"}
_IGNORED_IN_BODY = {"light", "camera"}
#: Sections the reader does not read that hold nothing when empty (``<equality/>``)
_EMPTY_OK = {"equality", "tendon", "deformable", "extension"}
_ASSETS_OK = {"hfield", "texture", "material", "mesh", "skin"}  # a skin (dm_control's dog) is drawn, not simulated
#: MuJoCo's ``<option><flag>`` attributes and their default values (MuJoCo 4's ``mjtDisableBit``: on by default;
#: ``mjtEnableBit``: off by default). A flag at its default changes nothing, so it is read on every backend.
_FLAG_DEFAULTS = {**dict.fromkeys(("actuation", "autoreset", "clampctrl", "constraint", "contact", "damper", "equality",
                                   "eulerdamp", "filterparent", "frictionloss", "gravity", "island", "limit",
                                   "midphase", "multiccd", "nativeccd", "refsafe", "sensor", "spring", "warmstart"),
                                  "enable"),
                  **dict.fromkeys(("diagexact", "energy", "fwdinv", "invdiscrete", "ipc", "override", "sleep",
                                   "speculative"), "disable")}
#: Flags that change only what MuJoCo computes beside the forward dynamics (energy, forward-inverse statistics,
#: discrete-time inverse dynamics, the reset on a bad state): read at any value on every backend.
_NEUTRAL_FLAGS = ("energy", "fwdinv", "invdiscrete", "autoreset")
#: ``<compiler>`` attributes that change masses or inertias; the reader refuses them by name
_MASS_COMPILER = ("boundmass", "boundinertia", "balanceinertia", "exactmeshinertia")
_GEOM_DEFAULTS = {"type": "sphere", "friction": "1 0.005 0.0001", "solref": "0.02 1",
                  "solimp": "0.9 0.95 0.001 0.5 2", "contype": "1", "conaffinity": "1"}


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


def _section_feature(elem: ET.Element) -> str:
    """The :mod:`unisim_core.plugin.mjcf_features` name of a top-level section the reader does not read
    (``<tendon><fixed>`` -> ``fixed_tendon``, ``<equality><weld>`` -> ``weld_equality``)."""
    first = next((c.tag for c in elem if isinstance(c.tag, str)), None)
    if elem.tag in ("tendon", "equality") and first:
        return feature_name(elem.tag, first)
    if elem.tag == "deformable" and first:
        return {"flexcomp": "flex"}.get(first, first)
    return {"extension": "plugin"}.get(elem.tag, elem.tag)


class _Parser:
    def __init__(self, path: str, accept: frozenset[str]):
        self.path = path
        self.accept = accept
        self.root = read_tree(path)
        self.angle = math.pi / 180.0  # MJCF default: degrees
        self.autolimits = True
        self.constraints_off: ET.Element | None = None  # the <flag constraint="disable"> element, if any
        self.eulerseq = "xyz"  # <compiler eulerseq>
        self.fromgeom = "auto"  # <compiler inertiafromgeom>
        self.groups = np.array([0.0, 5.0])  # <compiler inertiagrouprange>
        self.totalmass = -1.0  # <compiler settotalmass>: > 0 rescales every body's mass and inertia
        self.defaults: dict[str, dict[str, dict[str, str]]] = {"main": {}}
        self.meshdir = os.path.dirname(os.path.abspath(path))  # <compiler meshdir/assetdir>, from the main file
        self.meshes: dict[str, dict[str, str]] = {}  # <asset><mesh> attributes by name
        self.mesh_props: dict[str, tuple] = {}  # mesh name -> mesh_inertia() (or the reason it has none)
        self.mesh_verts: dict[str, np.ndarray] = {}  # mesh name -> its vertices (n, 3) in the mesh frame
        self.fitaabb = False  # <compiler fitaabb>: primitives fitted to a mesh's bounding box
        self.hfields: list[dict] = []  # <asset><hfield> rows (read only when the caller accepts "hfield")
        self.attached_keys: list[tuple] = []  # keys of <attach>ed models (_attach.expand_attachments)
        self.joint_marks: list[str | None] = []  # per joint: which <attach> it came from (None: the file's own)

    def fail(self, elem: ET.Element, why: str, feature: str | None):
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
            raise self.fail(elem, f"uses unknown default class {cls!r}", None)
        out = dict(self.defaults[cls].get(tag or elem.tag, {}))
        out.update(elem.attrib)
        return out

    # orientation ----------------------------------------------------------------------
    def orient(self, a: dict, elem: ET.Element) -> np.ndarray:
        keys = [k for k in ("quat", "euler", "axisangle", "xyaxes", "zaxis") if k in a]
        if len(keys) > 1:
            raise self.fail(elem, f"specifies several orientations {keys}", None)
        if not keys:
            return np.array([1.0, 0.0, 0.0, 0.0])
        k = keys[0]
        if k == "quat":
            return Q.quat_normalize(_vec(a[k], 4, None, f"{elem.tag}.quat"))
        if k == "euler":
            e = _vec(a[k], 3, None, f"{elem.tag}.euler") * self.angle
            q = np.array([1.0, 0.0, 0.0, 0.0])
            for axis, angle in zip(self.eulerseq, e):  # lower case: intrinsic (moving axes), upper: extrinsic
                r = Q.quat_from_axis_angle(np.eye(3)["xyz".index(axis.lower())], angle)
                q = Q.quat_mul(q, r) if axis.islower() else Q.quat_mul(r, q)
            return q
        if k == "axisangle":
            v = _vec(a[k], 4, None, f"{elem.tag}.axisangle")
            return Q.quat_from_axis_angle(v[:3], v[3] * self.angle)
        if k == "zaxis":
            return z_to_quat(_vec(a[k], 3, None, f"{elem.tag}.zaxis"))
        v = _vec(a[k], 6, None, f"{elem.tag}.xyaxes")
        x = v[:3] / np.linalg.norm(v[:3])
        y = v[3:] - x * (x @ v[3:])
        y /= np.linalg.norm(y)
        return Q.quat_from_matrix(np.column_stack((x, y, np.cross(x, y))))

    def read_compiler(self) -> None:
        """The ``<compiler>`` settings the reader honours (a later ``<compiler>`` overrides an earlier one)."""
        for c in self.root.iter("compiler"):
            if c.get("angle", "degree") not in ("degree", "radian"):
                raise self.fail(c, f"has angle={c.get('angle')!r}, expected 'degree' or 'radian'", None)
            self.angle = 1.0 if c.get("angle") == "radian" else math.pi / 180.0
            self.eulerseq = c.get("eulerseq", self.eulerseq)
            if len(self.eulerseq) != 3 or set(self.eulerseq.lower()) - set("xyz"):
                raise self.fail(c, f"has eulerseq={self.eulerseq!r}, expected 3 letters of xyzXYZ", None)
            self.autolimits = c.get("autolimits", "true") == "true"
            self.fromgeom = c.get("inertiafromgeom", self.fromgeom)
            if self.fromgeom not in ("auto", "true", "false"):
                raise self.fail(c, f"has inertiafromgeom={self.fromgeom!r}, expected auto, true or false", None)
            self.groups = _vec(c.get("inertiagrouprange"), 2, self.groups, "compiler.inertiagrouprange")
            folder = c.get("meshdir", c.get("assetdir"))
            if folder is not None:
                self.meshdir = os.path.join(os.path.dirname(os.path.abspath(self.path)), folder)
            self.totalmass = float(c.get("settotalmass", self.totalmass))
            self.fitaabb = c.get("fitaabb", str(self.fitaabb).lower()) == "true"
            for key in _MASS_COMPILER:
                if key in c.attrib and not (key == "exactmeshinertia" and c.get(key) == "false"):
                    raise self.fail(c, f"sets {key}; the reader does not rescale masses or inertias", f"compiler_{key}")

    # top level ------------------------------------------------------------------------
    def parse(self) -> LiteModel:
        root = self.root
        self.read_compiler()
        for d in root.findall("default"):
            self._read_defaults(d, self.defaults["main"])
        expand_attachments(self, root)
        counted: dict[str, int] = {}
        for elem in root:
            empty = not any(isinstance(c.tag, str) for c in elem)
            kids = [c for c in elem if isinstance(c.tag, str)]
            if elem.tag in _COUNTED_SECTIONS and kids and {feature_name(elem.tag, c.tag) for c in kids} <= self.accept:
                for c in kids:  # an equality with active="false" starts off: counted apart
                    key = feature_name(elem.tag, c.tag) + ("_inactive" if c.get("active") == "false" else "")
                    counted[key] = counted.get(key, 0) + 1
                continue
            if elem.tag == "deformable" and all(c.tag == "skin" for c in kids):
                continue  # skins are drawn, not simulated (mjcf_features.VISUAL_ELEMENTS)
            if elem.tag not in _TOP and not (empty and elem.tag in _EMPTY_OK):
                feature = _section_feature(elem)
                if elem.tag in _COUNTED_SECTIONS:  # the first element the caller did not accept
                    feature = next(f for f in (feature_name(elem.tag, c.tag) for c in kids) if f not in self.accept)
                raise self.fail(elem, f"is not supported (top-level elements: {', '.join(sorted(_TOP))})", feature)
        gravity, timestep, contact = np.array([0.0, 0.0, -9.81]), 0.002, True
        magnetic = np.array([0.0, -0.5, 0.0])
        for o in root.findall("option"):
            gravity = _vec(o.get("gravity"), 3, gravity, "option.gravity")
            magnetic = _vec(o.get("magnetic"), 3, magnetic, "option.magnetic")
            timestep = float(o.get("timestep", timestep))
            for flag in o:
                changed = {k for k, v in flag.attrib.items() if k not in ("gravity", "contact", "constraint",
                                                                          *_NEUTRAL_FLAGS)
                           and _FLAG_DEFAULTS.get(k) != v and "option_flag" not in self.accept}
                if flag.tag != "flag" or changed:
                    off = f" ({sorted(changed)} off their defaults)" if changed else ""
                    raise self.fail(flag, f"is not supported{off}; <option> children: <flag gravity contact> (other "
                                          "flags at MuJoCo's default)", f"option_{flag.tag}")
                if flag.get("gravity") == "disable":
                    gravity = np.zeros(3)
                contact = contact and flag.get("contact") != "disable"
                if flag.get("constraint") == "disable":  # no contact, limit, friction or equality acts
                    contact, self.constraints_off = False, flag
        for asset in root.findall("asset"):
            for a in asset:
                if a.tag not in _ASSETS_OK:
                    raise self.fail(a, f"(asset) is not supported; assets: {', '.join(sorted(_ASSETS_OK))}",
                                    f"{a.tag}_asset")
                if a.tag == "mesh":
                    ma = self.attrs(a, "main")
                    name = ma.get("name") or os.path.splitext(os.path.basename(ma.get("file", "")))[0]
                    self.meshes[name] = ma
                elif a.tag == "hfield" and "hfield" in self.accept:
                    self._hfield(a)
        m = LiteModel(gravity=gravity, timestep=timestep, contact=contact, constraints=counted, hfields=self.hfields,
                      magnetic=magnetic)
        for wb in root.findall("worldbody"):
            self._body_children(m, wb, 0, "main")
        self._check_constraints_off(m)
        self._check_actuatorgravcomp(m)
        if self.totalmass > 0:  # MuJoCo's compiler: one factor on every mass and inertia, after inertiafromgeom
            total = sum(m.body_mass[1:])
            if total <= 0:
                raise MjcfLiteError(f"{self.path}: <compiler settotalmass={self.totalmass:g}> on a model without "
                                    "mass")
            scale = self.totalmass / total
            m.body_mass = [x * scale for x in m.body_mass]
            m.body_inertia = [x * scale for x in m.body_inertia]
            m.mass_scale = scale
        m.geoms.sort(key=lambda g: g["body"])  # MuJoCo numbers geoms and sites body by body (stable)
        m.sites.sort(key=lambda x: x["body"])
        if {"tendon_transmission", "tendonpos_sensor"} & self.accept:
            m.tendons = self._tendons(root, m)
        for act in root.findall("actuator"):
            for a in act:
                self._actuator(m, a)
        resolve_dampratio(m)
        self._fold_actuatorfrcrange(m)
        for sens in root.findall("sensor"):
            for s in sens:
                self._sensor(m, s)
        attached = any(mark is not None for mark in self.joint_marks)
        keys = [(key, None) for kf in root.findall("keyframe") for key in kf] + [(None, a) for a in self.attached_keys]
        for key, graft in keys:
            name = key.get("name") if key is not None else graft[0]
            if not name:  # as MuJoCo's keyframe tables: an unnamed key has no name to ask for
                continue
            if attached:  # keys of a model with <attach>ed joints, as MuJoCo lays them out
                q = attached_key_qpos(self, key, graft, m.joints, self.joint_marks, m.qpos0())
            else:
                q = _vec(key.get("qpos"), m.nq, m.qpos0(), f"key {name!r} qpos")
            # MuJoCo normalises keyframe quaternions (a zero one becomes the identity)
            m.keyframes[name] = normalize_key_quats(q, [j["type"] for j in m.joints], [j["qposadr"] for j in m.joints])
        geoms, bodies = {g["name"] for g in m.geoms}, set(m.body_names)
        for c in root.findall("contact"):
            for e in c:
                keys, known = {"pair": (("geom1", "geom2"), geoms), "exclude": (("body1", "body2"), bodies)}.get(
                    e.tag, ((), set()))
                if not keys:
                    raise self.fail(e, "is not supported; <contact> children: pair, exclude", f"contact_{e.tag}")
                if not {e.get(k) for k in keys} <= known:
                    raise self.fail(e, f"refers to {keys[0][:-1]}s that are not in the model", None)
                (m.contact_pairs if e.tag == "pair" else m.contact_excludes).append(tuple(e.get(k) for k in keys))
        return m

    # bodies ---------------------------------------------------------------------------
    def _body_children(self, m: LiteModel, elem: ET.Element, b: int, childclass: str) -> None:
        expand_frames(self, elem, childclass)
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
                raise self.fail(child, "is not supported (in a body: body, joint, freejoint, inertial, geom, site, "
                                       "light, camera)", tag)

    def _body(self, m: LiteModel, elem: ET.Element, parent: int, childclass: str) -> None:
        expand_frames(self, elem, childclass)  # before its joints are read: a frame may hold some
        b = len(m.body_names)
        a = self.attrs(elem, childclass)
        mocap = a.get("mocap") == "true"
        if mocap and "mocap" not in self.accept:
            raise self.fail(elem, "has mocap=\"true\"; mocap bodies are read only when the backend poses them "
                                  "(accept \"mocap\", unisim_core.plugin.mjcf_lite.OPTIONAL_FEATURES)", "mocap")
        if mocap and (parent != 0 or any(j.tag in ("joint", "freejoint") for j in elem)):
            raise MjcfLiteError(f"{self.path}: mocap body {a.get('name', '')!r} is not a fixed child of the world "
                                "(MuJoCo's compiler refuses it)")
        gravcomp = float(_vec(a.get("gravcomp"), 1, [0.0], "body.gravcomp")[0])
        if gravcomp != 0.0 and "body_gravcomp" not in self.accept:
            raise self.fail(elem, f"has gravcomp={a['gravcomp']} (gravity compensation: a force -gravcomp m g at its "
                                  "COM); it is read only when the backend accepts it "
                                  "(unisim_core.plugin.mjcf_lite.OPTIONAL_FEATURES)", "body_gravcomp")
        m.body_names.append(a.get("name", ""))
        m.body_parent.append(parent)
        m.body_gravcomp.append(gravcomp)
        m.body_mocap.append(mocap)
        m.body_pos.append(_vec(a.get("pos"), 3, [0, 0, 0], "body.pos"))
        m.body_quat.append(self.orient(a, elem))
        inertials = elem.findall("inertial")
        from_geoms = self.fromgeom == "true" or (self.fromgeom == "auto" and not inertials)
        if inertials and not from_geoms:
            mass, ipos, iquat, inertia = self._inertial(inertials[0])
        else:
            mass, ipos, iquat, inertia = 0.0, np.zeros(3), np.array([1.0, 0, 0, 0]), np.zeros(3)
        m.body_mass.append(mass)
        m.body_ipos.append(ipos)
        m.body_iquat.append(iquat)
        m.body_inertia.append(inertia)
        joints = [j for j in elem if j.tag in ("joint", "freejoint")]
        if len(joints) > 1 and ("multi_joint_body" not in self.accept
                                or any(j.tag == "freejoint" or self.attrs(j, childclass).get("type") == "free"
                                       for j in joints)):
            raise self.fail(elem, "has more than one joint; several hinge/slide joints on one body are read only "
                                  "when the backend accepts them (unisim_core.plugin.mjcf_lite.OPTIONAL_FEATURES)",
                            "multi_joint_body")
        m.body_joint.append(-1)
        for j in joints:  # MuJoCo's order: each joint moves the body relative to the previous ones
            self._joint(m, j, b, childclass)
        first_geom = len(m.geoms)
        self._body_children(m, elem, b, childclass)
        if from_geoms:
            parts = []
            for g in m.geoms[first_geom:]:
                if g["body"] == b and g["inertia"] is not None:
                    if isinstance(g["inertia"], str):
                        raise self.fail(elem, f"takes its inertia from geoms and {g['inertia']}; add an explicit "
                                              "<inertial> (or mass=\"0\" on that geom)", "mesh_inertia")
                    parts.append(g["inertia"])
            if parts:
                mass, ipos, iquat, inertia = combine(parts)
                m.body_mass[b], m.body_ipos[b], m.body_iquat[b], m.body_inertia[b] = mass, ipos, iquat, inertia
        if m.body_mass[b] == 0.0 and (from_geoms or not inertials):
            # MuJoCo 4 (measured): a body without <inertial> given no mass by its geoms gets its own frame
            # (pos, quat in its parent) as its inertial frame
            m.body_ipos[b], m.body_iquat[b] = m.body_pos[b].copy(), m.body_quat[b].copy()

    def _inertial(self, elem: ET.Element) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        """``(mass, ipos, iquat, principal moments)`` of an explicit ``<inertial>``."""
        ia = elem.attrib
        mass, ipos, iquat = float(ia.get("mass", "0")), _vec(ia.get("pos"), 3, [0, 0, 0], "inertial.pos"), \
            self.orient(ia, elem)
        if "fullinertia" in ia:
            if "diaginertia" in ia:
                raise self.fail(elem, "has both fullinertia and diaginertia", None)
            f = _vec(ia["fullinertia"], 6, None, "inertial.fullinertia")
            ev, q = eig3(np.array([[f[0], f[3], f[4]], [f[3], f[1], f[5]], [f[4], f[5], f[2]]]))
            return mass, ipos, Q.quat_mul(iquat, q), ev
        return mass, ipos, iquat, _vec(ia.get("diaginertia"), 3, [0, 0, 0], "inertial.diaginertia")

    def _joint(self, m: LiteModel, elem: ET.Element, b: int, childclass: str) -> None:
        a = self.attrs(elem, childclass) if elem.tag == "joint" else dict(elem.attrib, type="free")
        jtype = a.get("type", "hinge")
        if jtype not in ("free", "hinge", "slide") and not (jtype == "ball" and "ball_joint" in self.accept):
            raise self.fail(elem, f"has type {jtype!r}; supported joint types: free, hinge, slide (ball when the "
                                  "backend accepts ball_joint)", f"{jtype}_joint")
        if jtype == "free" and m.body_parent[b] != 0:
            raise self.fail(elem, "is a free joint on a body that is not a world child (not supported)",
                            "nested_free_joint")
        for key, feature in (("stiffness", "joint_stiffness"), ("frictionloss", "frictionloss")):
            if float(a.get(key, "0")) != 0.0 and feature not in self.accept:
                raise self.fail(elem, f"has {key}={a[key]}; joint {key} is read only when the backend accepts it "
                                      f"(unisim_core.plugin.mjcf_lite.OPTIONAL_FEATURES)", feature)
        rng = _vec(a.get("range"), 2, [0, 0], "joint.range") * (self.angle if jtype in ("hinge", "ball") else 1.0)
        limited = a.get("limited", "auto")
        limited = ("range" in a and self.autolimits) if limited == "auto" else limited == "true"
        axis = _vec(a.get("axis"), 3, [0, 0, 1], "joint.axis")
        frc = a.get("actuatorfrclimited", "auto")
        frc = ("actuatorfrcrange" in a and self.autolimits) if frc == "auto" else frc == "true"
        if m.body_joint[b] < 0:
            m.body_joint[b] = len(m.joints)
        self.joint_marks.append(elem.get(ATTACH_MARK))
        m.joints.append({
            "name": a.get("name", ""), "type": jtype, "body": b, "qposadr": m.nq, "dofadr": m.nv,
            "pos": _vec(a.get("pos"), 3, [0, 0, 0], "joint.pos"), "axis": axis / np.linalg.norm(axis),
            "range": rng if (limited and jtype != "free") else np.array([-np.inf, np.inf]),
            "damping": float(a.get("damping", "0")), "armature": float(a.get("armature", "0")),
            "frictionloss": float(a.get("frictionloss", "0")), "stiffness": float(a.get("stiffness", "0")),
            "springref": float(a.get("springref", "0")) * (self.angle if jtype == "hinge" else 1.0),
            "ref": float(a.get("ref", "0")) * (self.angle if jtype == "hinge" else 1.0),
            "actuatorfrcrange": _vec(a.get("actuatorfrcrange"), 2, None, "joint.actuatorfrcrange") if frc
            else np.array([-np.inf, np.inf]),
            "actuatorgravcomp": a.get("actuatorgravcomp", "false") == "true",
        })
        m.nq += {"free": 7, "ball": 4}.get(jtype, 1)
        m.nv += {"free": 6, "ball": 3}.get(jtype, 1)

    def _check_actuatorgravcomp(self, m: LiteModel) -> None:
        """A joint with ``actuatorgravcomp="true"`` above a body with ``gravcomp`` (itself or a descendant)
        takes that compensation through its actuators, clamped with them by ``actuatorfrcrange``
        (MuJoCo's ``qfrc_actuator``; nothing at all without an actuator in the model): refused as
        ``joint_actuatorgravcomp`` unless accepted. Elsewhere the attribute changes nothing."""
        if "joint_actuatorgravcomp" in self.accept:
            return
        for j in m.joints:
            if j["actuatorgravcomp"] and any(m.body_gravcomp[c] != 0.0 and _below(m.body_parent, c, j["body"])
                                             for c in range(1, len(m.body_names))):
                raise MjcfLiteError(f"{self.path}: <joint name={j['name']!r}> has actuatorgravcomp=\"true\" above a "
                                    "body with gravcomp: the compensation goes through the actuators and their "
                                    "actuatorfrcrange clamp; it is read only when the backend accepts it "
                                    "(unisim_core.plugin.mjcf_lite.OPTIONAL_FEATURES)", "joint_actuatorgravcomp")

    def _hfield(self, elem: ET.Element) -> None:
        """One ``<asset><hfield>``: name (the file's stem when unnamed), ``size`` (4 positive numbers) and
        MuJoCo's normalized samples (:func:`~._hfield.hfield_data`)."""
        a = elem.attrib
        name = a.get("name") or os.path.splitext(os.path.basename(a.get("file", "")))[0]
        where = f"{self.path}: <hfield name={name!r}>"
        size = _vec(a.get("size"), 4, None, f"hfield {name!r} size") if "size" in a else None
        if size is None or not np.all(size > 0):
            raise MjcfLiteError(f"{where} needs size=\"x y z base\", 4 positive numbers (m), got {a.get('size')!r}")
        data = hfield_data(a, self.meshdir, where)
        self.hfields.append({"name": name, "nrow": data.shape[0], "ncol": data.shape[1], "size": size, "data": data})

    def _geom(self, m: LiteModel, elem: ET.Element, b: int, childclass: str) -> None:
        a = dict(_GEOM_DEFAULTS)
        a.update(self.attrs(elem, childclass))
        gtype = a["type"]
        if gtype == "sdf":
            raise self.fail(elem, "has type='sdf'; sdf geoms are not supported by this reader", "sdf")
        size = _padded(_vec(a.get("size"), None, [], "geom.size"), [0.0, 0.0, 0.0])
        hfield = -1
        if gtype == "hfield":
            if "hfield" not in self.accept:
                raise self.fail(elem, "is a height field; it is read only when the backend collides with it "
                                      "(accept \"hfield\", unisim_core.plugin.mjcf_lite.OPTIONAL_FEATURES)", "hfield")
            names = [h["name"] for h in self.hfields]
            if a.get("hfield") not in names:
                raise self.fail(elem, f"has hfield={a.get('hfield')!r}, which is not an <asset><hfield> of the model",
                                None)
            hfield = names.index(a["hfield"])
            hs = self.hfields[hfield]["size"]  # MuJoCo's geom_size of a height field
            size = np.array([hs[0], hs[1], 0.25 * hs[2] + 0.5 * hs[3]])
        pos, quat = _vec(a.get("pos"), 3, [0, 0, 0], "geom.pos"), self.orient(a, elem)
        if gtype != "mesh" and a.get("mesh"):
            size, pos, quat = self._fit(elem, a, gtype, size, pos, quat)
        elif "fromto" in a and gtype in ("capsule", "cylinder", "box", "ellipsoid"):
            ft = _vec(a["fromto"], 6, None, "geom.fromto")
            pos, quat = (ft[:3] + ft[3:]) / 2.0, z_to_quat(ft[:3] - ft[3:])
            if gtype in ("box", "ellipsoid"):  # MuJoCo: size[0] is both cross-section half sizes
                size[1] = size[0]
            size[1 if gtype in ("capsule", "cylinder") else 2] = np.linalg.norm(ft[3:] - ft[:3]) / 2.0
        m.geoms.append({
            "name": a.get("name", ""), "type": gtype, "body": b, "size": size, "pos": pos, "quat": quat,
            "hfield": hfield,
            "friction": _padded(_vec(a["friction"], None, None, "geom.friction"), [1.0, 0.005, 0.0001]),
            "solref": _padded(_vec(a["solref"], None, None, "geom.solref"), [0.02, 1.0]),
            "solimp": _padded(_vec(a["solimp"], None, None, "geom.solimp"), [0.9, 0.95, 0.001, 0.5, 2.0]),
            "contype": int(a["contype"]), "conaffinity": int(a["conaffinity"]),
            "inertia": self._geom_inertia(a, gtype, size, pos, quat),
        })

    def _geom_inertia(self, a: dict, gtype: str, size, pos, quat):
        """``(mass, pos, quat, moments)`` the geom adds to its body under ``inertiafromgeom``; ``None``
        when it adds nothing (outside ``inertiagrouprange``, zero mass or density, a plane); a string
        saying why when the reader cannot derive it (mesh geoms: MuJoCo integrates the mesh volume)."""
        group = int(a.get("group", "0"))
        if not self.groups[0] <= group <= self.groups[1] or gtype in ("plane", "hfield"):
            return None
        mass = float(a["mass"]) if "mass" in a else None
        density = float(a.get("density", "1000"))
        if mass == 0.0 or (mass is None and density == 0.0):
            return None
        shell = a.get("shellinertia", "false") == "true"
        if gtype == "mesh":
            props = self._mesh_props(a.get("mesh", ""), shell)
            if isinstance(props, str):
                return f"a mesh geom{' ' + repr(a['name']) if a.get('name') else ''} with mass: {props}"
            measure, mpos, mquat, moments = props  # MuJoCo's geom frame: the mesh's principal frame
            rho = density if mass is None else mass / measure
            return rho * measure, pos + Q.quat_apply(quat, mpos), Q.quat_mul(quat, mquat), rho * moments
        if gtype not in PRIMITIVES:
            return f"a {gtype} geom{' ' + repr(a['name']) if a.get('name') else ''} with mass"
        if shell and gtype == "ellipsoid":
            return "an ellipsoid geom with shellinertia (MuJoCo approximates its surface)"
        measure, moments = unit_inertia(gtype, size, shell)
        rho = density if mass is None else mass / measure
        return rho * measure, pos, quat, rho * moments

    def _fit(self, elem: ET.Element, a: dict, gtype: str, size, pos, quat):
        """``(size, pos, quat)`` of a primitive geom naming a mesh, as MuJoCo fits it (:mod:`._fit`)."""
        if gtype not in FITTED or "fromto" in a:
            raise self.fail(elem, f"is a {gtype} with mesh={a['mesh']!r}{' and fromto' if 'fromto' in a else ''}; "
                                  f"MuJoCo fits only {', '.join(sorted(FITTED))} geoms to a mesh, without fromto",
                            None)
        if a["mesh"] not in self.meshes:
            raise self.fail(elem, f"has mesh={a['mesh']!r}, which is not an <asset><mesh> of the model", None)
        props = self._mesh_props(a["mesh"], False)
        if isinstance(props, str):
            raise self.fail(elem, f"is a {gtype} fitted to mesh {a['mesh']!r}, whose fit is not derived: {props}",
                            "mesh_fitted_primitive")
        fsize, fpos, fquat = fit_primitive(gtype, size, self.mesh_verts[a["mesh"]], props, self.fitaabb,
                                           float(a.get("fitscale", "1")))
        if not np.all(fsize[:{"sphere": 1, "capsule": 2, "cylinder": 2}.get(gtype, 3)] > 0):
            raise self.fail(elem, f"is a {gtype} fitted to mesh {a['mesh']!r} with size {fsize.tolist()}; MuJoCo "
                                  "rejects a size that is not positive", None)
        return fsize, pos + Q.quat_apply(quat, fpos), Q.quat_mul(quat, fquat)

    def _mesh_props(self, name: str, shell: bool):
        """:func:`~._mesh.mesh_inertia` of mesh asset ``name`` in its ``inertia`` mode, or a string
        saying why it is not derived."""
        if name not in self.meshes:
            return f"mesh {name!r} is not an asset of the model"
        ma = self.meshes[name]
        mode = ma.get("inertia", "legacy")
        if shell:
            return "shellinertia on a mesh geom (MuJoCo takes <mesh inertia=\"shell\"> instead)"
        if mode not in MESH_MODES:
            return f"mesh {name!r} has inertia={mode!r} (derived: {', '.join(sorted(MESH_MODES))})"
        if name not in self.mesh_props:
            if "file" in ma:
                tris = read_mesh(os.path.join(self.meshdir, ma["file"]))
            elif "vertex" in ma and "face" in ma:
                verts = _vec(ma["vertex"], None, None, "mesh.vertex").reshape(-1, 3)
                tris = verts[_vec(ma["face"], None, None, "mesh.face").astype(np.int64).reshape(-1, 3)]
            else:
                return f"mesh {name!r} has no file and no vertex+face (MuJoCo takes the hull of the vertices)"
            frame = (_vec(ma.get("scale"), 3, [1, 1, 1], "mesh.scale"),
                     _vec(ma.get("refpos"), 3, [0, 0, 0], "mesh.refpos"),
                     _vec(ma.get("refquat"), 4, [1, 0, 0, 0], "mesh.refquat"))
            self.mesh_verts[name] = mesh_vertices(tris, *frame).reshape(-1, 3)
            try:
                self.mesh_props[name] = mesh_inertia(tris, mode, *frame)
            except ValueError as exc:
                raise MjcfLiteError(f"{self.path}: mesh {name!r}: {exc} is too small for inertia={mode!r} "
                                    "(MuJoCo rejects it)") from None
        return self.mesh_props[name]

    def _actuator(self, m: LiteModel, elem: ET.Element) -> None:
        if elem.tag not in ("motor", "position", "velocity", "general"):
            raise self.fail(elem, "is not supported; actuators: motor, position, velocity, general (as one of them)",
                            f"{elem.tag}_actuator")
        a = self.attrs(elem, "main")
        kind = elem.tag if elem.tag != "general" else self._general_kind(a, elem)
        extra = {}
        if elem.tag == "general":  # as the shortcut it equals (MuJoCo's own gain/bias of that shortcut)
            gain = _padded(_vec(a.get("gainprm"), None, [1.0], "gainprm"), [1.0, 0.0, 0.0])
            bias = _padded(_vec(a.get("biasprm"), None, [0.0], "biasprm"), [0.0, 0.0, 0.0])
            if kind == "general":  # gain u + bias1 q + bias2 qd: a servo with its own ctrl gain
                kind, extra = "position", {"gain": float(gain[0])}
                bias = bias if a.get("biastype") == "affine" else np.zeros(3)
                a = {**a, "kp": str(-bias[1]), "kv": str(-bias[2])}
            else:
                a = {**a, "kp": str(gain[0]), "kv": str(gain[0] if kind == "velocity" else -bias[2])}
        joint, site, tendon, ids = a.get("joint"), -1, -1, [-1]
        trn = next((t for t, attr in TRANSMISSIONS.items() if attr in a), None)
        if trn == "tendon" and "tendon_transmission" in self.accept:  # on a fixed tendon: its length
            tendons = [t["name"] for t in m.tendons]
            if a["tendon"] not in tendons:
                raise self.fail(elem, f"has tendon={a['tendon']!r}, which is not a tendon of the model", None)
            tendon = tendons.index(a["tendon"])
            if float(a.get("inheritrange", "0")) > 0:
                raise self.fail(elem, "has inheritrange on a tendon (the tendon's range is not read)",
                                "tendon_transmission")
        elif joint is None:  # a motor on a site (a wrench along gear in the site's frame) when accepted
            if trn != "site" or "site_transmission" not in self.accept or "refsite" in a or kind != "motor":
                raise self.fail(elem, f"has a {trn or 'missing'} transmission; only joint= actuators are supported "
                                      "(and site= motors without refsite when the backend accepts site_transmission)",
                                feature_name("transmission", trn) if trn else None)
            sites = [x["name"] for x in m.sites]
            if a["site"] not in sites:
                raise self.fail(elem, f"has site={a['site']!r}, which is not a site of the model", None)
            site = sites.index(a["site"])
        else:
            ids = [i for i, j in enumerate(m.joints) if j["name"] == joint]
            if not ids or m.joints[ids[0]]["type"] == "free":
                raise self.fail(elem, f"has joint={joint!r}, which is not a hinge/slide joint of the model", None)

        def limit(key: str) -> np.ndarray:
            lim = a.get(f"{key}limited", "auto")
            on = (f"{key}range" in a and self.autolimits) if lim == "auto" else lim == "true"
            return _vec(a.get(f"{key}range"), 2, None, f"{key}range") if on else np.array([-np.inf, np.inf])

        pos, servo = kind == "position", kind in ("position", "velocity")
        dampratio = float(a.get("dampratio", "0")) if pos else 0.0
        if dampratio != 0.0 and "dampratio" not in self.accept:
            raise self.fail(elem, f"has dampratio={a['dampratio']}; MuJoCo derives kv from the joint's effective "
                                  "inertia at qpos0 (read only when the backend accepts it: its engine resolves "
                                  "it as MuJoCo's compiler does)", "dampratio")
        if pos and float(a.get("timeconst", "0")) != 0.0:
            raise self.fail(elem, f"has timeconst={a['timeconst']} (first-order activation dynamics); only "
                                  "actuators without dynamics are read", "actuator_dynamics")
        ctrlrange = limit("ctrl")
        inherit = float(a.get("inheritrange", "0")) if pos else 0.0
        if inherit > 0:  # MuJoCo: the joint's range about its middle, scaled by inheritrange
            lo, hi = m.joints[ids[0]]["range"]
            if not np.isfinite([lo, hi]).all():
                raise self.fail(elem, f"has inheritrange={inherit:g} and its joint {joint!r} has no range", None)
            ctrlrange = (lo + hi) / 2 + np.array([-1.0, 1.0]) * inherit * (hi - lo) / 2
        gear = _padded(_vec(a.get("gear"), None, [1.0], "gear"), [1.0, 0.0, 0.0, 0.0, 0.0, 0.0])
        m.actuators.append({
            "name": a.get("name", ""), "kind": kind, "joint": ids[0], "site": site, "tendon": tendon, "gear6": gear,
            "gear": float(gear[0]), "ctrlrange": ctrlrange,
            "forcerange": limit("force"), "kp": float(a.get("kp", "1")) if pos else 0.0,
            "kv": float(a.get("kv", "1" if kind == "velocity" else "0")) if servo else 0.0,
            "dampratio": dampratio,  # kv from it once the model is read (resolve_dampratio)
            **extra,
        })

    def _check_constraints_off(self, m: LiteModel) -> None:
        """``<flag constraint="disable"/>`` (dm_control's acrobot, fish): read as contacts off when nothing else
        would constrain the model; with a joint limit, a frictionloss or an active equality MuJoCo would also
        drop, refused as ``option_flag`` (every backend would enforce them; a limited tendon is refused by the
        backends that read tendons as acting)."""
        if self.constraints_off is None or "option_flag" in self.accept:  # (an engine reading the flag itself)
            return
        kept = [f"joint {j['name']!r} range" for j in m.joints if np.isfinite(j["range"]).any()]
        kept += [f"joint {j['name']!r} frictionloss" for j in m.joints if j.get("frictionloss", 0.0)]
        kept += [f"{n} {k}" for k, n in m.constraints.items() if n and k.endswith("_equality")]
        if kept:
            raise self.fail(self.constraints_off, f"has constraint=\"disable\" beside constraints MuJoCo then drops: "
                                                  f"{', '.join(kept)}", "option_flag")

    def _tendons(self, root: ET.Element, m: LiteModel) -> list[dict]:
        """The ``<tendon>`` elements as dicts ``name type joints coef``: a ``<fixed>`` one's joint ids and their
        coefficients (MuJoCo's tendon length ``sum coef q``), a ``<spatial>`` one's empty (its path through sites
        and wrapping geoms is the engine's to follow); unnamed ones too (no actuator can name them)."""
        names = [j["name"] for j in m.joints]
        out = []
        for fixed in (f for section in root.findall("tendon") for f in section):
            joints, coef = [], []
            if fixed.tag == "spatial":  # its length runs through sites and wrapping geoms: the backend's to compute
                out.append({"name": fixed.get("name", ""), "type": "spatial", "joints": joints, "coef": coef})
                continue
            for j in fixed.findall("joint"):
                jid = names.index(j.get("joint")) if j.get("joint") in names else -1
                if jid < 0 or m.joints[jid]["type"] not in ("hinge", "slide"):
                    raise self.fail(fixed, f"has joint={j.get('joint')!r}, which is not a hinge/slide joint of the "
                                           "model", None)
                joints.append(jid)
                coef.append(float(j.get("coef", "0")))
            out.append({"name": fixed.get("name", ""), "type": "fixed", "joints": joints, "coef": coef})
        return out

    def _fold_actuatorfrcrange(self, m: LiteModel) -> None:
        """MuJoCo clamps the actuator force a joint receives to its ``actuatorfrcrange``; for a joint
        driven by one actuator of gear ``g`` that equals the actuator's ``forcerange`` intersected
        with ``actuatorfrcrange / g``, which is what the reader records. Several actuators on such a
        joint are refused as ``joint_actuatorfrcrange``."""
        for jid, j in enumerate(m.joints):
            lo, hi = j["actuatorfrcrange"]
            if lo == -np.inf and hi == np.inf:
                continue
            if any(jid in m.tendons[a["tendon"]]["joints"] for a in m.actuators if a.get("tendon", -1) >= 0):
                raise MjcfLiteError(f"{self.path}: <joint name={j['name']!r}> has actuatorfrcrange and a tendon "
                                    "actuator acts on it; the reader folds it into the forcerange of a joint's only "
                                    "actuator", "joint_actuatorfrcrange")
            acts = [a for a in m.actuators if a["joint"] == jid]
            if len(acts) > 1:
                raise MjcfLiteError(f"{self.path}: <joint name={j['name']!r}> has actuatorfrcrange and "
                                    f"{len(acts)} actuators; the reader folds it into the forcerange of a "
                                    "joint's only actuator", "joint_actuatorfrcrange")
            if acts and acts[0]["gear"] != 0:
                act = acts[0]
                g_lo, g_hi = sorted(np.array([lo, hi]) / act["gear"])
                act["forcerange"] = np.array([max(act["forcerange"][0], g_lo), min(act["forcerange"][1], g_hi)])

    def _general_kind(self, a: dict, elem: ET.Element) -> str:
        """The shortcut a ``<general>`` actuator equals: ``motor`` (gain 1, no bias), ``position`` (gain
        kp, bias ``0 -kp -kv``) or ``velocity`` (gain kv, bias ``0 0 -kv``); when the caller accepts
        ``general_actuator``, ``general`` for any other fixed gain with no or an affine bias without offset
        (``gain u - kp q - kv qd``: read as a position servo with its own ``gain``); anything else is refused."""
        gain = _padded(_vec(a.get("gainprm"), None, [1.0], "gainprm"), [1.0] + [0.0] * 9)
        bias = _padded(_vec(a.get("biasprm"), None, [0.0], "biasprm"), [0.0] * 10)
        dyn, gtype, btype = a.get("dyntype", "none"), a.get("gaintype", "fixed"), a.get("biastype", "none")
        if dyn == "none" and gtype == "fixed" and not gain[1:].any() and not bias[3:].any():
            if btype == "none" and gain[0] == 1.0:
                return "motor"
            if btype == "affine" and bias[0] == 0.0 and bias[1] == -gain[0] and gain[0] > 0:
                return "position"
            if btype == "affine" and bias[0] == 0.0 and bias[1] == 0.0 and bias[2] == -gain[0] and gain[0] > 0:
                return "velocity"
            if (btype == "none" or btype == "affine" and bias[0] == 0.0) and "general_actuator" in self.accept:
                return "general"
        raise self.fail(elem, f"(dyntype={dyn!r} gaintype={gtype!r} biastype={btype!r} gainprm={gain[:3].tolist()} "
                              f"biasprm={bias[:3].tolist()}) is not a motor, position or velocity actuator",
                        "general_actuator")

    def _sensor(self, m: LiteModel, elem: ET.Element) -> None:
        if elem.tag not in SENSOR_DIMS or (elem.tag in _GATED_SENSORS and f"{elem.tag}_sensor" not in self.accept):
            raise self.fail(elem, f"is not supported; sensors: {', '.join(SENSOR_DIMS)} ({', '.join(_GATED_SENSORS)} "
                                  "when the backend accepts them)", f"{elem.tag}_sensor")
        a, extra = elem.attrib, {}
        if elem.tag == "actuatorpos":
            objtype, names = "actuator", [x["name"] for x in m.actuators]
            ids = [i for i, n in enumerate(names) if n == a.get("actuator")]
        elif elem.tag == "tendonpos":
            objtype, names = "tendon", [t["name"] for t in m.tendons]
            ids = [i for i, n in enumerate(names) if n == a.get("tendon")]
        elif elem.tag in ("jointpos", "jointvel"):
            ids = [i for i, j in enumerate(m.joints) if j["name"] == a.get("joint") and j["type"] != "free"]
            objtype, names = "joint", []
        elif elem.tag in ("subtreecom", "subtreelinvel", "subtreeangmom"):
            objtype, names = "subtree", m.body_names
            ids = [i for i, n in enumerate(names) if n == a.get("body")]
        elif elem.tag.startswith("frame"):
            objtype = a.get("objtype")
            if objtype not in ("site", "body", "xbody", "geom"):
                raise self.fail(elem, f"has objtype={objtype!r}; supported: site, body, xbody, geom",
                                "frame_sensor_objtype")
            ids = [i for i, n in enumerate(self._frame_names(m, objtype)) if n == a.get("objname")]
            if a.get("reftype") or a.get("refname"):  # measured in another frame (MuJoCo's mj_sensorPos)
                reftype = a.get("reftype")
                if elem.tag in ("framelinvel", "frameangvel") or reftype not in ("site", "body", "xbody", "geom"):
                    raise self.fail(elem, f"is measured in the frame of {reftype} {a.get('refname')!r}; the reader "
                                          "evaluates position, orientation and axis sensors in a site, body, xbody or "
                                          "geom frame", "frame_sensor_reftype")
                refs = [i for i, n in enumerate(self._frame_names(m, reftype)) if n == a.get("refname")]
                if not refs:
                    raise self.fail(elem, f"has refname={a.get('refname')!r}, not a {reftype} of the model", None)
                extra = {"reftype": reftype, "ref": refs[0]}
        else:
            objtype, names = "site", [s["name"] for s in m.sites]
            ids = [i for i, n in enumerate(names) if n == a.get("site")]
        if not ids:
            raise self.fail(elem, "refers to an object that is not in the model (or is unsupported)", None)
        m.sensors.append({"name": a.get("name", ""), "type": elem.tag, "obj": ids[0], "objtype": objtype,
                          "cutoff": float(a.get("cutoff", "0")), **extra})

    @staticmethod
    def _frame_names(m: LiteModel, objtype: str) -> list[str]:
        """The names of a frame sensor's objects of ``objtype`` (site, geom, body or xbody), by id."""
        return {"site": [s["name"] for s in m.sites], "geom": [g["name"] for g in m.geoms]}.get(objtype, m.body_names)


def _below(parent: list, b: int, top: int) -> bool:
    """Whether body ``b`` is ``top`` or one of its descendants."""
    while b != top and b != 0:
        b = int(parent[b])
    return b == top


def load_mjcf(path: str | os.PathLike, *, accept: Collection[str] = ()) -> LiteModel:
    """Parse the MJCF file ``path`` into a :class:`LiteModel`.

    ``accept``: names from :data:`OPTIONAL_FEATURES` the caller models (e.g. ``{"frictionloss"}``);
    without them such a file raises. Raises :class:`MjcfLiteError` outside the subset (``feature``
    set) and for malformed files (``feature`` is ``None``).
    """
    unknown = set(accept) - OPTIONAL_FEATURES
    if unknown:
        raise InvalidInputError(f"accept: expected names from {sorted(OPTIONAL_FEATURES)}, got {sorted(unknown)}")
    return _Parser(os.fspath(path), frozenset(accept)).parse()
