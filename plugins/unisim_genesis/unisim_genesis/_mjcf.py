"""The MJCF text handed to Genesis' importer: the file as MuJoCo reads it, in one document.

Genesis' importer inlines ``<include>`` itself but resolves a nested include against the including
file's path as if it were a folder (pal_tiago: ``tiago_motor.xml/tiago.xml``), and it sets
``meshdir``/``texturedir`` to its own folder, which then override the file's ``<compiler assetdir>``
(google_robot: ``Error opening file 'link_base_0_00.stl'``). So the backend expands the includes with
``mjcf_lite.read_tree`` (MuJoCo's lookup) and writes every asset folder as the absolute path MuJoCo
would use (``meshdir``/``texturedir``, else ``assetdir``, relative to the main file's folder), then
gives Genesis the text.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

__all__ = ["flattened_mjcf"]

#: MuJoCo's default ``solref`` of contacts, joint limits, dof friction and equalities. Genesis' importer puts
#: its own minimal time constant in the file's top ``<default>`` where the file does not set one (a stiffer
#: constraint than MuJoCo's); written there explicitly, the file's defaults are MuJoCo's again.
_MUJOCO_SOLREF = "0.02 1"
_SOLVER_DEFAULTS = {"geom": ("solref",), "joint": ("solreflimit", "solreffriction"), "equality": ("solref",)}


def flattened_mjcf(root: ET.Element, path: str) -> str:
    """``root`` (``read_tree(path)``: includes expanded) as MJCF text whose asset folders are absolute."""
    folder = os.path.dirname(os.path.abspath(path))
    compilers = list(root.iter("compiler")) or [ET.SubElement(root, "compiler")]
    last = lambda key, default=None: next((c.get(key) for c in reversed(compilers) if c.get(key) is not None),  # noqa: E731
                                          default)  # a later <compiler> overrides an earlier one
    assetdir = last("assetdir")
    for key in ("meshdir", "texturedir"):
        given = last(key, assetdir)
        for c in compilers:
            c.set(key, os.path.join(folder, given or ""))
    for c in compilers:
        c.attrib.pop("assetdir", None)
    for model in root.iter("model"):  # <asset><model file>: MuJoCo reads it from the main file's folder
        if model.get("file") is not None:
            model.set("file", os.path.join(folder, model.get("file")))
    main = root.find("default")
    if main is None:
        main = ET.SubElement(root, "default")
    for tag, keys in _SOLVER_DEFAULTS.items():
        elem = main.find(tag)
        if elem is None:
            elem = ET.SubElement(main, tag)
        for key in keys:
            elem.attrib.setdefault(key, _MUJOCO_SOLREF)
    return ET.tostring(root, encoding="unicode")
