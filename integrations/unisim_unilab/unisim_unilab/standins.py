"""Offline stand-ins for UniLab's robot visual meshes (``unisim-unilab-standins go2``).

UniLab downloads a robot's meshes and textures on first use. Without that network, this writes a
small tetrahedron (OBJ or STL) for every mesh file and a 1x1 PNG for every texture the robot's MJCF
names and that is missing, plus UniLab's completeness markers, where UniLab looks for them (so it
downloads nothing). Then it compiles each scene of the robot with MuJoCo and checks that every mesh
geom is visual only (``contype == conaffinity == 0``): the stand-ins change how the robot looks,
not how it collides (Go2's and G1's bodies carry explicit inertials; G1's visual meshes have
``density="0"``). Otherwise the stand-ins are removed again and the robot is refused.
"""

from __future__ import annotations

import argparse
import re
import struct
import zlib
from pathlib import Path

import numpy as np

__all__ = ["write_standins", "main"]

_TETRAHEDRON = "v 0 0 0\nv 0.01 0 0\nv 0 0.01 0\nv 0 0 0.01\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n"


def _stl() -> bytes:
    """The tetrahedron as binary STL."""
    v = np.array([[0, 0, 0], [0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]], dtype=np.float32)
    faces = [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]
    out = bytearray(80) + struct.pack("<I", len(faces))
    for f in faces:
        out += struct.pack("<3f", 0, 0, 0) + v[list(f)].tobytes() + b"\0\0"
    return bytes(out)


def _png() -> bytes:
    """A 1x1 grey PNG."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\0\x80\x80\x80")) + chunk(b"IEND", b""))


def _standin(path: Path) -> None:
    suffix = path.suffix.lower()
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".obj":
        path.write_text(_TETRAHEDRON)
    elif suffix == ".stl":
        path.write_bytes(_stl())
    elif suffix == ".png":
        path.write_bytes(_png())
    else:
        raise ValueError(f"{path}: no stand-in for {suffix!r} files (OBJ, STL and PNG are made)")


def _robot_dir(robot: str) -> Path:
    import unilab.assets

    path = Path(unilab.assets.__file__).parent / "robots" / robot
    if not path.is_dir():
        raise ValueError(f"robot: UniLab has no robot {robot!r} under {path.parent}")
    return path


def _check_visual_only(model_file: Path) -> None:
    import mujoco

    try:
        model = mujoco.MjModel.from_xml_path(str(model_file))
    except ValueError as exc:
        if "Error opening file" in str(exc):
            return  # a scene with assets of its own (terrain meshes), not the robot's
        raise
    bad = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g) or f"#{g}" for g in range(model.ngeom)
           if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH
           and (model.geom_contype[g] or model.geom_conaffinity[g])]
    if bad:
        raise ValueError(f"{model_file}: mesh geoms {bad} collide; a stand-in mesh would change the physics")


def write_standins(robot: str) -> list[Path]:
    """Write the missing mesh stand-ins of UniLab's ``robot``; returns the files written."""
    from unilab.assets import ASSETS_ROOT_PATH
    from unilab.assets.hub import ROBOT_ASSET_SPECS

    root = _robot_dir(robot)
    wanted: list[Path] = []
    for xml in sorted(root.glob("*.xml")):
        text = xml.read_text()
        for tag, attr in (("mesh", "meshdir"), ("texture", "texturedir")):
            folder = re.search(rf'{attr}="([^"]*)"', text)
            folder = root / (folder.group(1) if folder else "")
            wanted += [folder / name for name in re.findall(rf'<{tag}\b[^>]*\bfile="([^"]+)"', text)]
    # UniLab's completeness markers: present, it downloads nothing
    wanted += [Path(ASSETS_ROOT_PATH) / folder / marker for folder, marker, *_ in ROBOT_ASSET_SPECS.get(robot, ())]
    written: list[Path] = []
    for path in dict.fromkeys(wanted):
        if not path.exists():
            _standin(path)
            written.append(path)
    try:
        for xml in sorted(root.glob("scene*.xml")):
            _check_visual_only(xml)
    except BaseException:
        for path in written:
            path.unlink()
        raise
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("robots", nargs="+", help="UniLab robot folders, e.g. go2")
    args = parser.parse_args(argv)
    for robot in args.robots:
        written = write_standins(robot)
        print(f"{robot}: {len(written)} stand-in meshes written")
    return 0
