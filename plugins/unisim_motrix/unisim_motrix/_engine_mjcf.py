"""The MJCF file MotrixSim loads: the scene's own file, or a copy carrying MuJoCo's compiled values.

MotrixSim parses MJCF itself and departs from MuJoCo's compiler where a rewritten copy of the file
closes the gap; each value written comes from ``mujoco.MjModel`` of the same file (MuJoCo is the
plugin's reference and a dependency), so the engine gets what MuJoCo compiles:

- ``visual``: ``<visual>``, cameras and lights, the appearance attributes of ``<material>``
  (:data:`MATERIAL_LOOKS`) and every ``rgba`` are removed: only a renderer reads them (the backend's
  frames are drawn from the original file by the shared renderer), and MotrixSim's parser rejects
  valid MJCF among them (a scalar ``emission``, ``shadowsize="0"``, an empty ``rgba``, a camera
  ``mode`` without its target; iit_softfoot, umi_gripper, trossen_wxai).
- ``eulerseq``: every ``euler`` becomes the ``quat`` MuJoCo makes of it (lower-case letters rotate
  about the moving axes, upper-case about the fixed ones; ``<compiler angle>``) and ``eulerseq`` goes:
  MotrixSim's parser takes the default intrinsic ``xyz`` only (trossen_wxai's ``ZYX``).
- ``inheritrange``: the attribute is removed everywhere and each actuator gets MuJoCo's compiled
  ``ctrlrange``/``ctrllimited`` (MotrixSim's parser rejects ``inheritrange`` beside a
  ``ctrlrange``, even ``inheritrange="0"``; i2rt_yam).
- ``dampratio``: the attribute is removed everywhere and each ``<position>`` actuator gets MuJoCo's
  compiled ``kv`` (``-biasprm[2]``: ``dampratio * 2 sqrt(kp m)``, ``m = 1 / (M^-1)_jj`` the inertia
  the actuator sees at ``qpos0`` with the other joints free, armature included); MotrixSim derives
  another damping (a one-link arm: 5.51 for MuJoCo's 3.65; trossen_wxai, pal_talos, umi_gripper,
  trs_so_arm100, trossen_wx250s, dynamixel_2r use dampratio).
- ``mesh_fitted_primitive``: a primitive geom with ``mesh=`` gets MuJoCo's fitted ``size``, ``pos``
  and ``quat`` (``<compiler fitaabb>``, ``fitscale``: MuJoCo's fitting rule, applied by MuJoCo)
  and loses ``mesh`` (MotrixSim fits its own way: arx_l5's capsule radius 0.162 m, MuJoCo 0.024 m).
- ``inertia``: every body with mass gets MuJoCo's compiled ``<inertial>`` (mass, COM, principal
  axes and moments) and ``<compiler>`` loses the mass settings baked into them
  (:data:`MASS_COMPILER`), when a body's inertia would otherwise come from its geoms or one of those
  settings is used (MotrixSim derives inertia from geoms its own way and ignores
  ``inertiafromgeom``/``settotalmass``: gymnasium's humanoid 0.16 rad off MuJoCo in 100 steps).
- ``contact_mixing``: every geom pair MuJoCo collides whose two geoms' contact parameters differ
  becomes an explicit ``<pair>`` carrying MuJoCo's mix (``mj_contactParam``: the higher ``priority``
  geom's, else ``condim`` and friction the larger, ``solref``/``solimp`` weighted by ``solmix``;
  ``margin``/``gap`` the sums, as MuJoCo 4 compiles dynamic contacts). MotrixSim mixes differently
  (pal_talos: it averages the stiffness 1/tc² and damping 2/tc of the feet's solref 0.001 and the
  floor's 0.02, 55× MuJoCo's averaged time constant) and honours an explicit pair's values, which
  replace the pair's dynamic contact (both engines); MuJoCo runs the rewritten copy bit for bit as
  the original (tests).
- contact sensors: ``<contact>`` sensors (``reduce="netforce"``) for the body pairs of contact
  filters (:mod:`~unisim_motrix._contacts`), added when a filtered binding needs them.

The copy has its ``<include>`` files expanded and its asset folders made absolute; it is written to
a temporary folder, loaded and removed. Elements the rewrite must address by name but that have none
get a name starting with :data:`TEMP_PREFIX` (the probe compiled by MuJoCo names every body, geom and
actuator; the engine's copy names its bodies and geoms the same way; ``_model`` reports them unnamed).
The probe is the MuJoCo model the backend compares the engine with (:meth:`EngineMjcf.compiled`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence

import numpy as np

from unisim_core.contract.errors import UnsupportedCapabilityError
from unisim_core.contract.mjcf_tree import read_tree
from unisim_core.plugin.mjcf_features import _defaults, _resolved  # the vocabulary scanner's default-class rules

__all__ = ["EngineMjcf", "MATERIAL_LOOKS", "MASS_COMPILER", "TEMP_PREFIX", "CONTACT_DATA"]

TEMP_PREFIX = "__unisim_"
#: ``<material>`` attributes only a renderer reads (MotrixSim rejects MuJoCo's scalar ``emission``).
MATERIAL_LOOKS = ("emission", "specular", "shininess", "reflectance", "metallic", "roughness")
#: ``<compiler>`` attributes whose effect is in MuJoCo's compiled inertials.
MASS_COMPILER = ("inertiafromgeom", "inertiagrouprange", "settotalmass", "boundmass", "boundinertia",
                 "balanceinertia", "exactmeshinertia")
#: ``data`` of the contact-filter sensors, and the width of one reading (found 1, force, normal,
#: tangent 3 each).
CONTACT_DATA = ("found force normal tangent", 10)
_PRIMITIVES = ("sphere", "capsule", "cylinder", "ellipsoid", "box")
_RENDER_ONLY = ("camera", "light")  #: elements only a renderer reads
_SIZE_WIDTH = {"sphere": 1, "capsule": 2, "cylinder": 2, "ellipsoid": 3, "box": 3}
_ORIENTATIONS = ("quat", "euler", "axisangle", "xyaxes", "zaxis")
_ACTUATOR_TAGS = ("general", "motor", "position", "velocity", "intvelocity", "damper", "cylinder", "muscle",
                  "adhesion", "dcmotor")


def _walk(el: ET.Element, anc: list[ET.Element]) -> Iterator[tuple[ET.Element, list[ET.Element]]]:
    for child in el:
        if isinstance(child.tag, str):
            yield child, anc
            yield from _walk(child, anc + [child])


def _quats_from_eulers(root: ET.Element) -> None:
    """Every ``euler`` as MuJoCo turns it into a quaternion under ``<compiler angle eulerseq>`` (the
    last ``<compiler>`` wins), written as ``quat``; ``eulerseq`` removed."""
    import math

    from unisim_core.contract import quat as Q

    seq, scale = "xyz", math.pi / 180.0
    for c in root.iter("compiler"):
        seq = c.get("eulerseq", seq)
        if "angle" in c.attrib:
            scale = 1.0 if c.get("angle") == "radian" else math.pi / 180.0
        c.attrib.pop("eulerseq", None)
    for el in root.iter():
        if "euler" not in el.attrib:
            continue
        q = np.array([1.0, 0.0, 0.0, 0.0])
        for axis, angle in zip(seq, np.array(el.get("euler").split(), np.float64) * scale):
            r = Q.quat_from_axis_angle(np.eye(3)["xyz".index(axis.lower())], angle)
            q = Q.quat_mul(q, r) if axis.islower() else Q.quat_mul(r, q)  # intrinsic: moving axes
        del el.attrib["euler"]
        el.set("quat", _vec(q))


def _temp_names(root: ET.Element, tags: tuple[str, ...]) -> None:
    """Name the unnamed elements of ``tags`` outside ``<default>``: ``{TEMP_PREFIX}{tag}_{k}``, k
    counting per tag in :func:`_walk` order (the same names in every copy of one file)."""
    counts: dict[str, int] = {}
    for el, anc in _walk(root, []):
        if el.tag in tags and "name" not in el.attrib and not any(a.tag == "default" for a in anc):
            counts[el.tag] = counts.get(el.tag, 0) + 1
            el.set("name", f"{TEMP_PREFIX}{el.tag}_{counts[el.tag]}")


def _fit(el: ET.Element, g) -> None:
    """A fitted primitive as MuJoCo compiled it (``g``: ``MjModel.geom(...)``): type, size, pose."""
    import mujoco

    gtype = next(t for t in _PRIMITIVES if int(g.type[0]) == int(getattr(mujoco.mjtGeom, f"mjGEOM_{t.upper()}")))
    for a in ("mesh", "fromto", "fitscale", "size", "pos") + _ORIENTATIONS:
        el.attrib.pop(a, None)
    el.set("type", gtype)
    el.set("size", _vec(g.size[:_SIZE_WIDTH[gtype]]))
    el.set("pos", _vec(g.pos))
    el.set("quat", _vec(g.quat))


def _ctrlrange(el: ET.Element, a) -> None:
    """MuJoCo's compiled control range (``a``: ``MjModel.actuator(...)``)."""
    limited = bool(int(a.ctrllimited[0]))
    el.set("ctrllimited", "true" if limited else "false")
    if limited:
        el.set("ctrlrange", _vec(a.ctrlrange))


def _kv(el: ET.Element, a) -> None:
    """MuJoCo's compiled velocity gain of a ``<position>`` actuator (``a``: ``MjModel.actuator(...)``)."""
    el.set("kv", _num(-a.biasprm[2]))


def _inertial(body: ET.Element, b) -> None:
    """MuJoCo's compiled mass properties (``b``: ``MjModel.body(...)``) as the body's ``<inertial>``
    (bodies without mass are left as they are)."""
    if float(b.mass[0]) <= 0.0:
        return
    for old in body.findall("inertial"):
        body.remove(old)
    body.insert(0, ET.Element("inertial", {"pos": _vec(b.ipos), "quat": _vec(b.iquat), "mass": _num(b.mass[0]),
                                           "diaginertia": _vec(b.inertia)}))


def _colliding(m) -> list[tuple[int, int]]:
    """Geom pairs MuJoCo's dynamic collision filter lets touch (``mj_collision``'s body filter: one weld
    group, the weld-parent filter, ``<exclude>``, ``contype``/``conaffinity``), before bounding boxes;
    none with contacts disabled. Explicit ``<pair>``s are left out (they keep their own values)."""
    import mujoco

    if m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_CONTACT:
        return []
    filterparent = not m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_FILTERPARENT
    excluded = {int(x) for x in m.exclude_signature}
    explicit = {(min(a, b), max(a, b)) for a, b in zip(m.pair_geom1, m.pair_geom2)}
    weld, parent = m.body_weldid, m.body_parentid
    out = []
    geoms = np.flatnonzero((m.geom_contype != 0) | (m.geom_conaffinity != 0))
    for i, g1 in enumerate(geoms):
        for g2 in geoms[i + 1:]:
            b1, b2 = int(m.geom_bodyid[g1]), int(m.geom_bodyid[g2])
            w1, w2 = int(weld[b1]), int(weld[b2])
            if w1 == w2 or (int(g1), int(g2)) in explicit:
                continue
            if filterparent and w1 and w2 and (w1 == weld[parent[w2]] or w2 == weld[parent[w1]]):
                continue
            if ((b1 << 16) + b2) in excluded or ((b2 << 16) + b1) in excluded:
                continue
            if (m.geom_contype[g1] & m.geom_conaffinity[g2]) or (m.geom_contype[g2] & m.geom_conaffinity[g1]):
                out.append((int(g1), int(g2)))
    return out


def _mixed_pairs(m) -> list[dict[str, str]]:
    """MuJoCo's contact parameters (``mj_contactParam``) of each colliding pair whose geoms differ."""
    import mujoco

    out = []
    minval = mujoco.mjMINVAL
    for g1, g2 in _colliding(m):
        same = all(np.array_equal(getattr(m, f)[g1], getattr(m, f)[g2]) for f in (
            "geom_priority", "geom_condim", "geom_friction", "geom_solmix", "geom_solref", "geom_solimp",
            "geom_margin", "geom_gap"))
        if same:
            continue
        p1, p2 = int(m.geom_priority[g1]), int(m.geom_priority[g2])
        if p1 != p2:
            g = g1 if p1 > p2 else g2
            condim, friction = int(m.geom_condim[g]), m.geom_friction[g]
            solref, solimp = m.geom_solref[g], m.geom_solimp[g]
        else:
            condim = max(int(m.geom_condim[g1]), int(m.geom_condim[g2]))
            friction = np.maximum(m.geom_friction[g1], m.geom_friction[g2])
            s1, s2 = float(m.geom_solmix[g1]), float(m.geom_solmix[g2])
            mix = (s1 / (s1 + s2) if s1 >= minval and s2 >= minval else
                   0.5 if s1 < minval and s2 < minval else 0.0 if s1 < minval else 1.0)
            r1, r2 = m.geom_solref[g1], m.geom_solref[g2]
            solref = mix * r1 + (1 - mix) * r2 if r1[0] > 0 and r2[0] > 0 else np.minimum(r1, r2)
            solimp = mix * m.geom_solimp[g1] + (1 - mix) * m.geom_solimp[g2]
        # the impedance MuJoCo uses (it clamps when it computes it: d0/dmax/midpoint into [mjMINIMP, mjMAXIMP],
        # width >= mjMINVAL, power >= 1); MotrixSim's parser rejects a pair's out-of-range solimp
        solimp = np.array(solimp, np.float64)
        solimp[[0, 1, 3]] = np.clip(solimp[[0, 1, 3]], mujoco.mjMINIMP, mujoco.mjMAXIMP)
        solimp[2], solimp[4] = max(solimp[2], minval), max(solimp[4], 1.0)
        names = m.geom(g1).name, m.geom(g2).name
        if not all(names):  # an unnamed geom of an attached <model>: no name to pair it by
            continue
        out.append({"geom1": names[0], "geom2": names[1], "condim": str(condim),
                    "friction": _vec([friction[0], friction[0], friction[1], friction[2], friction[2]]),
                    "solref": _vec(solref), "solimp": _vec(solimp),
                    "margin": _num(m.geom_margin[g1] + m.geom_margin[g2]),  # MuJoCo 4 adds the two geoms'
                    "gap": _num(m.geom_gap[g1] + m.geom_gap[g2])})
    return out


def _num(x: float) -> str:
    return repr(float(x))


def _vec(v) -> str:
    return " ".join(_num(x) for x in np.asarray(v, np.float64).reshape(-1))


class EngineMjcf:
    """The engine's view of the scene file ``path``: which fixes it needs (``fixes``; a ``<model>``
    asset's file gets its own, applied to its own copy) and, on :meth:`file`, the file to load
    (``path`` itself when nothing is to change)."""

    def __init__(self, backend: str, path: str) -> None:
        self.path = os.path.abspath(path)
        self._backend = backend
        self._main = os.path.dirname(self.path)
        root = read_tree(self.path)
        self._elements = [(el, [root] + anc, self.path) for el, anc in _walk(root, [])]
        self._defaults = _defaults(self._elements)
        self._fitted = {id(el) for el, anc, _ in self._elements if self._is_fitted(el, anc)}
        self._actuators = {id(el) for el, anc, _ in self._elements
                           if anc[-1].tag == "actuator" and el.tag in _ACTUATOR_TAGS}
        self._models = {id(el): EngineMjcf(backend, self._asset(el.get("file"))) for el in root.iter("model")
                        if el.get("file")}
        self._xml_fixes = tuple(f for f, needed in (
            ("visual", root.find("visual") is not None or any("rgba" in el.attrib for el in root.iter())
             or any(True for el in root.iter() if el.tag in _RENDER_ONLY)
             or any(m.get(a) is not None for m in root.iter("material") for a in MATERIAL_LOOKS)),
            ("eulerseq", any("eulerseq" in c.attrib for c in root.iter("compiler"))),
            ("inheritrange", any("inheritrange" in el.attrib for el in root.iter())),
            ("dampratio", any("dampratio" in el.attrib for el in root.iter())),
            ("mesh_fitted_primitive", bool(self._fitted)),
            ("inertia", self._needs_inertia(root)),
        ) if needed)
        self._patched: ET.Element | None = None
        self._compiled_probe: tuple[list[ET.Element], object] | None = None
        self._pairs: list[dict[str, str]] | None = None

    @property
    def fixes(self) -> tuple[str, ...]:
        """The rewrites the file needs (``contact_mixing`` needs MuJoCo's compilation: made once)."""
        return (self._xml_fixes + (("contact_mixing",) if self.mixed_pairs() else ())
                + tuple(f for m in self._models.values() for f in m.fixes))

    def _asset(self, file: str) -> str:
        return file if os.path.isabs(file) else os.path.join(self._main, file)

    @staticmethod
    def _in_default(anc: list[ET.Element]) -> bool:
        return any(a.tag == "default" for a in anc)

    def _is_fitted(self, el: ET.Element, anc: list[ET.Element]) -> bool:
        if el.tag != "geom" or self._in_default(anc) or anc[-1].tag not in ("body", "worldbody", "frame"):
            return False
        gtype = _resolved(el, anc, self._defaults, "type", "sphere")
        if gtype not in _PRIMITIVES or not _resolved(el, anc, self._defaults, "mesh", ""):
            return False
        where = f"{self.path}: geom {el.get('name', '')!r} of type {gtype!r} fitted to a mesh"
        if "mesh" not in el.attrib:
            raise UnsupportedCapabilityError(self._backend, "mesh_fitted_primitive", (
                f"{where} names the mesh in its default class; MotrixSim fits such a geom its own way (arx_l5: "
                "capsule radius 0.162 m, MuJoCo 0.024 m) and a class's mesh cannot be taken off one geom: write "
                "mesh= on the geom"))
        if anc[-1].tag == "frame":
            raise UnsupportedCapabilityError(self._backend, "mesh_fitted_primitive", (
                f"{where} sits in a <frame>; MotrixSim fits such a geom its own way and MuJoCo's fitted pose is "
                "relative to the body: move the geom out of the frame"))
        return True

    def _needs_inertia(self, root: ET.Element) -> bool:
        """Whether a body's inertia would come from its geoms, or a ``<compiler>`` mass setting is used."""
        if any(a in c.attrib for c in root.iter("compiler") for a in MASS_COMPILER):
            return True
        return any(body.find("inertial") is None and body.get("mocap") != "true"
                   and (body.find("geom") is not None or body.find("frame/geom") is not None)
                   for body in root.iter("body"))

    # -- the copy ------------------------------------------------------------------------
    def _absolute_assets(self, root: ET.Element) -> None:
        """Asset folders as MuJoCo resolves them (the main file's folder; ``assetdir`` for both);
        ``<model file>`` assets relative to the main file's folder."""
        dirs = {"meshdir": "", "texturedir": ""}
        compilers = list(root.iter("compiler"))
        for c in compilers:
            for key in dirs:
                dirs[key] = c.get(key, c.get("assetdir", dirs[key]))
        for c in compilers:
            for key in ("meshdir", "texturedir", "assetdir"):
                c.attrib.pop(key, None)
        if not compilers:
            compilers = [ET.Element("compiler")]
            root.insert(0, compilers[0])
        for key, folder in dirs.items():
            compilers[-1].set(key, os.path.join(self._main, folder))
        for el in root.iter("model"):
            if el.get("file"):
                el.set("file", self._asset(el.get("file")))

    def _write(self, root: ET.Element, folder: str) -> str:
        """Write ``root`` (this file's tree) into ``folder``, the ``<model>`` assets needing fixes as
        their own copies beside it; returns the path written."""
        for el in root.iter("model"):
            child = self._models.get(id(el))
            if child is not None and child.fixes:
                el.set("file", child._write(child._patch(), folder))
        fd, out = tempfile.mkstemp(suffix=".xml", prefix=os.path.splitext(os.path.basename(self.path))[0] + ".",
                                   dir=folder)
        with os.fdopen(fd, "wb") as f:
            ET.ElementTree(root).write(f, encoding="utf-8", xml_declaration=True)
        return out

    @contextlib.contextmanager
    def _written(self, root: ET.Element) -> Iterator[str]:
        folder = tempfile.mkdtemp(prefix="unisim-motrix-")
        try:
            yield self._write(root, folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _compiled(self) -> tuple[list[ET.Element], object]:
        """``(elements, mujoco.MjModel)``: a copy of the file naming every body, geom and actuator
        (its elements in :func:`_walk` order), compiled by MuJoCo (a file MuJoCo rejects:
        ``InvalidInputError`` quoting it)."""
        import mujoco

        from unisim_core.contract.errors import InvalidInputError

        probe = read_tree(self.path)
        elements = [el for el, _ in _walk(probe, [])]
        _temp_names(probe, ("body", "geom") + _ACTUATOR_TAGS)
        self._absolute_assets(probe)
        folder = tempfile.mkdtemp(prefix="unisim-motrix-")
        try:
            fd, path = tempfile.mkstemp(suffix=".xml", dir=folder)
            with os.fdopen(fd, "wb") as f:
                ET.ElementTree(probe).write(f, encoding="utf-8", xml_declaration=True)
            try:
                return elements, mujoco.MjModel.from_xml_path(path)
            except ValueError as exc:
                raise InvalidInputError(f"{self.path}: MuJoCo's compiler rejects the model: {exc}") from None
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _probe(self) -> tuple[list[ET.Element], object]:
        if self._compiled_probe is None:
            self._compiled_probe = self._compiled()
        return self._compiled_probe

    def compiled(self):
        """MuJoCo's compilation of the file (its unnamed bodies, geoms and actuators named; nothing else
        differs): the reference the engine's model is compared with."""
        return self._probe()[1]

    def mixed_pairs(self) -> list[dict[str, str]]:
        """The ``<pair>`` attributes of every geom pair MuJoCo collides dynamically whose two geoms'
        contact parameters differ, with MuJoCo's mix of them (see the module docstring)."""
        if self._pairs is None:
            self._pairs = _mixed_pairs(self.compiled())
        return self._pairs

    def body_names(self) -> list[str]:
        """Each MuJoCo body's name in the file MotrixSim loads (a temporary one for an unnamed body)."""
        _, m = self._probe()
        return [m.body(i).name for i in range(m.nbody)]

    def _patch(self) -> ET.Element:
        """The rewritten tree (cached): the file's tree with this file's fixes applied."""
        if self._patched is not None:
            return self._patched
        root = read_tree(self.path)
        mine = [el for el, _ in _walk(root, [])]  # the same walk as self._elements and the probe's
        originals = [el for el, _, _ in self._elements]
        own = set(self._xml_fixes) - {"visual"}
        if own:
            probe, m = self._probe()
            for el, orig, twin in zip(mine, originals, probe):
                if id(orig) in self._fitted:
                    _fit(el, m.geom(twin.get("name")))
                if id(orig) in self._actuators and "inheritrange" in own:
                    _ctrlrange(el, m.actuator(twin.get("name")))
                if id(orig) in self._actuators and el.tag == "position" and "dampratio" in own:
                    _kv(el, m.actuator(twin.get("name")))
                if el.tag == "body" and "inertia" in own:
                    _inertial(el, m.body(twin.get("name")))
            if "inertia" in own:
                for c in root.iter("compiler"):
                    for a in MASS_COMPILER:
                        c.attrib.pop(a, None)
        if "eulerseq" in self._xml_fixes:
            _quats_from_eulers(root)
        for el, orig in zip(mine, originals):
            el.attrib.pop("inheritrange", None)
            if "dampratio" in own:
                el.attrib.pop("dampratio", None)
            if el.tag == "model" and id(orig) in self._models:
                self._models[id(el)] = self._models.pop(id(orig))
        _temp_names(root, ("body", "geom"))  # pairs' and sensors' names (model_info reads these as unnamed)
        if self.mixed_pairs():
            contact = root.find("contact")
            if contact is None:
                contact = ET.SubElement(root, "contact")
            for attrs in self.mixed_pairs():
                ET.SubElement(contact, "pair", attrs)
        for v in root.findall("visual"):
            root.remove(v)
        for mat in root.iter("material"):
            for a in MATERIAL_LOOKS:
                mat.attrib.pop(a, None)
        for el in root.iter():
            el.attrib.pop("rgba", None)
            for child in [c for c in el if c.tag in _RENDER_ONLY]:
                el.remove(child)
        self._absolute_assets(root)
        self._patched = root
        return root

    @contextlib.contextmanager
    def file(self, contact_pairs: Sequence[tuple[str, str]] = ()) -> Iterator[str]:
        """The file to load: ``path`` when nothing changes, else a rewritten copy (removed on exit)
        with :attr:`fixes` applied and one ``<contact>`` sensor per ``(body1, body2)`` name pair,
        named ``{TEMP_PREFIX}contact_{i}`` in order."""
        if not self.fixes and not contact_pairs:
            yield self.path
            return
        root = self._patch()
        added = None
        if contact_pairs:
            added = ET.SubElement(root, "sensor")
            data, _ = CONTACT_DATA
            for i, (a, b) in enumerate(contact_pairs):
                ET.SubElement(added, "contact", {"name": f"{TEMP_PREFIX}contact_{i}", "body1": a, "body2": b,
                                                 "data": data, "reduce": "netforce"})
        try:
            with self._written(root) as out:
                yield out
        finally:
            if added is not None:
                root.remove(added)
