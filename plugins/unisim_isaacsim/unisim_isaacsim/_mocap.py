"""Mocap bodies in the Isaac Sim worker (capability ``mocap``): kinematic PhysX rigid bodies.

A MuJoCo mocap body is a jointless world child the user poses; nothing simulates it, and dynamic
bodies collide with it. Isaac Sim's MJCF importer gets a staged copy without them
(:func:`without_mocap_bodies`); the worker authors each in env 0 before cloning
(:func:`author_mocap_bodies`): ``<env>/UniSimMocap/<body>``, an ``Xform`` at the body's pose with
``UsdPhysics.RigidBodyAPI`` and ``physics:kinematicEnabled`` (PhysX moves it only to the targets it
is given) and one USD primitive collider per colliding geom (sphere, box, capsule, cylinder, at the
geom's pose in the body frame; a geom with ``contype`` and ``conaffinity`` 0 is not authored).

At run time (:class:`MocapBodies`) a PhysX rigid body view (``omni.physics.tensors``, the worker's
torch simulation view) reads the bodies' poses (``get_transforms``: world, xyzw) and moves them:
a write is what the getters read at once, and the body is moved over the next step by
``set_kinematic_targets`` before every substep, at constant velocity, reaching the written pose at
the last substep (:class:`unisim_physx.KinematicMoves`, shared with ``unisim-sapien``), so a
body it meets is pushed at that speed. Reads report a mocap body at rest (zero velocity and
acceleration), as MuJoCo does; wrenches on it do nothing (MuJoCo's ``xfrc_applied`` moves no mocap
body) and its mass properties are not randomized (it is not simulated).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

import numpy as np

from unisim_core.contract import quat as Q

__all__ = ["COLLIDER_TYPES", "MOCAP_SCOPE", "MocapBodies", "author_mocap_bodies", "mocap_geom_refusal",
           "without_mocap_bodies"]

#: The prim under each env holding the mocap bodies.
MOCAP_SCOPE = "UniSimMocap"
#: Geom types a colliding geom of a mocap body may have: each becomes a USD primitive collider.
COLLIDER_TYPES = ("sphere", "box", "capsule", "cylinder")


def mocap_geom_refusal(lite: Any) -> str | None:
    """Why the mocap bodies of ``lite`` cannot be authored (a colliding geom of another type), else ``None``."""
    for g, geom in enumerate(lite.geoms):
        b = int(geom["body"])
        if b and lite.body_mocap[b] and (geom["contype"] or geom["conaffinity"]) and geom["type"] not in COLLIDER_TYPES:
            return (f"geom {g} ({geom['name']!r}) of mocap body {lite.body_names[b]!r} is a colliding {geom['type']}; "
                    f"the worker authors a mocap body's colliders as USD primitives {list(COLLIDER_TYPES)}")
    return None


def without_mocap_bodies(path: str) -> bool:
    """Rewrite the staged MJCF ``path`` in place without its mocap bodies (authored by the worker
    instead); whether there were any."""
    tree = ET.parse(path)
    found = False
    for world in tree.getroot().iter("worldbody"):
        for body in list(world):
            if body.tag == "body" and body.get("mocap") == "true":
                world.remove(body)
                found = True
    if found:
        tree.write(path, encoding="utf-8", xml_declaration=True)
    return found


def _xform(prim_api: Any, pos, quat) -> None:
    from pxr import Gf, UsdGeom

    prim_api.AddTranslateOp().Set(Gf.Vec3d(*map(float, pos)))
    prim_api.AddOrientOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Quatd(*map(float, quat)))


def author_mocap_bodies(stage: Any, parent: str, lite: Any) -> dict[int, str]:
    """The mocap bodies of ``lite`` as kinematic rigid bodies under ``parent`` (env 0), at their model
    poses; returns ``{MuJoCo body id: prim path}``."""
    from pxr import Gf, UsdGeom, UsdPhysics

    from ._layout import mjcf_usd_name

    paths = {}
    for b in (b for b in range(1, len(lite.body_names)) if lite.body_mocap[b]):
        path = f"{parent}/{MOCAP_SCOPE}/{mjcf_usd_name(lite.body_names[b])}"
        body = UsdGeom.Xform.Define(stage, path)
        _xform(body, lite.body_pos[b], lite.body_quat[b])  # a world child: its pose is the world's
        rigid = UsdPhysics.RigidBodyAPI.Apply(body.GetPrim())
        rigid.CreateKinematicEnabledAttr(True)
        # PhysX wants a mass on a body; a kinematic one's never acts
        UsdPhysics.MassAPI.Apply(body.GetPrim()).CreateMassAttr(float(lite.body_mass[b]) or 1.0)
        for g, geom in enumerate(lite.geoms):
            if int(geom["body"]) != b or not (geom["contype"] or geom["conaffinity"]):
                continue
            size, kind = np.asarray(geom["size"], dtype=np.float64), geom["type"]
            gpath = f"{path}/{mjcf_usd_name(geom['name'] or f'geom{g}')}"
            if kind == "sphere":
                shape = UsdGeom.Sphere.Define(stage, gpath)
                shape.CreateRadiusAttr(float(size[0]))
            elif kind == "box":
                shape = UsdGeom.Cube.Define(stage, gpath)
                shape.CreateSizeAttr(2.0)
            else:  # capsule, cylinder: along the geom's z, MuJoCo's size [radius, half length]
                shape = (UsdGeom.Capsule if kind == "capsule" else UsdGeom.Cylinder).Define(stage, gpath)
                shape.CreateRadiusAttr(float(size[0]))
                shape.CreateHeightAttr(2.0 * float(size[1]))
                shape.CreateAxisAttr(UsdGeom.Tokens.z)
            _xform(shape, geom["pos"], geom["quat"])
            if kind == "box":
                shape.AddScaleOp().Set(Gf.Vec3f(*map(float, size)))
            UsdPhysics.CollisionAPI.Apply(shape.GetPrim())
        paths[b] = path
    return paths


class MocapBodies:
    """The mocap bodies of every env: their PhysX view, the writes since the last step, their reads."""

    def __init__(self, session: Any, paths: dict[int, str]) -> None:
        """``paths``: ``{MuJoCo body id: prim path in env 0}`` (:func:`author_mocap_bodies`)."""
        from unisim_physx import KinematicMoves

        s = self._s = session
        self.body_ids = sorted(paths)
        self._env0 = [paths[b] for b in self.body_ids]
        self.moves = KinematicMoves(len(self.body_ids), s.n)
        self._ipos = np.asarray(s.lite.body_ipos, dtype=np.float64)[self.body_ids]
        self._view = None

    def start(self, sim_view: Any, env_paths: list[str]) -> None:
        """After ``sim.reset()``: a rigid body view over every mocap body of every env (``env_paths``:
        each engine row's env prim), rows ``m * n + r``; fail closed on another order."""
        if not self.body_ids:
            return
        env0 = env_paths[0].rsplit("/", 1)[0] + "/env_0"
        want = [f"{env}{p[len(env0):]}" for p in self._env0 for env in env_paths]
        self._view = sim_view.create_rigid_body_view(want)
        got = list(self._view.prim_paths)
        if got != want:
            raise RuntimeError(f"the PhysX rigid body view of the mocap bodies has rows {got}, expected {want}")

    def _engine(self) -> tuple[np.ndarray, np.ndarray]:
        """``(pos (M, n, 3) relative to each env origin, quat (M, n, 4) wxyz)`` as PhysX holds them."""
        s, M = self._s, len(self.body_ids)
        raw = np.asarray(s.torch_numpy(self._view.get_transforms()), dtype=np.float64).reshape(M, s.n, 7)
        return raw[..., :3] - s.row_origins[None], Q.quat_normalize(raw[..., [6, 3, 4, 5]])

    def index(self, body_id: int) -> int:
        """The key of mocap body ``body_id`` (its row in :attr:`body_ids`)."""
        return self.body_ids.index(int(body_id))

    def get(self, m: int) -> tuple[np.ndarray, np.ndarray]:
        """Mocap body ``m``'s pose per engine row: position relative to the env origin, wxyz."""
        pos, quat = self._engine()
        return self.moves.poses(m, pos[m], quat[m])

    def write(self, m: int, rows: np.ndarray, pos: np.ndarray, quat: np.ndarray) -> None:
        now_pos, now_quat = self._engine()
        self.moves.write(m, rows, pos, quat, now_pos[m, rows], now_quat[m, rows])

    def substep(self, k: int, nsteps: int) -> None:
        """Before substep ``k`` of ``nsteps``: the kinematic targets of the moves written since the last step."""
        targets = list(self.moves.targets(k, nsteps))
        if not targets:
            return
        s = self._s
        data = np.asarray(s.torch_numpy(self._view.get_transforms()), dtype=np.float64).copy()  # (M n, 7) xyzw
        rows = []
        for m, ids, pos, quat in targets:
            flat = m * s.n + ids
            data[flat, :3] = pos + s.row_origins[ids]
            data[flat, 3:] = quat[:, [1, 2, 3, 0]]
            rows.append(flat)
        torch, dev = s.torch, s.device
        self._view.set_kinematic_targets(torch.as_tensor(data, dtype=torch.float32, device=dev),
                                         torch.as_tensor(np.concatenate(rows), dtype=torch.int32, device=dev))

    def after_step(self) -> None:
        self.moves.clear()

    def fill(self, pos: np.ndarray, quat: np.ndarray, lin: np.ndarray, ang: np.ndarray,
             com: np.ndarray | None = None) -> None:
        """Write the mocap bodies' columns of the worker's body tables ``(n, nbody, .)``: their poses, at rest,
        the COM (``com``, when given) at ``body_ipos`` in the body frame."""
        if not self.body_ids:
            return
        ids = self.body_ids
        now_pos, now_quat = self._engine()
        for m, b in enumerate(ids):
            pos[:, b], quat[:, b] = self.moves.poses(m, now_pos[m], now_quat[m])
        lin[:, ids] = 0.0
        ang[:, ids] = 0.0
        if com is not None:
            com[:, ids] = pos[:, ids] + Q.quat_apply(quat[:, ids], np.broadcast_to(self._ipos, pos[:, ids].shape))
