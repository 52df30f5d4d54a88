"""Offline stand-ins for UniLab's robot visual meshes (``unisim-unilab-standins go2``).

UniLab downloads a robot's meshes on first use. Without that network, this writes a small
tetrahedron OBJ for every mesh file the robot's MJCF names and that is missing, where UniLab looks
for them (so UniLab finds its completeness marker and downloads nothing). Then it compiles the
robot with MuJoCo and checks that every mesh geom is visual only (``contype == conaffinity == 0``,
explicit inertials): the stand-ins change how the robot looks, never its physics. Otherwise the
stand-ins are removed again and the robot is refused.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

__all__ = ["write_standins", "main"]

_TETRAHEDRON = "v 0 0 0\nv 0.01 0 0\nv 0 0.01 0\nv 0 0 0.01\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n"


def _robot_dir(robot: str) -> Path:
    import unilab.assets

    path = Path(unilab.assets.__file__).parent / "robots" / robot
    if not path.is_dir():
        raise ValueError(f"robot: UniLab has no robot {robot!r} under {path.parent}")
    return path


def _check_visual_only(model_file: Path) -> None:
    import mujoco

    model = mujoco.MjModel.from_xml_path(str(model_file))
    bad = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g) or f"#{g}" for g in range(model.ngeom)
           if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH
           and (model.geom_contype[g] or model.geom_conaffinity[g])]
    if bad:
        raise ValueError(f"{model_file}: mesh geoms {bad} collide; a stand-in mesh would change the physics")


def write_standins(robot: str) -> list[Path]:
    """Write the missing mesh stand-ins of UniLab's ``robot``; returns the files written."""
    root = _robot_dir(robot)
    written: list[Path] = []
    for xml in sorted(root.glob("*.xml")):
        text = xml.read_text()
        meshdir = re.search(r'meshdir="([^"]*)"', text)
        folder = root / (meshdir.group(1) if meshdir else "")
        for name in re.findall(r'<mesh\b[^>]*\bfile="([^"]+)"', text):
            path = folder / name
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(_TETRAHEDRON)
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
