"""MJCF sensors an engine lacks, derived from what it has: the same sensor names on every engine.

Two kinds, each computed once here from the contract's state:

- ``<contact>`` sensors, from the ``contact_forces`` capability (net contact force per body): the
  sensor's moving side (``geom2``/``body2``, or side 1 when side 2 is static) is reduced to its
  body, the other side must be static (the world's geoms) unless the backend filters contacts
  (``contact_filters``: ``against=`` that side's body). ``data="found"`` is the only field:
  **1 when the body's contact force with that side exceeds** ``threshold`` (N, default 1), else 0.
  An engine that reports net forces cannot count contacts: a sensor whose ``num`` contacts could
  be several reads 1 for any number; and a geom's contacts are its body's (a body with several
  colliding geoms reads them all).
- ``<framexaxis>``/``<frameyaxis>``/``<framezaxis>``, from a ``<framequat>`` of the same frame (the
  rotation's column, world frame, unit).
- frame sensors of a geom (``objtype="geom"``, feature ``frame_sensor_objtype``): the copy adds a
  site at the geom's pose (its ``pos`` and orientation, default classes applied) in the geom's body
  and points the sensor at it: the same frame, so the same values (exact, not an approximation).

:func:`derive_scene` writes a copy of a scene with those sensors replaced for the engine
(``<contact>`` removed, frame axes turned into ``<framequat>`` of the same name) beside the
original (so relative asset paths still resolve; ``<include>`` files expanded); a
:class:`DerivedSensors` built on the backend of that copy reads them. Refused, naming the sensor:
any other ``data``, both sides moving without ``contact_filters``, ``site``/``subtree`` sides.
"""

from __future__ import annotations

import os
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence

import attrs
import numpy as np

from unisim_core.contract import quat as Q
from unisim_core.contract.capabilities import Capability
from unisim_core.contract.errors import UnsupportedCapabilityError
from unisim_core.contract.mjcf_tree import read_tree
from unisim_core.plugin.mjcf_features import _defaults, _resolved  # the scanner's default-class rules

__all__ = ["DERIVABLE", "DerivedSpec", "derive_scene", "DerivedSensors"]

#: Sensor features (``mjcf_features`` names) this module can serve for an engine that refuses them.
DERIVABLE = frozenset({"contact_sensor", "framexaxis_sensor", "frameyaxis_sensor", "framezaxis_sensor",
                       "frame_sensor_objtype"})
#: Prefix of the sites the copy adds for frame sensors of geoms.
GEOM_SITE_PREFIX = "__unisim_geom_site_"
_ORIENTATION = ("quat", "euler", "axisangle", "xyaxes", "zaxis")
_AXES = {"framexaxis": 0, "frameyaxis": 1, "framezaxis": 2}


@attrs.frozen
class DerivedSpec:
    """One derived sensor: ``kind`` (``"contact"`` or an axis tag), the MJCF element's attributes."""

    name: str
    kind: str
    attrib: dict


def derive_scene(model_file: str, features: Iterable[str]) -> tuple[str, tuple[DerivedSpec, ...]]:
    """``(copy's path, specs)``: ``model_file`` with the sensors of ``features`` (a subset of
    :data:`DERIVABLE`) replaced (see the module docstring). The caller removes the copy."""
    tags = {f.removesuffix("_sensor") for f in features}
    root = read_tree(model_file)
    specs = []
    for sensor in root.iter("sensor"):
        for el in list(sensor):
            if el.tag not in tags:
                continue
            name = el.get("name")
            if not name:
                raise UnsupportedCapabilityError("derived sensors", f"{el.tag}_sensor",
                                                 f"an unnamed <{el.tag}> sensor cannot be derived; name it")
            specs.append(DerivedSpec(name, "contact" if el.tag == "contact" else el.tag, dict(el.attrib)))
            if el.tag == "contact":
                sensor.remove(el)
            else:
                el.tag = "framequat"
    if "frame_sensor_objtype" in features:
        _geom_frames_to_sites(root)
    folder = os.path.dirname(os.path.abspath(model_file))
    fd, path = tempfile.mkstemp(prefix=".unisim-derived-", suffix=".xml", dir=folder)
    with os.fdopen(fd, "wb") as out:
        out.write(ET.tostring(root))
    return path, tuple(specs)


class DerivedSensors:
    """Reads the derived sensors ``specs`` on ``backend`` (built on :func:`derive_scene`'s copy).

    ``names``/``widths`` list them; ``read(names)`` -> ``(num_envs, total width)`` in ``names``
    order (the backend's ``np_dtype``). Contact sensors: ``threshold`` N (see the module docstring).
    """

    def __init__(self, backend, specs: Sequence[DerivedSpec], threshold: float = 1.0) -> None:
        self.backend = backend
        self.specs = {s.name: s for s in specs}
        self.widths = {s.name: 1 if s.kind == "contact" else 3 for s in specs}
        contacts = [s for s in specs if s.kind == "contact"]
        self._bindings = {}
        info = backend.model_info
        for spec in contacts:
            moving, other = self._sides(spec, info)
            against = None if other is None else [int(other)]
            need = Capability.CONTACT_FORCES if against is None else Capability.CONTACT_FILTERS
            if need not in backend.capabilities:
                raise UnsupportedCapabilityError(backend.name, "contact_sensor",
                                                 f"sensor {spec.name!r}: deriving it needs {need.value}")
            self._bindings[spec.name] = backend.bind_contact_forces([int(moving)], against=against,
                                                                   threshold=float(threshold))

    @staticmethod
    def _sides(spec: DerivedSpec, info) -> tuple[int, int | None]:
        """``(moving body, body of the other side or None when it is static)``."""
        a = spec.attrib
        for bad in ("site", "subtree1", "subtree2"):
            if bad in a:
                raise UnsupportedCapabilityError("derived sensors", "contact_sensor",
                                                 f"sensor {spec.name!r}: a {bad}= side cannot be derived")
        data = a.get("data", "found").split()
        if data != ["found"]:
            raise UnsupportedCapabilityError("derived sensors", "contact_sensor",
                                             f"sensor {spec.name!r}: data={a.get('data')!r}; only 'found' is derived")

        def body(side: str) -> int | None:
            if f"geom{side}" in a:
                return int(info.geom_body[info.geom_names.index(a[f"geom{side}"])])
            if f"body{side}" in a:
                return info.body_names.index(a[f"body{side}"])
            return None

        b1, b2 = body("1"), body("2")
        if b2 in (None, 0):
            b1, b2 = b2, b1
        if b2 in (None, 0):
            raise UnsupportedCapabilityError("derived sensors", "contact_sensor",
                                             f"sensor {spec.name!r}: neither side is a moving body")
        static = b1 is None or b1 == 0 or info.body_parent[b1] == 0 and not _moves(info, b1)
        return b2, None if static else b1

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.specs)

    def read(self, names: Sequence[str], native=None) -> np.ndarray:
        """``native(names)`` reads the copy's own sensors (default ``get_sensor_data_batch``; pass a
        ``SensorClock``'s ``read`` to keep its timing for the frame axes)."""
        native = native or self.backend.get_sensor_data_batch
        cols = []
        for name in names:
            spec = self.specs[name]
            if spec.kind == "contact":
                cols.append(self._bindings[name].in_contact()[:, :1].astype(self.backend.np_dtype))
            else:
                quat = native((name,))  # the framequat the copy carries
                axis = np.zeros((len(quat), 3))
                axis[:, _AXES[spec.kind]] = 1.0
                cols.append(Q.quat_apply(quat, axis).astype(self.backend.np_dtype))
        if not cols:
            return np.zeros((self.backend.num_envs, 0), dtype=self.backend.np_dtype)
        return np.concatenate(cols, axis=1)


def _geom_frames_to_sites(root: ET.Element) -> None:
    """Point frame sensors of geoms at sites added at those geoms' poses (see the module docstring)."""
    elements, stack = [], [(root, [])]
    while stack:
        el, anc = stack.pop()
        elements.append((el, anc, ""))
        stack.extend((c, anc + [el]) for c in reversed(list(el)))
    defaults = _defaults(elements)
    geoms = {el.get("name"): (el, anc) for el, anc, _ in elements if el.tag == "geom" and el.get("name")}
    for sensor in root.iter("sensor"):
        for el in sensor:
            if not el.tag.startswith("frame") or el.get("objtype") != "geom":
                continue
            name = el.get("objname")
            if name not in geoms:
                raise UnsupportedCapabilityError("derived sensors", "frame_sensor_objtype",
                                                 f"sensor {el.get('name')!r}: no geom named {name!r}")
            geom, anc = geoms[name]
            if any(s.get("name") == GEOM_SITE_PREFIX + name for s in anc[-1].findall("site")):
                el.set("objtype", "site")
                el.set("objname", GEOM_SITE_PREFIX + name)
                continue
            if _resolved(geom, anc, defaults, "fromto", "") or (anc and anc[-1].tag != "body"):
                raise UnsupportedCapabilityError("derived sensors", "frame_sensor_objtype",
                                                 f"sensor {el.get('name')!r}: geom {name!r} is placed by fromto "
                                                 "or outside a body")
            site = ET.SubElement(anc[-1], "site", name=GEOM_SITE_PREFIX + name,
                                 pos=_resolved(geom, anc, defaults, "pos", "0 0 0"))
            for key in _ORIENTATION:
                value = _resolved(geom, anc, defaults, key, "")
                if value:
                    site.set(key, value)
                    break
            el.set("objtype", "site")
            el.set("objname", site.get("name"))


def _moves(info, body: int) -> bool:
    """Whether ``body`` has a joint (a world child without one is static)."""
    return bool(np.any(np.asarray(info.joint_body) == body))
