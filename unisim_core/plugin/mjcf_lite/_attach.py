"""``<asset><model name file>`` + ``<attach model body prefix>``: another MJCF file's body subtree grafted
where ``<attach>`` stands, as MuJoCo's compiler attaches it (measured against ``mujoco.MjModel``).

The subtree keeps the child file's own conventions: its ``<default>`` classes (the parent's never apply
to it), ``<compiler angle eulerseq autolimits meshdir>``; so each grafted element is written with its
attributes resolved ("baked"): defaults applied, orientations as ``quat``, hinge ``range``/``ref``/
``springref`` in the parent's angle unit, ``limited`` flags explicit, mesh files absolute. Every name
(and every reference to a grafted element) gets ``prefix``; unnamed elements stay unnamed. The child's
actuators, sensors, equalities, tendons and contact pairs/excludes whose references all lie in the
subtree come along (appended after the parent's), the others are left out; so do its meshes. Its
keyframes become keys of the model (``prefix`` + name) holding their values for the grafted joints,
``qpos0`` elsewhere, after the parent's keys; a parent key written for the model without the grafted
joints gets their ``qpos0`` (:func:`attached_key_qpos`).
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import numpy as np

from unisim_core.plugin.mjcf_lite._errors import MjcfLiteError

__all__ = ["ATTACH_MARK", "expand_attachments", "attached_key_qpos"]

#: Private attribute marking a grafted joint: ``"<attach index>:<joint index in the child file>"``.
ATTACH_MARK = "__unisim_attached"
#: The (empty) default class grafted elements carry, so that no default of the parent applies to them.
NEUTRAL_CLASS = "__unisim_attached"
_ORIENTED = ("body", "geom", "site", "inertial", "camera", "light", "frame")
_ORIENTATIONS = ("quat", "euler", "axisangle", "xyaxes", "zaxis")
_BAKED = ("joint", "geom", "site")  # body-tree elements the lite reader resolves defaults for
_REFS = ("joint", "joint1", "joint2", "jointinparent", "site", "site1", "site2", "refsite", "sidesite", "cranksite",
         "slidersite", "body", "body1", "body2", "geom", "geom1", "geom2", "tendon", "tendon1", "tendon2", "objname",
         "refname", "actuator", "target")
_SECTIONS = ("actuator", "sensor", "equality", "tendon", "contact")


def _num(x: float) -> str:
    return repr(float(x))


def _nums(values) -> str:
    return " ".join(_num(v) for v in values)


class _Graft:
    """One ``<attach>``: the child file's parser (its defaults and compiler), and the names grafted."""

    def __init__(self, parser, child, index: int, prefix: str) -> None:
        self.parser, self.child, self.index, self.prefix = parser, child, index, prefix
        self.names: set[str] = set()  # the child's names of grafted elements (any kind)
        self.joints: dict[int, int] = {}  # id(joint element in the child tree) -> its index in the child file

    def name(self, value: str | None) -> str | None:
        return None if not value else self.prefix + value

    def element(self, el: ET.Element, attrs: dict[str, str]) -> ET.Element:
        """``el`` as the parent reads it: ``attrs`` (resolved) with names prefixed and the neutral class."""
        attrs = {k: v for k, v in attrs.items() if k not in ("class", "childclass")}
        if attrs.get("name"):
            self.names.add(attrs["name"])
            attrs["name"] = self.name(attrs["name"])
        for key in ("mesh", "hfield"):
            if attrs.get(key):
                attrs[key] = self.name(attrs[key])
        attrs["class"] = NEUTRAL_CLASS
        out = ET.Element(el.tag, attrs)
        out.tail = el.tail
        return out

    def orientation(self, el: ET.Element, attrs: dict[str, str]) -> dict[str, str]:
        """An orientation in the child's conventions (``angle``, ``eulerseq``) as a ``quat``."""
        if any(k in attrs for k in _ORIENTATIONS[1:]):
            q = self.child.orient(attrs, el)
            attrs = {k: v for k, v in attrs.items() if k not in _ORIENTATIONS}
            attrs["quat"] = _nums(q)
        return attrs

    def body_tree(self, el: ET.Element, childclass: str) -> ET.Element:
        """The grafted copy of a child body-tree element (recursively)."""
        if el.tag in _BAKED:
            attrs = self.child.attrs(el, childclass)
        else:
            attrs = dict(el.attrib)
        if el.tag in ("body", "frame"):
            childclass = el.get("childclass", childclass)
        if el.tag == "joint":
            attrs = self.joint(attrs)
        if el.tag in _ORIENTED:
            attrs = self.orientation(el, attrs)
        out = self.element(el, attrs)
        if el.tag in ("joint", "freejoint"):
            out.set(ATTACH_MARK, f"{self.index}:{self.joints[id(el)]}")
        for sub in el:
            if isinstance(sub.tag, str):
                out.append(self.body_tree(sub, childclass))
        return out

    def joint(self, attrs: dict[str, str]) -> dict[str, str]:
        """Hinge and ball angles in the parent's unit; ``limited``/``actuatorfrclimited`` as the child's
        autolimits say."""
        attrs = dict(attrs)
        if attrs.get("type", "hinge") in ("hinge", "ball"):
            scale = self.child.angle / self.parser.angle
            for key in ("range", "ref", "springref"):
                if key in attrs:
                    attrs[key] = _nums(float(x) * scale for x in attrs[key].split())
        for flag, rng in (("limited", "range"), ("actuatorfrclimited", "actuatorfrcrange")):
            if attrs.get(flag, "auto") == "auto":
                attrs[flag] = "true" if (rng in attrs and self.child.autolimits) else "false"
        return attrs

    def item(self, el: ET.Element, section: str) -> ET.Element | None:
        """A child section element whose references all lie in the graft, prefixed; ``None`` otherwise."""
        refs = [v for e in el.iter() for k, v in e.attrib.items() if k in _REFS]
        if not refs or not set(refs) <= self.names:
            return None
        if section == "actuator":
            attrs = dict(self.child.attrs(el, "main"))
            for flag, rng in (("ctrllimited", "ctrlrange"), ("forcelimited", "forcerange"),
                              ("actlimited", "actrange")):
                if attrs.get(flag, "auto") == "auto":
                    attrs[flag] = "true" if (rng in attrs and self.child.autolimits) else "false"
        else:
            attrs = dict(el.attrib)
        attrs = {k: (self.name(v) if k in _REFS else v) for k, v in attrs.items()}
        out = self.element(el, attrs)
        for sub in el:
            if isinstance(sub.tag, str):
                out.append(ET.Element(sub.tag, {k: (self.name(v) if k in _REFS else v) for k, v in sub.attrib.items()}))
        if out.get("name"):
            self.names.add(el.get("name"))
        return out


def _child_joints(child, root: ET.Element) -> tuple[dict[int, int], list[tuple[int, int]]]:
    """The child file's joints in MuJoCo's order: ``{id(element): index}`` and each one's ``(qposadr, nq)``."""
    index, layout, adr = {}, [], 0

    def visit(el: ET.Element, childclass: str) -> None:
        nonlocal adr
        for sub in el:
            if sub.tag in ("body", "frame"):
                visit(sub, sub.get("childclass", childclass))
            elif sub.tag in ("joint", "freejoint"):
                jtype = "free" if sub.tag == "freejoint" else child.attrs(sub, childclass).get("type", "hinge")
                n = {"free": 7, "ball": 4}.get(jtype, 1)
                index[id(sub)] = len(layout)
                layout.append((adr, n))
                adr += n

    for wb in root.findall("worldbody"):
        visit(wb, "main")
    return index, layout


def expand_attachments(parser, root: ET.Element) -> None:
    """Replace every ``<attach>`` of ``root`` (the parser's tree; its compiler and defaults already read)
    by the grafted subtree (module docstring); ``<asset><model>`` entries are consumed. A missing model,
    body or file, or a child whose inertia settings differ from the parent's, raises :class:`MjcfLiteError`."""
    models: dict[str, str] = {}
    for asset in root.findall("asset"):
        for el in [e for e in asset if e.tag == "model"]:
            if not el.get("name") or not el.get("file"):
                raise parser.fail(el, "needs name= and file=", None)
            file = el.get("file")
            models[el.get("name")] = file if os.path.isabs(file) else os.path.join(os.path.dirname(
                os.path.abspath(parser.path)), file)
            asset.remove(el)
    parents = {c: p for p in root.iter() for c in p}
    attaches = [e for e in root.iter("attach")]
    if not attaches:
        return
    parser.defaults[NEUTRAL_CLASS] = {}
    for k, att in enumerate(attaches):
        if att.get("model") not in models:
            raise parser.fail(att, f"names model={att.get('model')!r}, which is not an <asset><model>", None)
        child = type(parser)(models[att.get("model")], parser.accept)
        child.read_compiler()
        for d in child.root.findall("default"):
            child._read_defaults(d, child.defaults["main"])
        for key in ("fromgeom", "totalmass", "fitaabb"):
            if getattr(child, key) != getattr(parser, key) or not np.array_equal(child.groups, parser.groups):
                raise parser.fail(att, f"attaches {child.path!r}, whose <compiler> mass settings (inertiafromgeom, "
                                       "inertiagrouprange, settotalmass, fitaabb) differ from the model's; the reader "
                                       "derives inertia with one setting", "model_asset")
        graft = _Graft(parser, child, k, att.get("prefix", ""))
        graft.joints, layout = _child_joints(child, child.root)
        top = next((b for b in child.root.iter("body") if b.get("name") == att.get("body")), None)
        if top is None:
            raise parser.fail(att, f"names body={att.get('body')!r}, which is not a body of {child.path!r}", None)
        inherited = next((a.get("childclass") for a in _ancestors(child.root, top) if a.get("childclass")), "main")
        grafted = graft.body_tree(top, inherited)
        holder = parents[att]
        holder[list(holder).index(att)] = grafted
        _graft_meshes(graft, root)
        for section in _SECTIONS:
            items = [x for s in child.root.findall(section) for x in s if isinstance(x.tag, str)]
            kept = [x for x in (graft.item(el, section) for el in items) if x is not None]
            if kept:
                target = root.find(section)
                if target is None:
                    target = ET.SubElement(root, section)
                target.extend(kept)
        parser.attached_keys += [(graft.name(key.get("name")) or "", k, key.get("qpos"), layout)
                                 for kf in child.root.findall("keyframe") for key in kf]


def _ancestors(root: ET.Element, el: ET.Element) -> list[ET.Element]:
    parents = {c: p for p in root.iter() for c in p}
    out = []
    while el in parents:
        el = parents[el]
        out.append(el)
    return out


def _graft_meshes(graft: _Graft, root: ET.Element) -> None:
    """The child's ``<mesh>`` assets (defaults baked, files absolute in the child's meshdir), prefixed."""
    meshes = [m for a in graft.child.root.findall("asset") for m in a if m.tag == "mesh"]
    if not meshes:
        return
    asset = root.find("asset")
    if asset is None:
        asset = ET.SubElement(root, "asset")
    for m in meshes:
        attrs = dict(graft.child.attrs(m, "main"))
        attrs.pop("class", None)
        if not attrs.get("name"):
            attrs["name"] = os.path.splitext(os.path.basename(attrs.get("file", "")))[0]
        if attrs.get("file"):
            attrs["file"] = os.path.join(graft.child.meshdir, attrs["file"])
        attrs["name"] = graft.name(attrs["name"])
        attrs["class"] = NEUTRAL_CLASS
        asset.append(ET.Element("mesh", attrs))


def attached_key_qpos(parser, key: ET.Element | None, attached: tuple | None, joints: list, marks: list,
                      qpos0: np.ndarray) -> np.ndarray:
    """The ``qpos`` of a key of a model with grafted joints: a parent ``key`` (its qpos for the whole model,
    or for the joints not grafted, the grafted ones at ``qpos0``) or a child's key ``attached`` =
    ``(name, attach index, qpos text, child joint layout)`` (its values for the grafted joints, ``qpos0``
    elsewhere). ``joints``: the model's joint dicts; ``marks``: each one's ``ATTACH_MARK`` (``None``: not
    grafted)."""
    q = np.array(qpos0, dtype=np.float64)
    sizes = [(j["qposadr"], 7 if j["type"] == "free" else 4 if j["type"] == "ball" else 1) for j in joints]
    marks = [None if m is None else tuple(int(x) for x in m.split(":")) for m in marks]
    if key is not None:
        vals = [float(x) for x in (key.get("qpos") or "").split()]
        if not vals or len(vals) == len(q):
            return np.array(vals, dtype=np.float64) if vals else q
        own = [s for s, m in zip(sizes, marks) if m is None]
        if len(vals) != sum(n for _, n in own):
            raise MjcfLiteError(f"{parser.path}: key {key.get('name')!r} has {len(vals)} qpos numbers, the model "
                                f"nq={len(q)} ({sum(n for _, n in own)} without its attached models)")
        at = 0
        for adr, n in own:
            q[adr:adr + n] = vals[at:at + n]
            at += n
        return q
    name, index, text, layout = attached
    if text:
        vals = np.array([float(x) for x in text.split()], dtype=np.float64)
        for (adr, n), mark in zip(sizes, marks):
            if mark is not None and mark[0] == index:
                cadr, cn = layout[mark[1]]
                q[adr:adr + n] = vals[cadr:cadr + cn]
    return q

