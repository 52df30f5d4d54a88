"""One vocabulary of MJCF features, a scanner that finds which a model uses, and the refusal.

Every backend refuses what it cannot honour by the same names (the conformance kit's
``unsupported::<feature>`` entries and ``SimBackend.UNSUPPORTED_SCENE_FEATURES`` use them too):

========================  =============================================  ==========================
kind                      feature name                                   example
========================  =============================================  ==========================
``sensor``                ``<tag>_sensor`` (the MJCF element name)        ``force_sensor``
``actuator``              ``<tag>_actuator``                             ``muscle_actuator``
``transmission``          ``<type>_transmission``: ``joint``,            ``site_transmission``
                          ``jointinparent``, ``tendon``, ``site``,
                          ``slidercrank``, ``body``
``tendon``                ``spatial_tendon``, ``fixed_tendon``           ``fixed_tendon``
``equality``              ``<tag>_equality``                             ``weld_equality``
``joint``                 ``<type>_joint``                               ``ball_joint``
``geom``                  the geom type; ``mesh_fitted_primitive``: a    ``mesh``, ``hfield``
                          primitive type with ``mesh=`` (MuJoCo fits it)
``model``                 ``plugin``, ``flex``, ``skin``, ``composite``,  ``flex``
                          ``replicate``, ``attach``, ``mocap``,
                          ``contact_pair``, ``contact_exclude``
``attribute``             ``<element>_<attribute>`` (tag                 ``material_emission``
                          ``"<element>@<attribute>"``); scanned:
                          ``body_gravcomp`` (non-zero ``gravcomp``),
                          ``joint_actuatorgravcomp`` (``"true"`` on a
                          joint at or above a ``gravcomp`` body)
========================  =============================================  ==========================

:func:`scan_mjcf` reads a file (``<include>`` expanded as MuJoCo does,
``<default>`` classes applied to geom and joint types) and lists every :class:`FeatureUse`;
a plugin that compiled the model itself can build the uses from the compiled tables instead
(:func:`use`, :func:`mj_enum_tag`). :func:`check_features` raises
:class:`~unisim_core.contract.errors.UnsupportedCapabilityError` whose ``capability`` is the feature name
and whose message names the element, e.g. ``sensor 'left_foot_force' of type <force> is not
supported by motrix``. :func:`check_layout` compares the engine's model sizes with the file's.
Engine-free: stdlib XML and numpy only. :func:`normalize_key_quats` is MuJoCo's compile-time rule
for keyframe quaternions.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from unisim_core.contract.errors import EngineError, InvalidInputError, UnsupportedCapabilityError

__all__ = ["FeatureUse", "KINDS", "VISUAL_ELEMENTS", "VISUAL_ATTRIBUTES", "visual_only", "drop_visual",
           "SENSOR_TAGS", "ACTUATOR_TAGS", "TRANSMISSIONS", "EQUALITY_TAGS", "feature_name", "use", "mj_enum_tag",
           "walk_mjcf", "scan_mjcf", "normalize_key_quats", "features", "unsupported_error", "check_features",
           "check_layout"]

#: Feature kinds, in the order :func:`scan_mjcf` reports them within one element.
KINDS = ("sensor", "actuator", "transmission", "tendon", "equality", "joint", "geom", "model", "attribute")
#: MuJoCo's sensor elements (``<sensor>`` children).
SENSOR_TAGS = frozenset({
    "touch", "accelerometer", "velocimeter", "gyro", "force", "torque", "magnetometer", "camprojection",
    "rangefinder", "jointpos", "jointvel", "tendonpos", "tendonvel", "actuatorpos", "actuatorvel", "actuatorfrc",
    "jointactuatorfrc", "tendonactuatorfrc", "ballquat", "ballangvel", "jointlimitpos", "jointlimitvel",
    "jointlimitfrc", "tendonlimitpos", "tendonlimitvel", "tendonlimitfrc", "framepos", "framequat", "framexaxis",
    "frameyaxis", "framezaxis", "framelinvel", "frameangvel", "framelinacc", "frameangacc", "subtreecom",
    "subtreelinvel", "subtreeangmom", "insidesite", "distance", "normal", "fromto", "contact", "e_potential",
    "e_kinetic", "clock", "tactile", "user", "plugin",
})
#: MuJoCo's actuator elements (``<actuator>`` children).
ACTUATOR_TAGS = frozenset({"general", "motor", "position", "velocity", "intvelocity", "damper", "cylinder",
                           "muscle", "adhesion", "dcmotor", "plugin"})
#: Actuator transmission types; the attribute that selects each (``slidercrank``: ``cranksite``).
TRANSMISSIONS = {"joint": "joint", "jointinparent": "jointinparent", "tendon": "tendon", "site": "site",
                 "slidercrank": "cranksite", "body": "body"}
EQUALITY_TAGS = frozenset({"connect", "weld", "joint", "tendon", "flex", "flexvert", "flexstrain", "distance"})
#: Compiled-enum spellings that differ from the MJCF element (``mjSENS_GEOMDIST`` is ``<distance>``).
_ENUM_ALIASES = {"geomdist": "distance", "geomnormal": "normal", "geomfromto": "fromto",
                 "jointactfrc": "jointactuatorfrc", "tendonactfrc": "tendonactuatorfrc"}
_SUFFIX = {"sensor": "_sensor", "actuator": "_actuator", "transmission": "_transmission", "tendon": "_tendon",
           "equality": "_equality", "joint": "_joint", "geom": "", "model": ""}
_MODEL_ELEMENTS = {"composite": "composite", "replicate": "replicate", "attach": "attach", "flexcomp": "flex",
                   "skin": "skin"}


#: Elements only a renderer reads, with every attribute they have: ``<visual>`` and its children, textures,
#: materials, skins and lights. A model is never refused for them (:func:`visual_only`).
VISUAL_ELEMENTS = frozenset({"visual", "global", "quality", "headlight", "map", "scale", "rgba", "texture",
                             "material", "skin", "light"})
#: Attributes only a renderer reads, on any element (a geom's ``rgba``, a material's ``emission`` ...).
VISUAL_ATTRIBUTES = frozenset({"rgba", "material", "texture", "emission", "specular", "shininess", "reflectance",
                               "metallic", "roughness", "texrepeat", "texuniform"})
#: ``<material>`` attributes that change only its look (its name and ``rgba``/``texture`` stay referable).
_MATERIAL_LOOKS = ("emission", "specular", "shininess", "reflectance", "metallic", "roughness")


def visual_only(feature: str) -> bool:
    """Whether the feature name (:func:`feature_name`) is something only a renderer reads: a
    :data:`VISUAL_ELEMENTS` element, or an attribute of one (``material_emission``, ``quality_shadowsize``),
    or a :data:`VISUAL_ATTRIBUTES` attribute of any element (``geom_rgba``)."""
    element, _, attribute = feature.partition("_")
    return feature in VISUAL_ELEMENTS or element in VISUAL_ELEMENTS or attribute in VISUAL_ATTRIBUTES


def drop_visual(root: ET.Element) -> ET.Element:
    """``root`` (an MJCF tree, e.g. :func:`unisim_core.plugin.mjcf_lite.read_tree`'s) without what only a renderer
    reads, in place: ``<visual>``, ``<skin>`` (and a ``<deformable>`` left empty), ``<light>``, and the look
    attributes of ``<material>`` (the material stays: geoms name it). For an engine parsing the file itself:
    no model is refused for those."""
    parents = {c: p for p in root.iter() for c in p}
    for el in [e for e in root.iter() if e.tag in ("visual", "skin", "light") and e in parents]:
        if el.tag != "skin" or parents[el].tag == "deformable":
            parents[el].remove(el)
    for d in [d for d in root.findall("deformable") if not len(d)]:
        root.remove(d)
    for mat in root.iter("material"):
        for a in _MATERIAL_LOOKS:
            mat.attrib.pop(a, None)
    return root


def feature_name(kind: str, tag: str) -> str:
    """The vocabulary name of ``tag`` of ``kind`` (``("sensor", "force")`` -> ``"force_sensor"``)."""
    if kind == "attribute":
        return tag.replace("@", "_")
    if kind not in _SUFFIX:
        raise InvalidInputError(f"kind: expected one of {', '.join(KINDS)}, got {kind!r}")
    return f"{tag}{_SUFFIX[kind]}"


@dataclass(frozen=True)
class FeatureUse:
    """One element of a model that uses a feature.

    ``feature``: the vocabulary name; ``kind``: one of :data:`KINDS`; ``tag``: the MJCF element
    (or type) name; ``name``: the element's ``name`` ("" when unnamed); ``file``: where it is.
    """

    feature: str
    kind: str
    tag: str
    name: str = ""
    file: str = ""

    def describe(self) -> str:
        """The element in words: ``sensor 'left_foot_force' of type <force>``."""
        who = f" {self.name!r}" if self.name else " (unnamed)"
        if self.kind == "transmission":
            return f"actuator{who} with a {self.tag} transmission"
        if self.kind == "geom":
            fitted = " fitted to a mesh" if self.feature == "mesh_fitted_primitive" else ""
            return f"geom{who} of type {self.tag!r}{fitted}"
        if self.kind == "joint":
            return f"joint{who} of type {self.tag!r}"
        if self.kind == "attribute":
            element, _, attr = self.tag.partition("@")
            return f"attribute {attr!r} of <{element}>" + (f" {self.name!r}" if self.name else "")
        if self.kind == "model":
            return f"<{self.tag}>{who}" if self.tag != "mocap" else f"mocap body{who}"
        return f"{self.kind}{who} of type <{self.tag}>"


def use(kind: str, tag: str, name: str = "", file: str = "") -> FeatureUse:
    """A :class:`FeatureUse` built from a compiled model's tables (``tag`` as in the MJCF)."""
    return FeatureUse(feature_name(kind, tag), kind, tag, name, file)


def mj_enum_tag(enum_name: str) -> str:
    """The MJCF tag of a MuJoCo enum member name: ``"mjSENS_FORCE"`` -> ``"force"``,
    ``"mjTRN_SLIDERCRANK"`` -> ``"slidercrank"``, ``"mjSENS_GEOMDIST"`` -> ``"distance"``."""
    tag = enum_name.split("_", 1)[1].lower() if enum_name.startswith("mj") and "_" in enum_name else enum_name.lower()
    return _ENUM_ALIASES.get(tag, tag)


# ---------------------------------------------------------------------------------------- scanning
def walk_mjcf(path: str | os.PathLike, seen: frozenset[str] = frozenset(), main_dir: str | None = None
              ) -> Iterator[tuple[ET.Element, list[ET.Element], str]]:
    """``(element, ancestors, file)`` of an MJCF file in document order, the root first,
    ``<include file>`` expanded in place (the included file's root children take the
    include's place; a relative file is looked up in the main file's folder, then in the
    including file's, as MuJoCo does). Bad XML or a missing file is an
    :class:`~unisim_core.contract.errors.InvalidInputError` naming the file."""
    path = os.path.abspath(os.fspath(path))
    main_dir = os.path.dirname(path) if main_dir is None else main_dir
    if path in seen:
        raise InvalidInputError(f"{path}: included recursively")
    seen = seen | {path}
    from unisim_core.contract.mjcf_tree import (
        _parse,  # one reader of MJCF files (MjcfLiteError is an InvalidInputError)
    )

    root = _parse(path)

    def include(file: str) -> str:
        for folder in (main_dir, os.path.dirname(path)):
            cand = os.path.join(folder, file)
            if os.path.isfile(cand):
                return cand
        return os.path.join(main_dir, file)  # missing: reported as unreadable

    def visit(el: ET.Element, anc: list[ET.Element]):
        for child in el:
            if not isinstance(child.tag, str):
                continue
            if child.tag == "include":
                if not child.get("file"):
                    raise InvalidInputError(f"{path}: <include> without file=")
                for sub, sub_anc, f in walk_mjcf(include(child.get("file")), seen, main_dir):
                    if sub_anc:  # the included root itself stands for the <include>
                        yield sub, anc + [el] + sub_anc[1:], f
            else:
                yield child, anc + [el], path
                yield from visit(child, anc + [el])

    yield root, [], path
    yield from visit(root, [])


def _defaults(elements: list[tuple[ET.Element, list[ET.Element], str]]) -> dict[str, dict[str, dict[str, str]]]:
    """``{class: {tag: attributes}}`` for geom and joint, parent classes applied."""
    out: dict[str, dict[str, dict[str, str]]] = {}
    for el, anc, _ in elements:
        if el.tag != "default" or (anc and anc[-1].tag == "default"):
            continue  # top-level <default> only; nested ones are reached from it

        def walk(d: ET.Element, inherited: dict[str, dict[str, str]], top: bool) -> None:
            name = "main" if top and d.get("class") is None else d.get("class", "main")
            mine = {t: dict(a) for t, a in inherited.items()}
            for c in d:
                if c.tag in ("geom", "joint"):
                    mine.setdefault(c.tag, {}).update(c.attrib)
            out[name] = mine
            for c in d:
                if c.tag == "default":
                    walk(c, mine, False)

        walk(el, out.get("main", {}), True)
    return out


def _resolved(el: ET.Element, anc: list[ET.Element], defaults: dict, key: str, fallback: str) -> str:
    if key in el.attrib:
        return el.get(key)
    cls = el.get("class")
    if cls is None:
        for a in reversed(anc):
            if a.get("childclass"):
                cls = a.get("childclass")
                break
    return defaults.get(cls or "main", {}).get(el.tag, {}).get(key, fallback)


def scan_mjcf(path: str | os.PathLike) -> tuple[FeatureUse, ...]:
    """Every feature use of the MJCF file ``path``, in document order (see the module table)."""
    elements = list(walk_mjcf(path))
    defaults = _defaults(elements)
    compensated = _compensated(elements)
    uses: list[FeatureUse] = []

    def add(kind: str, tag: str, el: ET.Element, f: str) -> None:
        uses.append(FeatureUse(feature_name(kind, tag), kind, tag, el.get("name", ""), f))

    for el, anc, f in elements:
        parent = anc[-1].tag if anc else ""
        if "default" in (a.tag for a in anc):
            continue
        if parent == "sensor":
            add("sensor", el.tag, el, f)
        elif parent == "actuator":
            add("actuator", el.tag, el, f)
            trn = next((t for t, attr in TRANSMISSIONS.items() if el.get(attr)), None)
            if trn is not None:
                add("transmission", trn, el, f)
        elif parent == "tendon" and el.tag in ("spatial", "fixed"):
            add("tendon", el.tag, el, f)
        elif parent == "equality":
            add("equality", el.tag, el, f)
        elif parent == "contact" and el.tag in ("pair", "exclude"):
            add("model", f"contact_{el.tag}", el, f)
        elif el.tag == "freejoint":
            add("joint", "free", el, f)
        elif el.tag == "joint" and parent in ("body", "frame"):
            add("joint", _resolved(el, anc, defaults, "type", "hinge"), el, f)
        elif el.tag == "geom" and parent in ("body", "worldbody", "frame"):
            gtype = _resolved(el, anc, defaults, "type", "sphere")
            add("geom", gtype, el, f)
            if gtype != "mesh" and _resolved(el, anc, defaults, "mesh", ""):
                uses.append(FeatureUse("mesh_fitted_primitive", "geom", gtype, el.get("name", ""), f))
        elif el.tag == "plugin" and parent in ("extension", "body", "worldbody", "composite", "flexcomp"):
            add("model", "plugin", el, f)
        elif el.tag == "flex" and parent == "deformable":
            add("model", "flex", el, f)
        elif el.tag == "skin" and parent == "deformable":
            add("model", "skin", el, f)
        elif el.tag in _MODEL_ELEMENTS and el.tag != "skin":
            uses.append(FeatureUse(_MODEL_ELEMENTS[el.tag], "model", el.tag, el.get("name", ""), f))
        if el.tag == "body" and el.get("mocap") == "true":
            add("model", "mocap", el, f)
        if el.tag == "body" and _gravcomp(el) != 0.0:
            uses.append(FeatureUse("body_gravcomp", "attribute", "body@gravcomp", el.get("name", ""), f))
        if el.tag == "joint" and parent in ("body", "frame") and _owner(anc) in compensated \
                and _resolved(el, anc, defaults, "actuatorgravcomp", "false") == "true":
            uses.append(FeatureUse("joint_actuatorgravcomp", "attribute", "joint@actuatorgravcomp",
                                   el.get("name", ""), f))
    return tuple(uses)


def _gravcomp(body: ET.Element) -> float:
    try:
        return float(body.get("gravcomp", "0"))
    except ValueError:
        raise InvalidInputError(f"<body name={body.get('name', '')!r}>: gravcomp={body.get('gravcomp')!r} is not "
                                "a number") from None


def _owner(anc: list[ET.Element]) -> int:
    """``id()`` of the nearest ``<body>`` among ``anc`` (0 for none)."""
    return next((id(a) for a in reversed(anc) if a.tag == "body"), 0)


def _compensated(elements: list[tuple[ET.Element, list[ET.Element], str]]) -> set[int]:
    """``id()`` of every body at or above a body with non-zero ``gravcomp``: the bodies whose joints
    carry some gravity compensation (``actuatorgravcomp`` matters there only)."""
    out: set[int] = set()
    for el, anc, _ in elements:
        if el.tag == "body" and _gravcomp(el) != 0.0:
            out |= {id(a) for a in anc if a.tag == "body"} | {id(el)}
    return out


def features(uses: Iterable[FeatureUse]) -> frozenset[str]:
    """The feature names of ``uses``."""
    return frozenset(u.feature for u in uses)


# ---------------------------------------------------------------------------------------- refusing
def unsupported_error(backend: str, feature_use: FeatureUse, reason: str = "") -> UnsupportedCapabilityError:
    """``UnsupportedCapabilityError(backend, feature, "<file>: <element> is not supported by <backend>[: reason]")``."""
    where = f"{feature_use.file}: " if feature_use.file else ""
    detail = f"{where}{feature_use.describe()} is not supported by {backend}"
    return UnsupportedCapabilityError(backend, feature_use.feature, f"{detail}: {reason}" if reason else detail)


def check_features(backend: str, uses: Iterable[FeatureUse], *, refused: Mapping[str, str] | None = None,
                   supported: Mapping[str, Collection[str]] | None = None) -> None:
    """Raise :func:`unsupported_error` for the first use the backend cannot honour; a :func:`visual_only`
    use never raises (only a renderer reads it).

    ``refused``: ``{feature: reason}`` refused outright (e.g. ``UNSUPPORTED_SCENE_FEATURES``);
    ``supported``: ``{kind: feature names}`` allow-lists: a use of a listed kind whose feature is
    not in its list is refused too (so a sensor type new to the vocabulary fails closed).
    """
    refused, supported = refused or {}, supported or {}
    for u in uses:
        if visual_only(u.feature):
            continue
        if u.feature in refused:
            raise unsupported_error(backend, u, refused[u.feature])
        if u.kind in supported and u.feature not in supported[u.kind]:
            raise unsupported_error(backend, u)


def check_layout(backend: str, path: str, expected: Mapping[str, int], got: Mapping[str, int]) -> None:
    """``EngineError`` when the engine's model sizes (``nq``, ``nv``, ``nu``, ``nsensordata`` ...)
    differ from the file's (``expected``, e.g. from MuJoCo's compiler): a model the engine
    built differently is never simulated silently. Keys missing from ``got`` are not compared."""
    diff = [f"{k} {got[k]} (the file: {v})" for k, v in expected.items() if k in got and int(got[k]) != int(v)]
    if diff:
        raise EngineError(f"{backend} builds {path} with a different layout than the file's: {', '.join(diff)}; "
                          "the scene is refused rather than simulated as another model")


def normalize_key_quats(qpos: np.ndarray, joint_types: Iterable[str], joint_qposadr: Iterable[int]) -> np.ndarray:
    """A keyframe ``qpos`` (``(..., nq)``) with each free/ball joint's wxyz quaternion normalised
    as MuJoCo's compiler does: ``q / |q|``, and the identity ``[1, 0, 0, 0]`` for a zero
    quaternion (norm below MuJoCo's ``mjMINVAL``, 1e-15). ``joint_types``: ``"free"``, ``"ball"``,
    ``"hinge"`` or ``"slide"`` per joint."""
    q = np.array(qpos, dtype=np.float64, copy=True)
    for jtype, adr in zip(joint_types, joint_qposadr):
        if jtype not in ("free", "ball"):
            continue
        a = int(adr) + (3 if jtype == "free" else 0)
        block = q[..., a:a + 4]
        n = np.linalg.norm(block, axis=-1, keepdims=True)
        ok = n > 1e-15
        q[..., a:a + 4] = np.where(ok, block / np.where(ok, n, 1.0), np.array([1.0, 0.0, 0.0, 0.0]))
    return q
