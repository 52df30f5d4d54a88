"""Worker-side edits of the stage that Isaac Sim's MJCF importer produced, its staged input
(:func:`stage_model`), and the camera pose.

The importer (``isaacsim.asset.importer.mjcf``, Isaac Sim 5.x) writes, under the asset's default
prim ``R`` (referenced at ``/World/envs/env_0/Robot``):

- ``R/<top body>/<top body>``: the root link, with ``UsdPhysics.ArticulationRootAPI``; every other
  link is a sibling ``R/<top body>/<body>``; joints live in ``R/joints`` (a jointless top body is
  welded to the world by a fixed joint without ``body0``);
- ``R/worldBody``: a holder for the MJCF world geoms, *also* given ``ArticulationRootAPI``;
- each link's ``collisions`` prim as an **instanceable** reference to a shared prototype, so its
  colliders are instance proxies that cannot be authored.

:func:`isolate_articulation_root` keeps the one root the backend drives and
:func:`make_physics_prims_authorable` de-instances the prims hiding colliders or bodies, both
before cloning. ``pxr`` is imported lazily; everything here runs on a stock ``usd-core`` stage.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._layout import mjcf_usd_name

__all__ = ["WORLD_BODY", "stage_model", "isolate_articulation_root", "make_physics_prims_authorable", "define_camera",
           "set_camera_look_at"]

#: The importer's holder of the MJCF world geoms.
WORLD_BODY = "worldBody"


def stage_model(model_file: str, workdir: str) -> str:
    """A copy of ``model_file`` in ``workdir`` named ``<usd-safe stem>.xml``, for the converter.

    Isaac Lab 2.3's ``MjcfConverter`` splits the file name on ``.`` into exactly two parts and
    makes the first the prim path ``/<stem>``, so ``a.v2.xml``, ``go2-v1.xml`` and ``2dof.xml``
    fail there. Every other entry of the model's directory is symlinked beside the copy, so the
    model's relative asset paths (meshes, includes) still resolve.
    """
    src = os.path.abspath(model_file)
    folder, name = os.path.split(src)
    staged = f"{mjcf_usd_name(name.split('.')[0])}.xml"
    for entry in os.listdir(folder):
        if entry != staged:
            os.symlink(os.path.join(folder, entry), os.path.join(workdir, entry))
    shutil.copyfile(src, os.path.join(workdir, staged))
    return os.path.join(workdir, staged)


def _articulation_roots(stage: Any, path: str) -> list[Any]:
    from pxr import Usd, UsdPhysics

    root = stage.GetPrimAtPath(path)
    if not root:
        raise ValueError(f"robot_path: no prim at {path!r}")
    return [p for p in Usd.PrimRange(root, Usd.TraverseInstanceProxies()) if p.HasAPI(UsdPhysics.ArticulationRootAPI)]


def _world_fixed_joint(stage: Any, robot_path: str, link_path: str) -> bool:
    """Whether a fixed joint under ``robot_path`` welds ``link_path`` to the world (no ``body0``)."""
    from pxr import Usd, UsdPhysics

    for prim in Usd.PrimRange(stage.GetPrimAtPath(robot_path), Usd.TraverseInstanceProxies()):
        if prim.IsA(UsdPhysics.FixedJoint):
            joint = UsdPhysics.Joint(prim)
            if not joint.GetBody0Rel().GetTargets() and [str(t) for t in joint.GetBody1Rel().GetTargets()] == [
                    link_path]:
                return True
    return False


def _move_articulation_root(src: Any, dst: Any) -> None:
    """Move ``ArticulationRootAPI`` / ``PhysxArticulationAPI`` and their authored values from ``src`` to ``dst``."""
    from pxr import UsdPhysics

    values = {a.GetName(): a.Get() for a in src.GetAttributes()
              if a.GetName().startswith(("physxArticulation:", "physics:articulation")) and a.HasAuthoredValue()}
    UsdPhysics.ArticulationRootAPI.Apply(dst)
    dst.AddAppliedSchema("PhysxArticulationAPI")
    for name, value in values.items():
        dst.CreateAttribute(name, src.GetAttribute(name).GetTypeName()).Set(value)
        src.RemoveProperty(name)
    src.RemoveAPI(UsdPhysics.ArticulationRootAPI)
    src.RemoveAPI("PhysxArticulationAPI")


def isolate_articulation_root(stage: Any, robot_path: str, root_link: str, *, fixed_base: bool = False) -> str:
    """Keep one articulation root for the robot at ``robot_path``; return its path.

    The importer puts the root on the root link ``robot_path/<root_link>/<root_link>``. A floating
    root keeps it there. A welded root (``fixed_base``: the MJCF root body has no joint, the
    importer welds it to the world with a fixed joint) gets it moved to the link's parent
    ``robot_path/<root_link>``: PhysX treats a fixed joint on a root *rigid body* as a
    maximal-coordinate joint, not as a fixed-base articulation (Isaac Lab 2.3.2,
    ``isaaclab/sim/schemas/schemas.py``, ``modify_articulation_root_properties``, does the same
    move). ``ArticulationRootAPI`` (and ``PhysxArticulationAPI``) are removed from the importer's
    ``worldBody``. Any other root (a second top-level MJCF body), or a welded root without its
    world fixed joint, fails closed.
    """
    from pxr import UsdPhysics

    link = f"{robot_path}/{root_link}/{root_link}"
    roots = _articulation_roots(stage, robot_path)
    paths = [str(p.GetPath()) for p in roots]
    if link not in paths:
        raise ValueError(f"expected the articulation root at {link!r} (MJCF importer layout); found roots {paths}")
    others = [p for p in roots if str(p.GetPath()) != link]
    unexpected = [str(p.GetPath()) for p in others if p.GetName() != WORLD_BODY]
    if unexpected:
        raise ValueError(f"the Isaac Sim backend drives one articulation per environment; besides {link!r} the "
                         f"scene has articulation roots {unexpected} (one per extra top-level MJCF body)")
    for prim in others:
        prim.RemoveAPI(UsdPhysics.ArticulationRootAPI)
        prim.RemoveAPI("PhysxArticulationAPI")  # by schema identifier (USD >= 23.11)
    if not fixed_base:
        return link
    if not _world_fixed_joint(stage, robot_path, link):
        raise ValueError(f"the welded MJCF root {root_link!r} has no fixed joint to the world under {robot_path!r}; "
                         f"expected the importer to add one to {link!r}")
    keep = f"{robot_path}/{root_link}"
    _move_articulation_root(stage.GetPrimAtPath(link), stage.GetPrimAtPath(keep))
    return keep


def make_physics_prims_authorable(stage: Any, path: str) -> list[str]:
    """Make every instanceable prim under ``path`` that hides a collider or rigid body non-instanceable.

    Colliders and bodies under an instance are read-only instance proxies; after this they are
    ordinary composed prims that per-shape / per-body settings can be authored on. Nested
    instances are handled. Returns the de-instanced paths, sorted. Fails closed when ``path`` is
    itself inside an instance, or when a stronger layer keeps a prim instanceable (undoing its own
    edits first).
    """
    from pxr import Usd, UsdPhysics

    root = stage.GetPrimAtPath(path)
    if not root:
        raise ValueError(f"path: no prim at {path!r}")
    if root.IsInstanceProxy():
        raise ValueError(f"path: {path!r} is inside an instance; pass the instanceable prim or one above it")
    apis = (UsdPhysics.CollisionAPI, UsdPhysics.RigidBodyAPI)
    target = stage.GetEditTarget()
    undo: list[tuple[Any, bool | None]] = []  # (prim, its edit-target opinion before), to restore on failure
    while True:
        instances = set()
        for prim in Usd.PrimRange(root, Usd.TraverseInstanceProxies()):
            if prim.IsInstanceProxy() and any(prim.HasAPI(api) for api in apis):
                owner = prim.GetParent()
                while owner.IsInstanceProxy():
                    owner = owner.GetParent()
                instances.add(str(owner.GetPath()))
        if not instances:
            return sorted(str(prim.GetPath()) for prim, _ in undo)
        for p in sorted(instances):
            prim = stage.GetPrimAtPath(p)
            spec = target.GetPrimSpecForScenePath(prim.GetPath())
            undo.append((prim, spec.instanceable if spec and spec.HasInfo("instanceable") else None))
            prim.SetInstanceable(False)
            if prim.IsInstance():
                for done, before in reversed(undo):  # bad input changes nothing
                    if before is None:
                        done.ClearInstanceable()
                    else:
                        done.SetInstanceable(before)
                raise ValueError(f"cannot make {p!r} non-instanceable from the edit target: a stronger layer "
                                 f"keeps it instanceable")


#: USD's default horizontal aperture (tenths of a scene unit; "mm" by convention).
_H_APERTURE = 20.955


def define_camera(stage: Any, camera_path: str, width: int, height: int, *, fovy_deg: float = 45.0,
                  near: float = 0.01, far: float = 1.0e4) -> None:
    """Define a ``UsdGeom.Camera`` for a ``width`` x ``height`` image with vertical field of view ``fovy_deg``.

    The default is MuJoCo's free camera (45 degrees); ``near``/``far`` are the clipping planes (m).
    USD's own defaults (about 24 degrees, near plane 1 m) would crop a robot seen from 3 m.
    """
    import math

    from pxr import Gf, UsdGeom

    if not (0.0 < fovy_deg < 180.0):
        raise ValueError(f"fovy_deg must be in (0, 180) degrees, got {fovy_deg}")
    if not (0.0 < near < far):
        raise ValueError(f"clipping planes need 0 < near < far, got near={near} far={far}")
    if int(width) < 1 or int(height) < 1:
        raise ValueError(f"image size must be positive, got {width}x{height}")
    camera = UsdGeom.Camera.Define(stage, camera_path)
    vertical = _H_APERTURE * int(height) / int(width)
    camera.CreateHorizontalApertureAttr(_H_APERTURE)
    camera.CreateVerticalApertureAttr(vertical)
    camera.CreateFocalLengthAttr(vertical / (2.0 * math.tan(math.radians(fovy_deg) / 2.0)))
    camera.CreateClippingRangeAttr(Gf.Vec2f(near, far))


def set_camera_look_at(stage: Any, camera_path: str, eye: Sequence[float], target: Sequence[float],
                       up: Sequence[float] = (0.0, 0.0, 1.0)) -> None:
    """Pose the ``UsdGeom.Camera`` at ``camera_path`` at ``eye`` looking at ``target`` (world, m).

    USD cameras look down their local -Z with +Y up; the view is kept upright about ``up``.
    Written as one transform op, replacing any previous pose.
    """
    from pxr import Gf, UsdGeom

    eye_v, target_v, up_v = (np.asarray(v, dtype=np.float64).reshape(3) for v in (eye, target, up))
    forward = target_v - eye_v
    if not np.isfinite(forward).all() or np.linalg.norm(forward) < 1e-9:
        raise ValueError(f"eye and target must be finite and distinct; got eye={eye_v.tolist()} "
                         f"target={target_v.tolist()}")
    if np.linalg.norm(np.cross(forward, up_v)) < 1e-9 * np.linalg.norm(forward) * max(np.linalg.norm(up_v), 1e-300):
        raise ValueError(f"the view direction {forward.tolist()} is parallel to up={up_v.tolist()}")
    camera = UsdGeom.Camera(stage.GetPrimAtPath(camera_path))
    if not camera:
        raise ValueError(f"no UsdGeom.Camera at {camera_path!r}")
    view = Gf.Matrix4d().SetLookAt(Gf.Vec3d(*eye_v), Gf.Vec3d(*target_v), Gf.Vec3d(*up_v))
    camera.ClearXformOpOrder()
    camera.AddTransformOp().Set(view.GetInverse())
