"""What MotrixSim does not tell us about an MJCF file, read from the XML itself.

- Sensor order: MotrixSim has no ordered sensor-name list and orders sensors
  internally by kind; the contract uses MuJoCo's (document) order.
- Options MotrixSim parses but ignores (``option@integrator``, ``option@cone`` …):
  each is reported once with ``warnings.warn`` naming it.
- Height-field ``size`` (MotrixSim ignores the base depth ``size[3]``).
- The MJCF features the file uses, those of its ``<model>`` assets included (checked against what
  MotrixSim honours, ``_features.py``).
"""

from __future__ import annotations

import os
import threading
import warnings

import attrs

from unisim_core.plugin.mjcf_features import FeatureUse, scan_mjcf, walk_mjcf

__all__ = ["MjcfFacts", "read_mjcf", "warn_ignored_options", "IGNORED_ATTRIBUTES", "MotrixModellingWarning"]

#: (element, attribute) pairs MotrixSim 0.10 parses and ignores (its loader logs them as
#: "not support yet, will be ignored"), with what that means for the physics.
IGNORED_ATTRIBUTES: dict[tuple[str, str], str] = {
    ("option", "integrator"): "MotrixSim uses its own integrator (comparable to MuJoCo implicitfast)",
    ("option", "cone"): "friction cone type is not configurable (pyramidal/elliptic ignored)",
    ("option", "impratio"): "frictional-to-normal impedance ratio is not modelled",
    ("option", "noslip_iterations"): "no noslip solver pass",
    ("option", "solver"): "MotrixSim uses its own constraint solver",
    ("compiler", "coordinate"): "legacy global coordinates are not supported",
    ("option", "density"): "no fluid forces: MuJoCo's drag of bodies moving through the medium is not modelled",
    ("option", "viscosity"): "no fluid forces: MuJoCo's viscous drag is not modelled",
}


class MotrixModellingWarning(UserWarning):
    """An MJCF setting MotrixSim ignores, so results differ from MuJoCo's."""


@attrs.frozen
class SensorDecl:
    name: str
    kind: str  #: the MJCF tag, e.g. "framequat", "gyro"


@attrs.frozen
class MjcfFacts:
    sensors: tuple[SensorDecl, ...]
    ignored: tuple[tuple[str, str], ...]  #: ignored (element, attribute) pairs present
    hfield_sizes: dict[str, tuple[float, float, float, float]]
    uses: tuple[FeatureUse, ...]  #: every MJCF feature the file uses (``unisim_core.plugin.mjcf_features``)


def read_mjcf(path: str) -> MjcfFacts:
    sensors: list[SensorDecl] = []
    ignored: list[tuple[str, str]] = []
    hfields: dict[str, tuple[float, float, float, float]] = {}
    in_sensor: set[int] = set()
    for el, _, _ in walk_mjcf(path):
        if el.tag == "sensor":
            for s in el:
                if isinstance(s.tag, str) and s.tag != "plugin":
                    in_sensor.add(id(s))
                    sensors.append(SensorDecl(s.get("name", ""), s.tag))
        elif el.tag in ("option", "compiler"):
            for attr in el.attrib:
                if (el.tag, attr) in IGNORED_ATTRIBUTES and (el.tag, attr) not in ignored:
                    ignored.append((el.tag, attr))
        elif el.tag == "hfield" and el.get("size"):
            vals = [float(x) for x in el.get("size").split()]
            if len(vals) == 4:
                hfields[el.get("name", "")] = tuple(vals)  # type: ignore[assignment]
    return MjcfFacts(tuple(sensors), tuple(ignored), hfields, _uses(path))


def _uses(path: str, seen: frozenset[str] = frozenset()) -> tuple[FeatureUse, ...]:
    """``scan_mjcf`` of ``path`` and of the files of its ``<model>`` assets (``<attach>`` puts them in
    the model), recursively."""
    path = os.path.abspath(path)
    uses = scan_mjcf(path)
    for el, _, _ in walk_mjcf(path):
        file = el.get("file") if el.tag == "model" else None
        if file:
            sub = file if os.path.isabs(file) else os.path.join(os.path.dirname(path), file)
            if sub not in seen:
                uses += _uses(sub, seen | {path})
    return uses


_warned: set[tuple[str, str, str]] = set()
_warn_lock = threading.Lock()


def warn_ignored_options(path: str, ignored: tuple[tuple[str, str], ...]) -> None:
    """``warnings.warn`` once per (file, element@attribute) that MotrixSim ignores."""
    for el, attr in ignored:
        key = (os.path.abspath(path), el, attr)
        with _warn_lock:
            if key in _warned:
                continue
            _warned.add(key)
        warnings.warn(
            f"MotrixSim ignores MJCF {el}@{attr} in {os.path.basename(path)}: {IGNORED_ATTRIBUTES[(el, attr)]}",
            MotrixModellingWarning,
            stacklevel=4,
        )
