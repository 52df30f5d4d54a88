"""Broken backends that load a kit scene with one edit (a feature dropped, contacts removed): the
scene is rewritten to a temporary file for the construction, then removed."""

from __future__ import annotations

import os
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Callable

import attrs


def construct_edited(init: Callable[..., None], scene, edit: Callable[[ET.ElementTree], None], *args, **kwargs) -> None:
    """``init(scene', *args, **kwargs)`` with ``scene'`` the kit scene after ``edit(tree)`` (a standalone
    file: the kit's scenes name no other files)."""
    tree = ET.parse(scene.model_file)
    edit(tree)
    fd, path = tempfile.mkstemp(suffix=".xml")
    os.close(fd)
    try:
        tree.write(path)
        init(attrs.evolve(scene, model_file=path), *args, **kwargs)
    finally:
        os.unlink(path)
