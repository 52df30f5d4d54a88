"""``<frame pos quat|euler|... childclass>``: a coordinate frame grouping bodies, joints, geoms and sites,
which MuJoCo's compiler dissolves into their poses (measured against ``mujoco.MjModel``).

:func:`expand_frames` replaces each frame (nested ones first) by its children: a joint's anchor and
axis moved into the body's frame; a body's ``pos``/``quat`` composed with the frame's (the frame's
``childclass`` written on it unless it has its own); a geom or site written with every attribute
resolved from its defaults class (the frame's ``childclass`` when it names none), its pose (a
``fromto``'s centre and axis, sized as the reader sizes it) composed with the frame's. Cameras and
lights are dropped (the reader skips them anyway).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from unisim_core.contract import quat as Q
from unisim_core.plugin.mjcf_lite._errors import MjcfLiteError
from unisim_core.plugin.mjcf_lite._inertia import z_to_quat

__all__ = ["FRAME_CLASS", "expand_frames"]

#: The (empty) default class of geoms and sites written out of a frame, their defaults already applied.
FRAME_CLASS = "__unisim_frame"
_ORIENTATIONS = ("quat", "euler", "axisangle", "xyaxes", "zaxis")
_FROMTO = ("capsule", "cylinder", "box", "ellipsoid")


def _num(values) -> str:
    return " ".join(repr(float(x)) for x in values)


def _pose(parser, attrs: dict, el: ET.Element) -> tuple[np.ndarray, np.ndarray]:
    pos = np.array([float(x) for x in attrs.get("pos", "0 0 0").split()], dtype=np.float64)
    if pos.size != 3:
        raise MjcfLiteError(f"{parser.path}: <{el.tag}> pos: expected 3 numbers, got {attrs.get('pos')!r}")
    return pos, parser.orient(attrs, el)


def _moved(parser, el: ET.Element, pos: np.ndarray, quat: np.ndarray, childclass: str) -> ET.Element | None:
    """``el`` (a frame's child) with the frame's pose ``(pos, quat)`` composed into its own."""
    if el.tag in ("camera", "light"):
        return None
    if el.tag not in ("body", "geom", "site", "joint"):
        raise MjcfLiteError(f"{parser.path}: <{el.tag}> in a <frame> is not supported (in a frame: body, joint, "
                            "geom, site, frame, camera, light)", "frame")
    if el.tag == "joint":  # an anchor and an axis
        attrs = dict(parser.attrs(el, childclass), **{"class": FRAME_CLASS})
        own = np.array([float(x) for x in attrs.get("pos", "0 0 0").split()], dtype=np.float64)
        axis = np.array([float(x) for x in attrs.get("axis", "0 0 1").split()], dtype=np.float64)
        attrs["pos"], attrs["axis"] = _num(pos + Q.quat_apply(quat, own)), _num(Q.quat_apply(quat, axis))
        return ET.Element("joint", attrs)
    if el.tag == "body":
        attrs = dict(el.attrib)
        attrs.setdefault("childclass", childclass)
    else:
        attrs = dict(parser.attrs(el, childclass))
        attrs["class"] = FRAME_CLASS
    gtype = attrs.get("type", "sphere")
    if el.tag == "geom" and "fromto" in attrs and gtype in _FROMTO:  # as the reader sizes it, in the frame
        a, b = np.array([float(x) for x in attrs.pop("fromto").split()], dtype=np.float64).reshape(2, 3)
        size = [float(x) for x in attrs.get("size", "0").split()] + [0.0, 0.0, 0.0]
        if gtype in ("box", "ellipsoid"):
            size[1] = size[0]
        size[1 if gtype in ("capsule", "cylinder") else 2] = np.linalg.norm(b - a) / 2
        attrs["size"] = _num(size[:3])
        own_pos, own_quat = (a + b) / 2, z_to_quat(a - b)
    else:
        own_pos, own_quat = _pose(parser, attrs, el)
    attrs = {k: v for k, v in attrs.items() if k not in _ORIENTATIONS}
    attrs["pos"], attrs["quat"] = _num(pos + Q.quat_apply(quat, own_pos)), _num(Q.quat_mul(quat, own_quat))
    out = ET.Element(el.tag, attrs)
    out.extend(list(el))
    out.tail = el.tail
    return out


def expand_frames(parser, elem: ET.Element, childclass: str) -> None:
    """Replace every ``<frame>`` child of ``elem`` (a body or the worldbody, whose children take
    ``childclass``) by its children, in place (see the module docstring)."""
    i = 0
    while i < len(elem):
        frame = elem[i]
        if frame.tag != "frame":
            i += 1
            continue
        parser.defaults.setdefault(FRAME_CLASS, {})
        inner = frame.get("childclass", childclass)
        if inner not in parser.defaults:
            raise parser.fail(frame, f"has childclass={inner!r}, which is not a default class", None)
        expand_frames(parser, frame, inner)
        pos, quat = _pose(parser, frame.attrib, frame)
        kids = [_moved(parser, c, pos, quat, inner) for c in frame if isinstance(c.tag, str)]
        kids = [k for k in kids if k is not None]
        elem[i:i + 1] = kids
        i += len(kids)
