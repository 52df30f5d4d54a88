"""Scene transfer: the host packs the model files, each shard writes them to a temp dir.

A cluster node need not share the driver's file system, so the model travels
with the construction request. ``directory`` mode sends the model file's whole
directory (relative includes, meshes and textures beside it resolve);
``file`` mode sends the model file alone (relative assets do not resolve);
``path`` mode sends the path unchanged (for shared file systems).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from unisim_core.contract.config import SceneCfg
from unisim_core.contract.errors import InvalidInputError

__all__ = ["pack_scene", "materialize_scene", "MAX_DIR_FILES"]

log = logging.getLogger("unisim_ray")

#: ``auto`` mode sends the directory only when it holds at most this many files.
MAX_DIR_FILES = 2000
_SKIP_DIRS = {"__pycache__", ".git", ".hg", ".svn", ".venv", "node_modules"}


def _walk(root: Path, max_bytes: int, max_files: int) -> dict[str, bytes] | None:
    """``{relative posix path: bytes}`` of the files under ``root``; ``None`` when over the limits."""
    listing: list[Path] = []
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            p = Path(dirpath, name)
            if not p.is_file():
                continue
            total += p.stat().st_size
            listing.append(p)
            if total > max_bytes or len(listing) > max_files:
                return None
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in listing}


def _pack_file(path: str, mode: str, max_bytes: int, prefix: str) -> tuple[dict[str, bytes], str, str]:
    p = Path(path).resolve()
    if mode in ("auto", "directory"):
        files = _walk(p.parent, max_bytes, MAX_DIR_FILES)
        if files is not None:
            return {f"{prefix}/{k}": v for k, v in files.items()}, f"{prefix}/{p.name}", "directory"
        if mode == "directory":
            raise InvalidInputError(
                f"scene_transfer='directory': {p.parent} holds more than {max_bytes / 2**20:g} MB or "
                f"{MAX_DIR_FILES} files; raise scene_dir_limit_mb, or use 'path' on a shared file system"
            )
        log.warning("unisim_ray: %s is too large to send (> %g MB or %d files); sending %s alone — "
                    "relative includes/meshes will not resolve on remote nodes (scene_transfer='path' "
                    "for a shared file system)", p.parent, max_bytes / 2**20, MAX_DIR_FILES, p.name)
    return {f"{prefix}/{p.name}": p.read_bytes()}, f"{prefix}/{p.name}", "file"


def pack_scene(scene: SceneCfg, mode: str, limit_mb: float) -> tuple[dict[str, Any], str]:
    """``(payload, how)``: what a shard needs to rebuild ``scene``, and the mode used."""
    common = {"default_keyframe": scene.default_keyframe, "terrain": scene.terrain}
    if mode == "path":
        return {"kind": "path", "model": scene.model_file, "visual": scene.visual_model_file, **common}, "path"
    max_bytes = int(limit_mb * 2**20)
    files, model, how = _pack_file(scene.model_file, mode, max_bytes, "model")
    visual = None
    if scene.visual_model_file is not None:
        vpath = Path(scene.visual_model_file).resolve()
        mdir = Path(scene.model_file).resolve().parent
        if how == "directory" and vpath.is_relative_to(mdir):
            visual = f"model/{vpath.relative_to(mdir).as_posix()}"
        else:
            vfiles, visual, _ = _pack_file(str(vpath), mode, max_bytes, "visual")
            files.update(vfiles)
    return {"kind": "files", "files": files, "model": model, "visual": visual, **common}, how


def materialize_scene(payload: dict[str, Any], workdir: str) -> SceneCfg:
    """Write the packed files under ``workdir`` and return the shard's ``SceneCfg``."""
    if payload["kind"] == "path":
        model, visual = payload["model"], payload["visual"]
    else:
        root = Path(workdir)
        for rel, data in payload["files"].items():
            dest = (root / rel).resolve()
            if not dest.is_relative_to(root.resolve()):
                raise InvalidInputError(f"scene payload: path {rel!r} escapes the shard's scene directory")
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        model = str(root / payload["model"])
        visual = None if payload["visual"] is None else str(root / payload["visual"])
    return SceneCfg(model, visual_model_file=visual, default_keyframe=payload["default_keyframe"],
                    terrain=payload["terrain"])
