"""Robot configs for the locomotion task, and the scene files built from them (motors, terrain).

A :class:`RobotCfg` says everything the task needs to drive a legged robot: the MJCF file, the
keyframe its default pose comes from, the feet, the actuator model and the action scale. Where
``motors=True`` the robot's own MJCF actuators are replaced by one gear-1 torque ``<motor>`` per
joint of ``joint_names`` (``ctrlrange`` = ``±effort_limit`` of its actuator config), the way Isaac
Lab and mjlab drive a robot with their own actuator models. :func:`build_scene` writes the file
the backends load: the robot (asset paths made absolute, so the original folder is only read),
with a generated height-field terrain or a flat floor. The file lives in a cache folder keyed by
its content (``UNISIM_GYM_SCENES``, default ``<tmp>/unisim_gym_scenes``).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import attrs
import numpy as np

from unisim_core import InvalidInputError
from unisim_core.scenes import scene_path
from unisim_core.tools.actuators import ActuatorCfg, DCMotorCfg

from ._terrain import GeneratedTerrain

__all__ = ["RobotCfg", "QUADRUPED", "GO1", "GO1_XML", "build_scene", "effort_limits"]

#: The Menagerie Unitree Go1 in the project's corpus (relative to the repository root's parent).
GO1_XML = str(Path(__file__).resolve().parents[3].parent / "shared" / "corpus" / "menagerie" / "unitree_go1" /
              "go1.xml")


def _names(value) -> tuple[str, ...]:
    return tuple(value)


def _positive(inst, attribute, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value) or value <= 0:
        raise InvalidInputError(f"RobotCfg.{attribute.name}: expected a positive number, got {value!r}")


def _collisions(inst, attribute, value) -> None:
    if value not in ("all", "feet_and_base"):
        raise InvalidInputError(f"RobotCfg.{attribute.name}: expected 'all' or 'feet_and_base', got {value!r}")


def _condim(inst, attribute, value) -> None:
    if value is not None and (isinstance(value, bool) or value not in (1, 3, 4, 6)):
        raise InvalidInputError(f"RobotCfg.{attribute.name}: expected None or a MuJoCo condim (1, 3, 4, 6), "
                                f"got {value!r}")


@attrs.frozen(kw_only=True)
class RobotCfg:
    """A legged robot for :class:`~unisim_gym.VelocityTrackingTask` (SI units).

    - ``model_file``: its MJCF; ``floor``: the name of its ground geom (``None``: it has none and
      the scene adds one); ``keyframe``: the default pose (base height, joint angles).
    - ``joint_names``: the actuated joints, in action order (``()``: the model's actuators, in
      their order). ``motors``: replace the model's actuators with gear-1 torque motors on them.
    - ``actuators``: the actuator model (:mod:`unisim_core.tools.actuators`; needed for motors, refused
      for position servos); ``()``: the model's position servos take ``ctrl`` as joint targets.
    - ``mjcf_option``: attributes written onto the scene's ``<option>`` (e.g. a cheaper friction cone).
    - ``action_scale``: joint target = default + ``action_scale`` x action (rad).
    - ``foot_bodies`` with ``foot_offset`` (the foot centre in the body frame) and ``foot_radius``;
      ``foot_geoms``: the feet's collision geoms (friction randomization); ``base_geom``: a box
      whose lowest corner touching the ground terminates an episode where contact sensing is off
      or missing; without one, the base origin below ``min_base_height`` m over the ground does.
    - ``collisions``: ``"all"`` (the file's collision geoms) or ``"feet_and_base"``: only the
      ``foot_geoms`` and the geoms of the floating base collide (every other robot geom gets
      ``contype = conaffinity = 0``), as MuJoCo Playground's Go1 ``feetonly`` models; a fall still
      ends the episode through the base. ``foot_condim``: the feet's contact dimension (``None``:
      the file's; 3 = sliding friction only, cheaper than the rolling friction of 6).
    """

    name: str
    model_file: str
    keyframe: str = "home"
    floor: str | None = "floor"
    joint_names: tuple[str, ...] = attrs.field(default=(), converter=_names)
    motors: bool = False
    actuators: tuple[ActuatorCfg, ...] = attrs.field(default=(), converter=tuple)
    action_scale: float = attrs.field(default=0.25, validator=_positive)
    foot_bodies: tuple[str, ...] = attrs.field(converter=_names)
    foot_offset: tuple[float, float, float] = attrs.field(converter=lambda v: tuple(float(x) for x in v))
    foot_radius: float = attrs.field(validator=_positive)
    foot_geoms: tuple[str, ...] = attrs.field(default=(), converter=_names)
    base_geom: str | None = None
    mjcf_option: dict[str, str] = attrs.field(factory=dict, converter=dict)
    min_base_height: float = attrs.field(default=0.1, validator=_positive)
    collisions: str = attrs.field(default="all", validator=_collisions)
    foot_condim: int | None = attrs.field(default=None, validator=_condim)

    def __attrs_post_init__(self) -> None:
        if self.motors and not (self.joint_names and self.actuators):
            raise InvalidInputError("RobotCfg.motors: torque motors need joint_names and an actuator model "
                                    "(actuators=...)")
        if (self.collisions != "all" or self.foot_condim is not None) and not self.foot_geoms:
            raise InvalidInputError(f"RobotCfg.foot_geoms: collisions={self.collisions!r} and foot_condim="
                                    f"{self.foot_condim!r} name the feet by their geoms; got none")


#: The shipped 12-DoF quadruped: position servos (kp 60, kv 2) on a plane floor.
QUADRUPED = RobotCfg(name="quadruped", model_file=str(scene_path("quadruped")),
                     foot_bodies=("FL_calf", "FR_calf", "RL_calf", "RR_calf"), foot_offset=(0.0, 0.0, -0.213),
                     foot_radius=0.02, foot_geoms=("FL_foot_geom", "FR_foot_geom", "RL_foot_geom", "RR_foot_geom"),
                     base_geom="base_geom")

_GO1_LEGS = ("FR", "FL", "RR", "RL")
#: MuJoCo Menagerie's Unitree Go1 driven by torque: its position servos replaced by gear-1 motors
#: under a DC motor model (kp 35, kd 0.5 and action scale 0.5 as MuJoCo Playground's Go1;
#: saturation 23.7 N m hip and thigh, 35.55 N m knee as the MJCF's forcerange, 30 rad/s no-load
#: speed), 2 substeps of target delay at most; pyramidal friction cones with impratio 1 instead of
#: the file's elliptic cones with impratio 100 (MuJoCo steps 256 envs on rough terrain 2.6x
#: faster, measured); only the feet and the trunk collide, the feet with condim 3 (as Playground's
#: ``feetonly`` Go1; a MuJoCo step on the terrain 1.7x cheaper than all geoms with condim 6 feet).
GO1 = RobotCfg(
    name="go1", model_file=GO1_XML, floor=None,
    joint_names=tuple(f"{leg}_{j}_joint" for leg in _GO1_LEGS for j in ("hip", "thigh", "calf")), motors=True,
    actuators=(DCMotorCfg(joint_names=(".*_joint",), stiffness=35.0, damping=0.5,
                          effort_limit={".*_(hip|thigh)_joint": 23.7, ".*_calf_joint": 35.55},
                          saturation_effort={".*_(hip|thigh)_joint": 23.7, ".*_calf_joint": 35.55},
                          velocity_limit=30.0, delay=(0, 2)),),
    action_scale=0.5, foot_bodies=tuple(f"{leg}_calf" for leg in _GO1_LEGS), foot_offset=(0.0, 0.0, -0.213),
    foot_radius=0.023, foot_geoms=_GO1_LEGS, min_base_height=0.12, mjcf_option={"cone": "pyramidal", "impratio": "1"},
    collisions="feet_and_base", foot_condim=3)


def effort_limits(robot: RobotCfg) -> dict[str, float]:
    """``{joint: effort limit N m}`` of ``robot.joint_names`` under its actuator configs."""
    import re

    out: dict[str, float] = {}
    for joint in robot.joint_names:
        for cfg in robot.actuators:
            if any(re.fullmatch(p, joint) for p in cfg.joint_names):
                lim = cfg.effort_limit
                if isinstance(lim, dict):
                    lim = next((v for p, v in lim.items() if re.fullmatch(p, joint)), np.inf)
                out[joint] = float(lim)
                break
        else:
            raise InvalidInputError(f"RobotCfg.actuators: joint {joint!r} is matched by no actuator config")
    return out


def _absolute_assets(root: ET.Element, folder: Path) -> None:
    """Point the compiler's asset folders and every ``file`` attribute at absolute paths."""
    compiler = root.find("compiler")
    if compiler is None:
        compiler = ET.Element("compiler")
        root.insert(0, compiler)
    for key in ("meshdir", "texturedir", "assetdir"):
        value = compiler.get(key)
        if value is not None:
            compiler.set(key, str((folder / value).resolve()))
    if compiler.get("meshdir") is None and compiler.get("assetdir") is None:
        compiler.set("meshdir", str(folder))
    if compiler.get("texturedir") is None and compiler.get("assetdir") is None:
        compiler.set("texturedir", str(folder))
    for el in root.iter("include"):
        el.set("file", str((folder / el.get("file", "")).resolve()))


def _replace_actuators(root: ET.Element, robot: RobotCfg) -> None:
    for el in root.findall("actuator"):
        root.remove(el)
    act = ET.SubElement(root, "actuator")
    for joint, lim in effort_limits(robot).items():
        attrs_ = {"name": joint, "joint": joint, "gear": "1"}
        if np.isfinite(lim):
            attrs_.update(ctrlrange=f"{-lim:g} {lim:g}", ctrllimited="true")
        ET.SubElement(act, "motor", attrs_)
    for key in root.iter("key"):  # a keyframe's ctrl was the old actuators'
        key.attrib.pop("ctrl", None)


def _contacts(root: ET.Element, robot: RobotCfg) -> None:
    """``robot.collisions`` and ``robot.foot_condim`` written onto the robot's geoms."""
    feet = set(robot.foot_geoms)
    found = {g.get("name") for g in root.iter("geom")} & feet
    if found != feet:
        raise InvalidInputError(f"RobotCfg.foot_geoms: no geoms named {sorted(feet - found)} in {robot.model_file}")
    base = next((b for b in root.find("worldbody").iter("body") if b.find("freejoint") is not None
                 or any(j.get("type") == "free" for j in b.findall("joint"))), None)
    if robot.collisions == "feet_and_base":
        if base is None:
            raise InvalidInputError(f"RobotCfg.collisions: 'feet_and_base' needs a floating base; "
                                    f"{robot.model_file} has no body with a free joint")
        keep = set(map(id, base.findall("geom")))
        for body in base.findall("body"):
            for g in body.iter("geom"):
                if g.get("name") not in feet and id(g) not in keep:
                    g.set("contype", "0")
                    g.set("conaffinity", "0")
    if robot.foot_condim is not None:
        for g in root.iter("geom"):
            if g.get("name") in feet:
                g.set("condim", str(robot.foot_condim))


def _ground(root: ET.Element, robot: RobotCfg, terrain: GeneratedTerrain | None) -> None:
    world = root.find("worldbody")
    if robot.floor is not None and terrain is not None:
        floor = next((g for g in world.findall("geom") if g.get("name") == robot.floor), None)
        if floor is None:
            raise InvalidInputError(f"RobotCfg.floor: no world geom named {robot.floor!r} in {robot.model_file}")
        world.remove(floor)
    if terrain is not None:
        asset = root.find("asset")
        if asset is None:
            asset = ET.SubElement(root, "asset")
        asset.append(ET.fromstring(terrain.mjcf_asset()))
        world.insert(0, ET.fromstring(terrain.mjcf_geom()))
    elif robot.floor is None:
        world.insert(0, ET.Element("geom", name="floor", type="plane", size="0 0 0.05", rgba="0.45 0.5 0.55 1"))
    if not any(li.get("directional") == "true" for li in world.iter("light")):
        world.insert(0, ET.Element("light", pos="0 0 3", dir="0 0 -1", directional="true"))


def scene_cache_dir() -> Path:
    return Path(os.environ.get("UNISIM_GYM_SCENES", Path(tempfile.gettempdir()) / "unisim_gym_scenes"))


def build_scene(robot: RobotCfg, terrain: GeneratedTerrain | None = None) -> str:
    """The model file the backends load for ``robot`` on ``terrain`` (``None``: flat ground).

    Without motors, terrain, ``mjcf_option`` or contact changes it is ``robot.model_file`` itself
    (and a robot without a floor gets a plane named ``floor``). Otherwise one MJCF file is written
    (asset paths absolute, the robot's floor replaced by the height field named ``terrain``) into
    :func:`scene_cache_dir`.
    """
    if not Path(robot.model_file).is_file():
        raise InvalidInputError(f"RobotCfg.model_file: no such file {robot.model_file!r} (robot {robot.name!r})")
    if (not robot.motors and terrain is None and robot.floor is not None and not robot.mjcf_option
            and robot.collisions == "all" and robot.foot_condim is None):
        return robot.model_file
    src = Path(robot.model_file).resolve()
    root = ET.parse(src).getroot()
    _absolute_assets(root, src.parent)
    if robot.motors:
        _replace_actuators(root, robot)
    if robot.collisions != "all" or robot.foot_condim is not None:
        _contacts(root, robot)
    if robot.mjcf_option:
        option = root.find("option")
        if option is None:
            option = ET.Element("option")
            root.insert(1, option)
        for key, value in robot.mjcf_option.items():
            option.set(key, str(value))
    _ground(root, robot, terrain)
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode")
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    out = scene_cache_dir() / f"{robot.name}_{digest}.xml"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        os.replace(tmp, out)  # atomic: concurrent builders write the same bytes
    return str(out)
