"""An MJCF file as one XML tree: ``<include>`` expanded as MuJoCo's parser does (``read_tree``), and
``MjcfLiteError``, the error of reading MJCF outside an engine (here and in
:mod:`unisim_core.plugin.mjcf_lite`). The contract reads the tree to bound a model's memory at
construction (:mod:`unisim_core.contract.construction`)."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

from unisim_core.contract.errors import InvalidInputError

__all__ = ["MjcfLiteError", "read_tree"]


class MjcfLiteError(InvalidInputError):
    """The MJCF file uses something outside the reader's subset.

    ``feature`` names the unsupported scene feature (e.g. ``"frictionloss"``) where the file is
    valid MJCF that the subset does not model; ``None`` for malformed input.
    """

    def __init__(self, message: str, feature: str | None = None) -> None:
        super().__init__(message)
        self.feature = feature


def _parse(path: str) -> ET.Element:
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise MjcfLiteError(f"{path}: not well-formed XML: {exc}") from None
    except OSError as exc:
        raise MjcfLiteError(f"{path}: cannot be read ({exc.strerror})") from None
    if root.tag != "mujoco":
        raise MjcfLiteError(f"{path}: root element is <{root.tag}>, expected <mujoco>")
    return root


def _resolve(file: str, main_dir: str, including: str) -> str:
    """MuJoCo's lookup: relative to the main file's folder first, then to the including file's."""
    if os.path.isabs(file):
        return file
    for folder in (main_dir, os.path.dirname(including)):
        cand = os.path.normpath(os.path.join(folder, file))
        if os.path.isfile(cand):
            return cand
    raise MjcfLiteError(f"{including}: <include file={file!r}>: no such file (looked in {main_dir!r} and "
                        f"{os.path.dirname(including)!r})")


def _expand(elem: ET.Element, main_dir: str, source: str, seen: set[str]) -> None:
    i = 0
    while i < len(elem):
        child = elem[i]
        if child.tag != "include":
            _expand(child, main_dir, source, seen)
            i += 1
            continue
        if "file" not in child.attrib:
            raise MjcfLiteError(f"{source}: <include> has no file= attribute")
        path = _resolve(child.get("file"), main_dir, source)
        if path in seen:
            raise MjcfLiteError(f"{source}: <include file={child.get('file')!r}> includes {path!r} a second time")
        seen.add(path)
        sub = _parse(path)
        _expand(sub, main_dir, path, seen)
        elem[i:i + 1] = list(sub)
        i += len(sub)


def read_tree(path: str | os.PathLike) -> ET.Element:
    """The ``<mujoco>`` root of ``path`` with each ``<include file>`` replaced, in place and
    recursively, by the children of the included file's ``<mujoco>`` root. A file is looked up
    relative to the main file's folder, then relative to the including file's (MuJoCo 3/4's order);
    a missing, malformed or repeated include raises :class:`MjcfLiteError` naming it."""
    path = os.fspath(path)
    root = _parse(path)
    _expand(root, os.path.dirname(os.path.abspath(path)), path, {os.path.normpath(os.path.abspath(path))})
    return root
