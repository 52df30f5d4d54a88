"""Reading and patching an MJCF scene file with the standard library (no engine): its
``<option timestep>``, whether it has a keyframe, and a copy with ``<option>`` attributes set.
"""

from __future__ import annotations

import os
import re
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

__all__ = ["scene_timestep", "keyframe_names", "has_keyframe", "patched_scene"]


def scene_timestep(path: str, default: float = 0.002) -> float:
    """``<option timestep>`` of an MJCF file (``default`` when absent)."""
    try:
        opt = ET.parse(path).getroot().find("option")
    except ET.ParseError:
        return default
    if opt is not None and opt.get("timestep"):
        return float(opt.get("timestep"))
    return default


def keyframe_names(path: str) -> list[str]:
    """Names of the keyframes of the MJCF ``path`` as MuJoCo finds them: through ``<include>``
    (a Menagerie ``scene.xml`` includes the robot file that holds them), unnamed ones left out;
    ``[]`` for a file that does not parse."""
    from unisim_core.contract.mjcf_tree import read_tree
    from unisim_core.plugin.mjcf_lite import MjcfLiteError

    try:
        root = read_tree(path)
    except (MjcfLiteError, ET.ParseError, OSError):
        return []
    return [k.get("name") for k in root.iter("key") if k.get("name")]


def has_keyframe(path: str, name: str) -> bool:
    """Whether the MJCF ``path`` (with its includes) has a keyframe ``<key name=NAME>``."""
    return name in keyframe_names(path)


def patched_scene(path: str, mjcf_options: Mapping[str, object], keep: list[str]) -> str:
    """A copy of the MJCF ``path`` with ``<option KEY="VALUE">`` set (e.g. ``noslip_iterations``).

    Written beside the original when the file refers to other files (relative assets),
    else into a temporary folder; the path is appended to ``keep`` for later removal.
    """
    if not mjcf_options:
        return path
    tree = ET.parse(path)
    root = tree.getroot()
    opt = root.find("option")
    if opt is None:
        opt = ET.Element("option")
        root.insert(0, opt)
    for k, v in mjcf_options.items():
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k):
            raise ValueError(f"--scene-option: bad MJCF option name {k!r}")
        opt.set(k, str(v))
    refers = any(e.get("file") for e in root.iter()) or root.find("include") is not None
    folder = os.path.dirname(path) if refers else None
    fd, out = tempfile.mkstemp(suffix=".xml", prefix=f".{Path(path).stem}.unisim-compare-", dir=folder)
    with os.fdopen(fd, "wb") as f:
        tree.write(f)
    keep.append(out)
    return out
