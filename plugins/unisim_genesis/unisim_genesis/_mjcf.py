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
    return ET.tostring(root, encoding="unicode")
