"""STUB engine behind the fake SDK packages: an importer that writes the MJCF importer's USD layout,
a PhysX-articulation-view stand-in and a kinematic integrator. Not physics: see the package doc.

Rules mirrored (each cited where it is enforced):

- the importer layout of Isaac Sim 5.1's ``isaacsim.asset.importer.mjcf`` as the worker expects
  it (:mod:`unisim_isaacsim._usd_scene`): ``R/<top>/<body>`` links, ``R/joints``, ``R/worldBody``,
  instanceable ``collisions``; a jointless top body welded by a world ``FixedJoint``;
- PhysX's parser: an ``ArticulationRootAPI`` on a rigid body makes a floating-base articulation
  whose world joints are maximal-coordinate joints, not DOFs (Isaac Lab 2.3.2
  ``isaaclab/sim/schemas/schemas.py``, ``modify_articulation_root_properties``: "Having a fixed
  joint on a rigid body is not treated as fixed base articulation"); on an ancestor prim, a world
  ``FixedJoint`` makes it fixed-base;
- PhysX tensor API: quaternions xyzw, revolute limits in radians (USD authors degrees); on a GPU
  device (``cuda*``) state writes are staged until the next ``simulate`` ("tensors are not set
  into simulation until step": Isaac Lab 2.3.2 ``isaaclab/assets/articulation/articulation.py``
  L425, the reason its writers keep the written state in their own buffers) and only
  ``update_articulations_kinematic`` (``sim.forward()``) refreshes link poses and velocities before it
  (PhysX's ``PxScene::updateArticulationsKinematic``: link state from the root state and joint state;
  a STUB model of the GPU pipeline's ordering, to be confirmed on a GPU);
- the importer authors each body's ``MassAPI`` (mass, centre of mass, principal axes, diagonal
  inertia) from its ``<inertial>``; the view's ``get_masses`` ``(n, L)``, ``get_coms`` ``(n, L, 7)``
  (position and principal-axes quaternion xyzw in the link frame), ``get_inertias`` ``(n, L, 9)``
  (about the COM, in the principal frame) return them, and their setters take full-size tensors on
  the CPU plus the rows to write (Isaac Lab 2.3.2 ``isaaclab/envs/mdp/events.py``
  ``randomize_rigid_body_mass``: ``set_masses(masses, env_ids)`` after ``env_ids.cpu()``; the
  mass-property tensors live on the CPU whatever the pipeline);
- ``apply_forces_and_torques_at_position(force_data, torque_data, position_data, indices,
  is_global)``: ``(n * L, 3)`` rows, world frame when ``is_global``; the STUB integrator moves a
  floating root by the summed force over the total mass (no rotation from forces, no gravity);
- kinematic rigid bodies (``physics:kinematicEnabled``, :class:`KinematicBodies`) move only to the
  kinematic targets they are given, during the next ``simulate`` (PhysX ``setKinematicTarget``);
- contacts (:func:`resting_contacts`): a STUB model of statics, not PhysX's solver (below).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

STUB = "UniSim SDK stub (not Isaac Sim)"


# -- quaternions (wxyz here) -------------------------------------------------------------------
def _qmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    w1, x1, y1, z1 = np.moveaxis(a, -1, 0)
    w2, x2, y2, z2 = np.moveaxis(b, -1, 0)
    return np.stack([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2], axis=-1)


def _qrot(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    p = np.concatenate([np.zeros(v.shape[:-1] + (1,)), v], axis=-1)
    conj = q * np.array([1.0, -1.0, -1.0, -1.0])
    return _qmul(_qmul(q, p), conj)[..., 1:]


# -- importer --------------------------------------------------------------------------------
def _axis_token(axis: np.ndarray) -> str:
    """USD joints take a principal axis; the stub keeps the MJCF axis's dominant component."""
    return "XYZ"[int(np.argmax(np.abs(axis)))]


def write_importer_usd(mjcf_path: str, usd_path: str, root_name: str) -> None:
    """Write ``mjcf_path`` as the MJCF importer's layout under the default prim ``/<root_name>``."""
    from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics

    from unisim_core.plugin.mjcf_lite import load_mjcf

    if not Sdf.Path.IsValidIdentifier(root_name):
        raise ValueError(f"{STUB}: '/{root_name}' is not a valid prim path")
    m = load_mjcf(mjcf_path, accept={"dampratio"})  # valid MJCF the importer parses (its kv is the worker's drives')
    names = [n or f"body{b}" for b, n in enumerate(m.body_names)]
    stage = Usd.Stage.CreateNew(usd_path)
    R = f"/{root_name}"
    stage.SetDefaultPrim(UsdGeom.Xform.Define(stage, R).GetPrim())
    # world rest pose of every body
    pos = [np.zeros(3)] * len(names)
    quat = [np.array([1.0, 0, 0, 0])] * len(names)
    for b in range(1, len(names)):
        p = m.body_parent[b]
        pos[b] = pos[p] + _qrot(quat[p], np.asarray(m.body_pos[b], dtype=float))
        quat[b] = _qmul(quat[p], np.asarray(m.body_quat[b], dtype=float))
    tops = [b for b in range(1, len(names)) if m.body_parent[b] == 0]
    top = {}
    for b in range(1, len(names)):
        t = b
        while m.body_parent[t] != 0:
            t = m.body_parent[t]
        top[b] = t

    def link_path(b: int) -> str:
        return f"{R}/{names[top[b]]}/{names[b]}" if b else f"{R}/worldBody"

    UsdGeom.Xform.Define(stage, f"{R}/worldBody")
    UsdPhysics.ArticulationRootAPI.Apply(stage.GetPrimAtPath(f"{R}/worldBody"))  # as the 5.1 importer does
    for t in tops:
        UsdGeom.Xform.Define(stage, f"{R}/{names[t]}")
    for b in range(1, len(names)):
        xf = UsdGeom.Xform.Define(stage, link_path(b))
        xf.AddTranslateOp().Set(Gf.Vec3d(*map(float, pos[b])))
        xf.AddOrientOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Quatd(*map(float, quat[b])))
        prim = xf.GetPrim()
        UsdPhysics.RigidBodyAPI.Apply(prim)
        mass = UsdPhysics.MassAPI.Apply(prim)
        mass.CreateMassAttr(float(m.body_mass[b]))
        mass.CreateCenterOfMassAttr(Gf.Vec3f(*map(float, m.body_ipos[b])))
        mass.CreateDiagonalInertiaAttr(Gf.Vec3f(*map(float, m.body_inertia[b])))
        mass.CreatePrincipalAxesAttr(Gf.Quatf(*map(float, m.body_iquat[b])))
        if b in tops:
            UsdPhysics.ArticulationRootAPI.Apply(prim)
    # colliders: an instanceable reference to a prototype per body
    for b in range(len(names)):
        geoms = [g for g in m.geoms if g["body"] == b]
        if not geoms:
            continue
        proto = f"/colliders/{names[b]}"
        for k, g in enumerate(geoms):
            gpath = f"{proto}/{g['name'] or f'geom{k}'}"
            if g["type"] == "plane":  # an infinite plane through the geom's origin (the stub contact model's ground)
                shape = UsdGeom.Plane.Define(stage, gpath)
                shape.CreateAxisAttr(UsdGeom.Tokens.z)
            else:  # every other geom as a cube; a box's extents as its scale (the stub contact model reads them)
                shape = UsdGeom.Cube.Define(stage, gpath)
                if g["type"] == "box":
                    shape.CreateSizeAttr(2.0)
                    shape.AddScaleOp().Set(Gf.Vec3f(*map(float, g["size"])))
            UsdPhysics.CollisionAPI.Apply(shape.GetPrim())
        holder = stage.DefinePrim(f"{link_path(b)}/collisions")
        holder.GetReferences().AddInternalReference(proto)
        holder.SetInstanceable(True)
    UsdGeom.Scope.Define(stage, f"{R}/joints")
    for j in m.joints:
        b = j["body"]
        parent = m.body_parent[b]
        if j["type"] == "free":
            continue
        cls = UsdPhysics.RevoluteJoint if j["type"] == "hinge" else UsdPhysics.PrismaticJoint
        joint = cls.Define(stage, f"{R}/joints/{j['name']}")
        if parent:
            joint.CreateBody0Rel().SetTargets([link_path(parent)])
        joint.CreateBody1Rel().SetTargets([link_path(b)])
        joint.CreateAxisAttr(_axis_token(j["axis"]))
        lo, hi = (float(x) for x in j["range"])
        scale = 180.0 / math.pi if j["type"] == "hinge" else 1.0  # USD revolute limits are degrees
        joint.CreateLowerLimitAttr(lo * scale if math.isfinite(lo) else -math.inf)
        joint.CreateUpperLimitAttr(hi * scale if math.isfinite(hi) else math.inf)
    for t in tops:
        if m.body_joint[t] < 0:  # a jointless top body is welded to the world
            weld = UsdPhysics.FixedJoint.Define(stage, f"{R}/joints/{names[t]}_world")
            weld.CreateBody1Rel().SetTargets([link_path(t)])
    stage.GetRootLayer().Save()


# -- articulation view -----------------------------------------------------------------------
class ArticulationModel:
    """What PhysX's parser makes of one environment's robot prim (env 0 is parsed; the clones match)."""

    def __init__(self, stage: Any, root_path: str) -> None:
        from pxr import Usd, UsdGeom, UsdPhysics

        root = stage.GetPrimAtPath(root_path)
        self.root_path = root_path
        if not root or not root.HasAPI(UsdPhysics.ArticulationRootAPI):
            raise RuntimeError(f"{STUB}: no ArticulationRootAPI at {root_path!r}")
        robot = root.GetParent()
        while robot and not str(robot.GetPath()).rsplit("/", 1)[-1].startswith("Robot"):
            robot = robot.GetParent()
        joints = [UsdPhysics.Joint(p) for p in Usd.PrimRange(robot) if p.IsA(UsdPhysics.Joint)]
        on_body = root.HasAPI(UsdPhysics.RigidBodyAPI)
        if on_body:
            seeds = [str(root.GetPath())]
        else:
            seeds = [str(p.GetPath()) for p in Usd.PrimRange(root, Usd.TraverseInstanceProxies())
                     if p.HasAPI(UsdPhysics.RigidBodyAPI)][:1]
        world = [j for j in joints if not j.GetBody0Rel().GetTargets()]
        self.fixed_base = False
        for j in world:
            body = str(j.GetBody1Rel().GetTargets()[0])
            if on_body or body not in seeds:
                continue  # schemas.py: a world joint on a root *body* is a maximal-coordinate joint
            if not j.GetPrim().IsA(UsdPhysics.FixedJoint):
                raise NotImplementedError(f"{STUB}: a non-fixed world joint on an articulation is not modelled")
            self.fixed_base = True
        links, dofs, seen = list(seeds), [], set(seeds)
        frontier = list(seeds)
        while frontier:  # breadth first over the joints: PhysX's link order, not MuJoCo's
            nxt = []
            for j in joints:
                b0 = [str(t) for t in j.GetBody0Rel().GetTargets()]
                b1 = str(j.GetBody1Rel().GetTargets()[0])
                if b0 and b0[0] in frontier and b1 not in seen:
                    seen.add(b1)
                    links.append(b1)
                    nxt.append(b1)
                    if not j.GetPrim().IsA(UsdPhysics.FixedJoint):
                        dofs.append(j)
            frontier = nxt
        self.link_paths = links
        self.root_link_rel = links[0][len(root_path):]  # the root link below the articulation-root prim
        self.body_names = [p.rsplit("/", 1)[-1] for p in links]
        self.joint_names = [j.GetPrim().GetName() for j in dofs]
        lim = []
        for j in dofs:
            lo, hi = j.GetPrim().GetAttribute("physics:lowerLimit").Get(), j.GetPrim().GetAttribute(
                "physics:upperLimit").Get()
            scale = math.pi / 180.0 if j.GetPrim().IsA(UsdPhysics.RevoluteJoint) else 1.0
            lim.append((lo * scale, hi * scale))
        self.limits = np.array(lim, dtype=np.float32).reshape(-1, 2)
        rest = []
        cache = UsdGeom.XformCache()
        base = cache.GetLocalToWorldTransform(stage.GetPrimAtPath(links[0]))
        for p in links:
            rel = cache.GetLocalToWorldTransform(stage.GetPrimAtPath(p)) * base.GetInverse()
            rest.append(np.array(rel.ExtractTranslation(), dtype=np.float64))
        self.rest_offsets = np.array(rest)  # link origin in the root-link frame at the rest pose
        mass, com, inertia = [], [], []
        for p in links:
            api = UsdPhysics.MassAPI(stage.GetPrimAtPath(p))
            q = api.GetPrincipalAxesAttr().Get()
            mass.append(api.GetMassAttr().Get())
            com.append([*api.GetCenterOfMassAttr().Get(), *q.GetImaginary(), q.GetReal()])
            inertia.append(np.diag(np.array(api.GetDiagonalInertiaAttr().Get(), dtype=np.float64)).reshape(9))
        self.mass, self.com, self.inertia = np.array(mass), np.array(com), np.array(inertia)
        self.colliders = [p for p in Usd.PrimRange(robot, Usd.TraverseInstanceProxies())
                          if p.HasAPI(UsdPhysics.CollisionAPI)]


class ArticulationView:
    """STUB of ``omni.physics.tensors`` ``ArticulationView`` over ``n`` environments (PhysX conventions)."""

    def __init__(self, stage: Any, model: ArticulationModel, prim_paths: list[str], device: str,
                 frontend: Any, cpu_frontend: Any = None) -> None:
        """``frontend`` wraps what the offset getters return: a torch tensor (Isaac Lab 2.3's torch
        views) or a warp array (Isaac Lab 3.0's ``create_simulation_view("warp")``); the state
        getters return numpy to the stub ``ArticulationData``."""
        self.model, self.prim_paths, self.device, self.frontend = model, prim_paths, device, frontend
        self.cpu_frontend = frontend if cpu_frontend is None else cpu_frontend  # mass properties live on the CPU
        self.gpu = device.startswith("cuda")
        n, J = len(prim_paths), len(model.joint_names)
        self.count = n
        from pxr import UsdGeom

        self.root_pose = np.zeros((n, 7))  # [pos, quat xyzw]
        cache = UsdGeom.XformCache()
        for i, path in enumerate(prim_paths):
            tf = cache.GetLocalToWorldTransform(stage.GetPrimAtPath(path + model.root_link_rel))
            q = tf.ExtractRotationQuat()
            self.root_pose[i] = [*tf.ExtractTranslation(), *q.GetImaginary(), q.GetReal()]
        self.root_vel = np.zeros((n, 6))
        self.dof_pos, self.dof_vel = np.zeros((n, J)), np.zeros((n, J))
        self.pos_target, self.vel_target, self.effort = np.zeros((n, J)), np.zeros((n, J)), np.zeros((n, J))
        self.stiffness, self.damping, self.armature = np.zeros((n, J)), np.zeros((n, J)), np.zeros((n, J))
        self.masses = np.tile(model.mass, (n, 1))
        self.coms = np.tile(model.com, (n, 1, 1))
        self.inertias = np.tile(model.inertia, (n, 1, 1))
        self.external: tuple[np.ndarray, np.ndarray, np.ndarray, bool] | None = None  # for the next simulate
        self.link_acc = np.zeros((n, len(model.link_paths), 6))
        self.staged: dict[str, Any] = {}
        self.link_pose = self._links(self.root_pose)
        self.link_vel = self._link_velocities(self.root_vel)
        self.shared_metatype = type("Metatype", (), {"fixed_base": model.fixed_base,
                                                     "dof_names": list(model.joint_names),
                                                     "link_names": list(model.body_names)})()
        self.stage = stage

    # state writes (PhysX: immediately on the CPU, at the next simulate on the GPU)
    def _set(self, name: str, values: np.ndarray, indices: np.ndarray) -> None:
        if self.gpu:
            self.staged.setdefault(name, []).append((np.array(values), np.array(indices)))
        else:
            getattr(self, name)[indices] = values

    def _commit(self) -> None:
        for name, writes in self.staged.items():
            for values, idx in writes:
                getattr(self, name)[idx] = values
        self.staged.clear()

    def _pending(self, name: str) -> np.ndarray:
        out = getattr(self, name).copy()
        for values, idx in self.staged.get(name, []):
            out[idx] = values
        return out

    def set_root_transforms(self, data, indices) -> None:
        self._set("root_pose", data, indices)

    def set_root_velocities(self, data, indices) -> None:
        self._set("root_vel", data, indices)

    def set_dof_positions(self, data, indices) -> None:
        self._set("dof_pos", data, indices)

    def set_dof_velocities(self, data, indices) -> None:
        self._set("dof_vel", data, indices)

    def get_root_transforms(self) -> np.ndarray:
        return self.root_pose.copy()

    def get_root_velocities(self) -> np.ndarray:
        return self.root_vel.copy()

    def get_dof_positions(self) -> np.ndarray:
        return self.dof_pos.copy()

    def get_dof_velocities(self) -> np.ndarray:
        return self.dof_vel.copy()

    def get_dof_limits(self) -> np.ndarray:
        return np.tile(self.model.limits, (self.count, 1, 1))

    def get_link_transforms(self) -> np.ndarray:
        return self.link_pose.copy()

    def get_link_velocities(self) -> np.ndarray:
        return self.link_vel.copy()

    def _link_velocities(self, root_vel: np.ndarray) -> np.ndarray:
        """STUB kinematics: every link moves with the root's velocity (joint rates ignored)."""
        out = np.zeros((self.count, len(self.model.link_paths), 6))
        out[:] = root_vel[:, None, :]
        return out

    def get_link_accelerations(self) -> np.ndarray:
        return self.link_acc.copy()

    # mass properties: full tensors on the CPU, the rows to write
    def _cpu(self, data, indices, name: str) -> tuple[np.ndarray, np.ndarray]:
        for what, t in (("data", data), ("indices", indices)):
            if getattr(t, "device", "cpu") != "cpu":
                raise RuntimeError(f"{STUB}: {name}: {what} must be a CPU tensor, got one on {t.device}")
        return np.asarray(getattr(data, "array", data), dtype=np.float64), np.asarray(
            getattr(indices, "array", indices), dtype=np.int64)

    def get_masses(self):
        return self.cpu_frontend(self.masses.astype(np.float32))

    def get_coms(self):
        return self.cpu_frontend(self.coms.astype(np.float32))

    def get_inertias(self):
        return self.cpu_frontend(self.inertias.astype(np.float32))

    def set_masses(self, data, indices) -> None:
        values, idx = self._cpu(data, indices, "set_masses")
        self.masses[idx] = values.reshape(self.masses.shape)[idx]

    def set_coms(self, data, indices) -> None:
        values, idx = self._cpu(data, indices, "set_coms")
        self.coms[idx] = values.reshape(self.coms.shape)[idx]

    def set_inertias(self, data, indices) -> None:
        values, idx = self._cpu(data, indices, "set_inertias")
        self.inertias[idx] = values.reshape(self.inertias.shape)[idx]

    def apply_forces_and_torques_at_position(self, force_data, torque_data, position_data, indices,
                                             is_global: bool) -> None:
        n, L = self.count, len(self.model.link_paths)
        f = np.asarray(getattr(force_data, "array", force_data), dtype=np.float64).reshape(n, L, 3)
        t = np.asarray(getattr(torque_data, "array", torque_data), dtype=np.float64).reshape(n, L, 3)
        p = None if position_data is None else np.asarray(getattr(position_data, "array", position_data),
                                                          dtype=np.float64).reshape(n, L, 3)
        self.external = (f, t, p, bool(is_global))

    def _offsets(self, attr: str) -> np.ndarray:
        vals = [p.GetAttribute(attr).Get() if p.GetAttribute(attr).HasAuthoredValue() else 0.0
                for p in self.model.colliders]
        return np.tile(np.array(vals, dtype=np.float32), (self.count, 1))

    def get_contact_offsets(self) -> Any:
        return self.frontend(self._offsets("physxCollision:contactOffset"))

    def get_rest_offsets(self) -> Any:
        return self.frontend(self._offsets("physxCollision:restOffset"))

    def _links(self, root_pose: np.ndarray) -> np.ndarray:
        """STUB kinematics: every link keeps its rest offset in the root frame (joint angles ignored)."""
        wxyz = root_pose[:, [6, 3, 4, 5]]
        n, L = root_pose.shape[0], len(self.model.rest_offsets)
        out = np.zeros((n, L, 7))
        out[:, :, :3] = root_pose[:, None, :3] + _qrot(np.repeat(wxyz[:, None], L, 1), np.broadcast_to(
            self.model.rest_offsets, (n, L, 3)))
        out[:, :, 3:] = root_pose[:, None, 3:]
        return out

    def update_articulations_kinematic(self) -> None:
        """``sim.forward()``: link poses and velocities from the current (staged) root state."""
        self.link_pose = self._links(self._pending("root_pose"))
        self.link_vel = self._link_velocities(self._pending("root_vel"))

    def simulate(self, dt: float) -> None:
        """STUB integrator: position-driven joints close 20 % of the gap to their target per step,
        effort-driven joints accelerate at effort / (1 kg m²); limits clamp; the root drifts at its
        velocity (no gravity, no contacts)."""
        self._commit()
        before = self._link_velocities(self.root_vel)
        if self.external is not None and not self.model.fixed_base:  # PhysX clears applied forces after a step
            force = self.external[0]
            if not self.external[3]:  # link-frame forces: turned into the world by each link's orientation
                q = self.link_pose[..., [6, 3, 4, 5]]
                force = _qrot(q, force)
            self.root_vel[:, :3] += dt * force.sum(axis=1) / self.masses.sum(axis=1, keepdims=True)
        self.external = None
        drive = self.stiffness > 0
        new = np.where(drive, self.dof_pos + 0.2 * (self.pos_target - self.dof_pos),
                       self.dof_pos + (self.dof_vel + self.effort * dt) * dt)
        lo, hi = self.model.limits[:, 0], self.model.limits[:, 1]
        new = np.clip(new, lo, hi)
        self.dof_vel = (new - self.dof_pos) / dt
        self.dof_pos = new
        if not self.model.fixed_base:
            self.root_pose[:, :3] += self.root_vel[:, :3] * dt
            w = self.root_vel[:, 3:]
            angle = np.linalg.norm(w, axis=1) * dt
            axis = np.divide(w, np.linalg.norm(w, axis=1, keepdims=True), out=np.zeros_like(w),
                             where=np.linalg.norm(w, axis=1, keepdims=True) > 0)
            dq = np.concatenate([np.cos(angle / 2)[:, None], axis * np.sin(angle / 2)[:, None]], axis=1)
            q = _qmul(dq, self.root_pose[:, [6, 3, 4, 5]])
            q /= np.linalg.norm(q, axis=1, keepdims=True)
            self.root_pose[:, 3:] = q[:, [1, 2, 3, 0]]
        else:
            self.root_vel[:] = 0.0
        self.link_pose = self._links(self.root_pose)
        self.link_vel = self._link_velocities(self.root_vel)
        self.link_acc = (self.link_vel - before) / dt


# -- kinematic rigid bodies ------------------------------------------------------------------
class KinematicBodies:
    """STUB of PhysX's kinematic rigid bodies: every ``RigidBodyAPI`` prim with ``physics:kinematicEnabled``
    (the only rigid bodies outside articulations the stub models), at their authored world pose until a
    kinematic target moves them, at the next ``simulate``, CPU and GPU alike (PhysX's
    ``setKinematicTarget`` is where the body goes during the step)."""

    def __init__(self, stage: Any) -> None:
        from pxr import UsdGeom, UsdPhysics

        cache = UsdGeom.XformCache()
        self.paths, poses = [], []
        for prim in stage.Traverse():
            if prim.HasAPI(UsdPhysics.RigidBodyAPI) and prim.GetAttribute("physics:kinematicEnabled").Get():
                tf = cache.GetLocalToWorldTransform(prim)
                q = tf.ExtractRotationQuat()
                self.paths.append(str(prim.GetPath()))
                poses.append([*tf.ExtractTranslation(), *q.GetImaginary(), q.GetReal()])
        self.pose = np.array(poses, dtype=np.float64).reshape(-1, 7)  # [pos, quat xyzw], world
        self.targets: dict[int, np.ndarray] = {}

    def simulate(self) -> None:
        for i, target in self.targets.items():
            self.pose[i] = target
        self.targets.clear()


# -- contacts --------------------------------------------------------------------------------
#: Height gap within which a box rests on what is below it (m).
REST_TOLERANCE = 1e-3


def box_half_extents(stage: Any, body_path: str) -> np.ndarray | None:
    """Half extents of the first box collider under a body (the importer's cube of size 2 scaled by
    MuJoCo's half sizes), or ``None``."""
    from pxr import Usd, UsdGeom, UsdPhysics

    for prim in Usd.PrimRange(stage.GetPrimAtPath(body_path), Usd.TraverseInstanceProxies()):
        if prim.IsA(UsdGeom.Cube) and prim.HasAPI(UsdPhysics.CollisionAPI) and prim.GetAttribute("size").Get() == 2.0:
            scale = prim.GetAttribute("xformOp:scale").Get()
            if scale is not None:
                return np.array(scale, dtype=np.float64)
    return None


def _env_key(path: str) -> str:
    return next((part for part in path.split("/") if part.startswith("env_")), "")


def rigid_bodies(stage: Any, sim: Any) -> list[dict[str, Any]]:
    """Every rigid body the stub simulates, per env copy: ``path``, ``env``, ``pos`` (world), ``com``
    (world), ``mass``, ``half`` (box half extents or ``None``) and ``kinematic``."""
    out = []
    for asset in sim.assets:
        view = getattr(asset, "_view", None)
        if not isinstance(view, ArticulationView):
            continue
        model = view.model
        for k, link in enumerate(model.link_paths):
            half = box_half_extents(stage, link)
            for r, root in enumerate(view.prim_paths):
                pose = view.link_pose[r, k]
                com = pose[:3] + _qrot(pose[[6, 3, 4, 5]], view.coms[r, k, :3])
                out.append({"path": root + link[len(model.root_path):], "env": _env_key(root), "pos": pose[:3],
                            "com": com, "mass": float(view.masses[r, k]), "half": half, "kinematic": False})
    kin = getattr(sim, "kinematic", None)
    for i, path in enumerate([] if kin is None else kin.paths):
        out.append({"path": path, "env": _env_key(path), "pos": kin.pose[i, :3], "com": kin.pose[i, :3], "mass": 0.0,
                    "half": box_half_extents(stage, path), "kinematic": True})
    return out


def ground_planes(stage: Any) -> list[tuple[str, str, float]]:
    """``(path, env, world z)`` of every static plane collider (no rigid body above it)."""
    from pxr import Usd, UsdGeom, UsdPhysics

    cache, out = UsdGeom.XformCache(), []
    for prim in stage.Traverse(Usd.TraverseInstanceProxies()):
        if prim.IsA(UsdGeom.Plane) and prim.HasAPI(UsdPhysics.CollisionAPI):
            up = prim
            while up and not up.HasAPI(UsdPhysics.RigidBodyAPI):
                up = up.GetParent()
            if not up:
                path = str(prim.GetPath())
                out.append((path, _env_key(path), cache.GetLocalToWorldTransform(prim).ExtractTranslation()[2]))
    return out


def resting_contacts(stage: Any, sim: Any, g: float) -> list[dict[str, Any]]:
    """STUB contact model (statics, not PhysX): boxes at rest, upright, carry what rests on them.

    A non-kinematic body with a box collider rests on a ground plane of its env when its lowest point
    (link height minus the box's half height) is within :data:`REST_TOLERANCE` of the plane, else on
    another body of its env whose top face it touches so (footprints overlapping). A kinematic body rests
    on nothing (PhysX makes no contacts between kinematic and static actors). A resting body carries
    its weight and the loads resting on it: the contact force on it is ``(0, 0, load)`` (the reaction
    on its support the opposite), spread over the four corners of its bottom face so that their
    resultant passes below the centre of mass of the body and its load (static equilibrium: the
    moment about that centre of mass is zero). Each contact: ``body`` (the upper), ``other`` (the
    support's body or plane path), ``force`` on ``body``, ``points (4, 3)`` and ``shares (4,)`` of the
    force (summing to 1), world frame.
    """
    bodies = [b for b in rigid_bodies(stage, sim)]
    planes = ground_planes(stage)
    support: dict[int, Any] = {}
    for i, b in enumerate(bodies):
        if b["kinematic"] or b["half"] is None:
            continue
        bottom = b["pos"][2] - b["half"][2]
        ground = [p for p, env, z in planes if env == b["env"] and abs(bottom - z) <= REST_TOLERANCE]
        if ground:
            support[i] = ground[0]
            continue
        for j, s in enumerate(bodies):
            if j != i and s["env"] == b["env"] and s["half"] is not None \
                    and abs(bottom - s["pos"][2] - s["half"][2]) <= REST_TOLERANCE \
                    and np.all(np.abs(b["pos"][:2] - s["pos"][:2]) < b["half"][:2] + s["half"][:2]):
                support[i] = j
                break
    load = {i: b["mass"] * g for i, b in enumerate(bodies)}
    centre = {i: b["com"][:2] * b["mass"] * g for i, b in enumerate(bodies)}  # load-weighted xy, summed
    for i in sorted(support, key=lambda i: -bodies[i]["pos"][2]):  # from the top down: loads accumulate
        j = support[i]
        if isinstance(j, int):
            load[j] += load[i]
            centre[j] = centre[j] + centre[i]
    out = []
    for i, j in support.items():
        b = bodies[i]
        hx, hy, hz = b["half"]
        c = np.clip(centre[i] / load[i] - b["pos"][:2], [-hx, -hy], [hx, hy]) if load[i] else np.zeros(2)
        wx, wy = 0.5 + np.array([-1.0, 1.0]) * c[0] / (2 * hx), 0.5 + np.array([-1.0, 1.0]) * c[1] / (2 * hy)
        points, shares = [], []
        for sx, ax in zip((-1.0, 1.0), wx):
            for sy, ay in zip((-1.0, 1.0), wy):
                points.append(b["pos"] + [sx * hx, sy * hy, -hz])
                shares.append(ax * ay)
        out.append({"body": b["path"], "other": j if isinstance(j, str) else bodies[j]["path"],
                    "force": np.array([0.0, 0.0, load[i]]), "points": np.array(points), "shares": np.array(shares)})
    return out
