"""Check ids and matching for the expected failures a backend declares (``KNOWN_KIT_DEVIATIONS``).

A check id is ``layer::name`` (e.g. ``conventions::yaw_quat_wxyz``) optionally followed by a
parameter ``[...]``; an id without parameter matches every parametrization. The bare test
function name (``test_yaw_quat_wxyz``) and a node id suffix are accepted too.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["check_id", "match"]


def check_id(item) -> str:
    """``layer::name[param]`` of a kit item (module ``test_<layer>.py``, function ``test_<name>``)."""
    module = Path(str(item.path)).stem
    layer = module[5:] if module.startswith("test_") else module
    name = item.name[5:] if item.name.startswith("test_") else item.name
    return f"{layer}::{name}"


def match(item, entries: dict[str, str]) -> str | None:
    """The key of ``entries`` matching ``item`` (exact parameters beat the bare id)."""
    cid = check_id(item)
    base = cid.split("[", 1)[0]
    func = item.name
    for key in (cid, base, func, getattr(item, "originalname", func)):
        if key in entries:
            return key
    for key in entries:
        if "::" in key and item.nodeid.endswith(key) and key != base:
            return key
    return None
