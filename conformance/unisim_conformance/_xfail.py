"""Expected failures: ``{check id: reason}`` from a file, a hook or a fixture.

File formats (chosen by suffix):

- ``*.toml``: a table ``[expected_failures]`` of ``"check id" = "reason"`` (or top-level keys).
- anything else: one ``check id: reason`` per line; ``#`` starts a comment.

A check id is ``layer::name`` (e.g. ``conventions::yaw_quat_wxyz``) optionally followed by a
parameter ``[...]``; an id without parameter matches every parametrization. The bare test
function name (``test_yaw_quat_wxyz``) and a node id suffix are accepted too.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["load_expected_failures", "check_id", "match"]


def load_expected_failures(path: str | Path) -> dict[str, str]:
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"--unisim-xfail: file not found: {p}")
    text = p.read_text(encoding="utf-8")
    if p.suffix == ".toml":
        try:
            import tomllib
        except ImportError:  # Python 3.10
            import tomli as tomllib  # type: ignore[no-redef]
        data = tomllib.loads(text)
        table = data.get("expected_failures", data)
        out = {}
        for k, v in table.items():
            if not isinstance(v, str):
                raise ValueError(f"--unisim-xfail {p}: reason for {k!r} must be a string, got {v!r}")
            out[str(k)] = v
        return out
    out = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, reason = line.partition(": ")  # check ids contain "::", never ": "
        if not sep:
            key, reason = line.rstrip(":"), "expected failure"
        key = key.strip()
        if not key:
            raise ValueError(f"--unisim-xfail {p}:{lineno}: expected 'check_id: reason', got {line!r}")
        out[key] = reason.strip() or "expected failure"
    return out


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
