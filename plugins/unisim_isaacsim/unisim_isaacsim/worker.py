"""The Isaac Sim worker: ``<isaac-sim>/python.sh -m unisim_isaacsim.worker``.

Supported: Isaac Lab 2.3 on Isaac Sim 5.1 and Isaac Lab 3.0 on Isaac Sim 6; the version is read
from ``isaaclab.__version__`` and every API difference is converted at this module's boundary
(:class:`_Lab2` / :class:`_Lab3`: physics config, tensor types, write/target calls, quaternion
order). It has never run on a GPU in this project's CI; it runs there against the SDK stubs of
``plugins/unisim_isaacsim/tests/isaacsim_testing/stub_sdk``.

Started by :class:`~unisim_isaacsim._backend.IsaacSimBackend`; it serves the hosted op protocol of
``unisim_core.plugin.worker`` (``describe``, ``attach``, ``step``, ``set_state``, ``bodies``,
``bind_contacts``, ``contacts``, ``bind_mocap``, ``mocap_get``, ``mocap_write``, ``init_renderer``,
``capture_frame``, ``close``). Module scope is
stdlib only; unisim_core, numpy and the SDK are imported inside functions (the SDK only after the
app is launched).

INIT, in order: launch the app headless (``AppLauncher``); read the MuJoCo-layout model tables
from the MJCF (``unisim_core.plugin.mjcf_lite``); create the ``SimulationContext`` with the PhysX config
(:func:`~unisim_isaacsim._physx_solver.build_isaaclab_physx_cfg`, min = max iteration counts; Isaac
Sim's ``PhysicsContext`` authors these on the physics-scene prim); enable Isaac Sim's MJCF
importer extension (failing when it does not enable) and import a staged copy of the MJCF named
``<usd-safe stem>.xml`` (Isaac Lab 2.3's ``MjcfConverter`` splits the file name on ``.`` and makes
the stem a prim path) through Isaac Lab's ``MjcfConverter``; spawn it as env 0
(articulation-root iteration counts authored when requested), the MJCF world geoms (the floor)
coming with it into every environment; keep one articulation root (a welded root body: moved to
the robot prim so PhysX makes the articulation fixed-base) and de-instance the colliders
(:mod:`unisim_isaacsim._usd_scene`); author the collision offsets and max depenetration velocity
on every collider / rigid body (:mod:`unisim_isaacsim._usd_helpers`), the mocap bodies as kinematic
rigid bodies (:mod:`unisim_isaacsim._mocap`; the importer's copy goes without them) and the height
fields as static meshes (:mod:`unisim_isaacsim._terrain`) **before** cloning; clone
``num_envs`` environments with ``GridCloner`` as Isaac Lab's ``InteractiveScene`` does
(replicated physics; environment ids filter collisions on the GPU, collision groups on the CPU);
build the ``Articulation`` with one implicit drive per hinge/slide joint equal to its MJCF
actuator (:mod:`unisim_isaacsim._drives`) and default joint positions from the scene's default
keyframe (or ``qpos0``) clipped into the joint limits; ``sim.reset()``; read the solver settings back (the
PhysX view for the shape offsets, the only ones it has getters for; the authored USD value
otherwise, labelled as such); take the environment row order from the articulation view's prim
paths; open the worker's own PhysX simulation view (``omni.physics.tensors``) for the mocap bodies'
rigid body view and, per contact binding that needs it, rigid contact views
(:mod:`unisim_isaacsim._contacts`). MJCF names are matched as the importer writes them
(:func:`~unisim_isaacsim._layout.mjcf_usd_name`).

State crosses in the contract layout (see :mod:`unisim_isaacsim._layout`): positions relative to
each environment origin, quaternions wxyz, root angular velocity in the body frame.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from ._launch import FALLBACK_ENV

__all__ = ["run", "main", "factory"]


def _extend_path() -> None:
    """Append the host's pure-Python fallbacks (attrs, pluggy) *after* Isaac Sim's own packages."""
    fallback = os.environ.get(FALLBACK_ENV)
    if fallback and fallback not in sys.path:
        sys.path.append(fallback)


def run(factory_fn) -> None:
    """Serve ``factory_fn`` on the channel the host opened (UniSim input errors do not poison)."""
    _extend_path()
    from unisim_core.plugin.worker.hosted import SAFE_ERRORS
    from unisim_core.plugin.worker.server import connect, serve

    chan = connect()
    serve(factory_fn, safe_errors=SAFE_ERRORS, channel=chan)


def main() -> None:
    run(factory)


def factory(init: dict[str, Any], progress) -> dict[str, Any]:
    """INIT: build the Isaac scene and return the op handlers."""
    return _IsaacSession(init, progress).handlers()


def _import_isaaclab_app():
    try:
        from isaaclab.app import AppLauncher
    except ImportError as exc:
        raise ImportError(
            f"Isaac Lab is not importable in {sys.executable} ({exc}); the worker must run in Isaac Sim's "
            f"python.sh with Isaac Lab installed (5.1 with 2.3, or 6 with 3.0; set UNISIM_ISAACSIM_PYTHON)"
        ) from exc
    return AppLauncher


MJCF_IMPORTER = "isaacsim.asset.importer.mjcf"


def _enable_extension(app, name: str) -> None:
    """Enable a Kit extension now; fail closed when it does not end up enabled.

    Isaac Sim 5.1's ``isaacsim.core.utils.extensions.enable_extension`` returns the manager's
    boolean and Isaac Lab 3.0's ``isaaclab.sim.utils.enable_extension`` nothing: this asks the
    extension manager itself (``omni.kit.app.IApp.get_extension_manager()``), the same in both.
    """
    manager = app.get_extension_manager()
    manager.set_extension_enabled_immediate(name, True)
    if not manager.is_extension_enabled(name):
        raise RuntimeError(f"the Isaac Sim extension {name!r} did not enable (is it installed in this Isaac Sim? "
                           f"see the Kit log); the worker needs it to import the MJCF")


class _Lab2:
    """Isaac Lab 2.3 (Isaac Sim 5.1): torch tensors, positional writes, wxyz quaternions."""

    quat_order = "wxyz"

    def physics_cfg(self, sim_utils, cfg) -> dict[str, Any]:
        from ._physx_solver import build_isaaclab_physx_cfg

        return {"physx": build_isaaclab_physx_cfg(sim_utils, cfg)}

    def physics_prim_path(self, sim) -> str:
        return sim.get_physics_context().prim_path

    def view(self, robot):
        return robot.root_physx_view

    def tensor(self, buf):
        return buf

    def view_numpy(self, array):
        """A PhysX tensor-view result as numpy (torch views in Isaac Lab 2.3)."""
        return array.cpu().numpy()

    def write_root(self, robot, pose, velocity, ids) -> None:
        robot.write_root_link_pose_to_sim(pose, env_ids=ids)
        robot.write_root_link_velocity_to_sim(velocity, env_ids=ids)

    def write_joints(self, robot, pos, vel, ids) -> None:
        robot.write_joint_state_to_sim(pos, vel, env_ids=ids)

    def set_targets(self, robot, position, position_ids, effort, effort_ids) -> None:
        if position_ids:
            robot.set_joint_position_target(position, joint_ids=position_ids)
        if effort_ids:
            robot.set_joint_effort_target(effort, joint_ids=effort_ids)

    def _t(self, array, device: str):
        import torch

        return torch.as_tensor(array, dtype=torch.float32, device=device)

    def body_mass_properties(self, robot):
        """``(mass (n, L), com (n, L, 7) [pos, quat xyzw] in the link frame, inertia (n, L, 9))`` as numpy."""
        import numpy as np

        v = robot.root_physx_view
        return tuple(np.asarray(self.view_numpy(g()), dtype=np.float64).copy()
                     for g in (v.get_masses, v.get_coms, v.get_inertias))

    def write_body_mass_properties(self, robot, rows, mass, com, inertia) -> None:
        """PhysX's mass-property setters take full tensors on the CPU and the rows to write
        (Isaac Lab 2.3 ``events.randomize_rigid_body_mass``: ``set_masses(masses, env_ids.cpu())``)."""
        import numpy as np
        import torch

        v = robot.root_physx_view
        idx = torch.as_tensor(rows, dtype=torch.long, device="cpu")
        for getter, setter, new in ((v.get_masses, v.set_masses, mass), (v.get_coms, v.set_coms, com),
                                    (v.get_inertias, v.set_inertias, inertia)):
            full = np.asarray(self.view_numpy(getter()), dtype=np.float64).copy()
            full[rows] = new
            setter(self._t(full, "cpu"), idx)

    def write_joint_drives(self, robot, rows, joint_ids, damping, armature) -> None:
        ids = self._ids(rows, robot.device)
        robot.write_joint_damping_to_sim(self._t(damping, robot.device), joint_ids=joint_ids, env_ids=ids)
        robot.write_joint_armature_to_sim(self._t(armature, robot.device), joint_ids=joint_ids, env_ids=ids)

    def set_wrench(self, robot, force, torque, position) -> None:
        """World forces and torques acting at world points, ``(n, L, 3)`` each (all zero: none)."""
        d = robot.device
        robot.set_external_force_and_torque(self._t(force, d), self._t(torque, d), positions=self._t(position, d),
                                            is_global=True)

    def _ids(self, rows, device: str):
        import numpy as np
        import torch

        return torch.as_tensor(np.asarray(rows), dtype=torch.long, device=device)

    def refresh(self, sim, robot) -> None:
        """After a write: ``sim.forward()`` updates the link kinematics, then only the derived
        body buffers are dropped (Isaac Lab 2.3's writers already hold the written root and joint
        state in their buffers; re-reading those from the PhysX view before a step may return
        the pre-write state on the GPU pipeline)."""
        sim.forward()
        data = robot.data
        for name in ("_body_link_pose_w", "_body_link_vel_w"):
            getattr(data, name).timestamp = -1.0


class _Lab3(_Lab2):
    """Isaac Lab 3.0 (Isaac Sim 6): warp-backed ``ProxyArray`` data read through ``.torch``,
    keyword-only ``*_index`` writers, targets through ``robot.actuators.target_command``, xyzw
    quaternions, ``isaaclab_physx.physics.PhysxCfg`` under ``SimulationCfg.physics``."""

    quat_order = "xyzw"

    def physics_cfg(self, sim_utils, cfg) -> dict[str, Any]:
        import isaaclab_physx.physics as physics

        from ._physx_solver import build_isaaclab_physx_cfg

        return {"physics": build_isaaclab_physx_cfg(physics, cfg)}

    def physics_prim_path(self, sim) -> str:
        return sim.cfg.physics_prim_path

    def view(self, robot):
        return robot.root_view

    def tensor(self, buf):
        return buf.torch

    def view_numpy(self, array):
        """Isaac Lab 3.0 opens the PhysX views with the warp frontend: ``wp.array.numpy()``."""
        return array.numpy()

    def write_root(self, robot, pose, velocity, ids) -> None:
        robot.write_root_link_pose_to_sim_index(root_pose=pose, env_ids=ids)
        robot.write_root_link_velocity_to_sim_index(root_velocity=velocity, env_ids=ids)

    def write_joints(self, robot, pos, vel, ids) -> None:
        robot.write_joint_state_to_sim_index(position=pos, velocity=vel, env_ids=ids)

    def set_targets(self, robot, position, position_ids, effort, effort_ids) -> None:
        command = robot.actuators.target_command
        if position_ids:
            command.set_position_index(value=position, joint_ids=position_ids)
        if effort_ids:
            command.set_effort_index(value=effort, joint_ids=effort_ids)

    def body_mass_properties(self, robot):
        import numpy as np

        d = robot.data
        return tuple(np.asarray(self.tensor(b).detach().cpu().numpy(), dtype=np.float64).copy()
                     for b in (d.body_mass, d.body_com_pose_b, d.body_inertia))

    def write_body_mass_properties(self, robot, rows, mass, com, inertia) -> None:
        """Isaac Lab 3.0's ``set_*_index`` (partial data: the rows written)."""
        ids, d = self._ids(rows, robot.device), robot.device
        robot.set_masses_index(masses=self._t(mass, d), env_ids=ids)
        robot.set_coms_index(coms=self._t(com, d), env_ids=ids)
        robot.set_inertias_index(inertias=self._t(inertia, d), env_ids=ids)

    def write_joint_drives(self, robot, rows, joint_ids, damping, armature) -> None:
        ids, d = self._ids(rows, robot.device), robot.device
        robot.write_joint_damping_to_sim_index(damping=self._t(damping, d), joint_ids=joint_ids, env_ids=ids)
        robot.write_joint_armature_to_sim_index(armature=self._t(armature, d), joint_ids=joint_ids, env_ids=ids)

    def set_wrench(self, robot, force, torque, position) -> None:
        d = robot.device
        robot.permanent_wrench_composer.set_forces_and_torques_index(
            forces=self._t(force, d), torques=self._t(torque, d), positions=self._t(position, d), is_global=True)

    def refresh(self, sim, robot) -> None:
        """Nothing: Isaac Lab 3.0's writers recompute forward kinematics on the next body read."""


class _IsaacSession:
    """Everything the worker holds: app, simulation, articulation, layout, camera."""

    ENV_NS = "/World/envs"
    ROBOT = "Robot"
    #: Renders after creating a render product before its frames are used.
    RENDER_WARMUP = 4
    #: Renders per captured frame after re-aiming the camera.
    CAPTURE_RENDERS = 2
    #: PhysX drive force limit standing for "unlimited" (N·m or N).
    UNLIMITED = 1.0e9

    def __init__(self, init: dict[str, Any], progress) -> None:
        import numpy as np

        from unisim_core.plugin.mjcf_lite import load_mjcf
        from unisim_core.plugin.worker.hosted import scene_from_plain
        from unisim_physx import IMPLICIT_KV, mujoco_integrator, physx_drives

        from ._layout import ACCEPTED_FEATURES, root_mount
        from ._physx_solver import PhysxSolverConfig

        self.np = np
        self.progress = progress
        self.n = int(init["num_envs"])
        self.dt = float(init["sim_dt"])
        self.physx = PhysxSolverConfig.from_payload(init["physx"])
        self.scene = scene_from_plain(init["scene"])
        self.np_dtype = np.dtype(init["np_dtype"])
        self.device = str(init["device"])
        self.cameras = bool(init["enable_cameras"])
        self.spacing = float(init["env_spacing"])
        self.lite = lite = load_mjcf(self.scene.model_file, accept=ACCEPTED_FEATURES)  # as the host reads it
        self.info = info = lite.model_info()
        # MuJoCo's Euler integrates servo kv explicitly, implicitfast/implicit implicitly (RK4: as implicit)
        self.implicit_kv = IMPLICIT_KV.get(mujoco_integrator(self.scene.model_file), True)
        self.drives = physx_drives(lite.joints, lite.actuators, implicit_kv=self.implicit_kv)
        self.mount = root_mount(info.body_names, info.body_parent, info.joint_types, info.joint_body,
                                info.mocap_body_names)
        key = self.scene.default_keyframe
        self.init_qpos = lite.keyframes[key] if key is not None else info.qpos0
        AppLauncher = _import_isaaclab_app()
        progress("launching Isaac Sim (headless)" if init["headless"] else "launching Isaac Sim")
        self.launcher = AppLauncher(headless=bool(init["headless"]), device=self.device,
                                    enable_cameras=self.cameras)
        self.app = self.launcher.app
        self.slots = None
        self.camera = None
        self._physx_view = None
        self._build()

    # -- INIT ------------------------------------------------------------------------------
    def _build(self) -> None:
        import tempfile

        import isaaclab
        import isaaclab.sim as sim_utils
        import omni.usd
        import torch
        from pxr import UsdGeom

        from . import _layout as L
        from ._contacts import ContactMapping, PairContacts, static_collider_paths
        from ._mocap import MocapBodies, author_mocap_bodies, without_mocap_bodies
        from ._terrain import author_height_fields, without_height_fields
        from ._usd_helpers import apply_collision_offsets, apply_contact_report, apply_max_depenetration_velocity
        from ._usd_scene import WORLD_BODY, isolate_articulation_root, make_physics_prims_authorable, stage_model

        np, info, cfg = self.np, self.info, self.physx
        self.torch = torch
        self.sim_utils = sim_utils
        self.isaaclab_version = str(isaaclab.__version__)  # 0.x (the extension's) in Isaac Lab 2.x, 3.x in 3.0
        self.lab = _Lab2() if L.isaaclab_major(self.isaaclab_version) == 2 else _Lab3()
        self.native_quat = self.lab.quat_order
        self.sim = sim_utils.SimulationContext(sim_utils.SimulationCfg(
            dt=self.dt, device=self.device, gravity=tuple(float(g) for g in info.gravity),
            **self.lab.physics_cfg(sim_utils, cfg)))
        stage = omni.usd.get_context().get_stage()
        self.stage = stage

        self.progress("importing the MJCF through Isaac Lab's MjcfConverter")
        from isaaclab.sim.converters import MjcfConverter, MjcfConverterCfg

        _enable_extension(self.app, MJCF_IMPORTER)  # not in Isaac Lab 2.3's kit files; its converter needs it
        self.app.update()
        self.workdir = tempfile.mkdtemp(prefix="unisim-isaacsim-")
        model = os.path.join(self.workdir, "model")
        os.mkdir(model)
        # fix_base=False keeps MuJoCo's meaning: a free root floats, a jointless root is welded (the
        # importer adds that fixed joint itself; a hinge/slide root was refused by root_mount).
        staged = stage_model(self.scene.model_file, model)
        without_height_fields(staged)  # the importer takes no hfield geom: authored below as meshes
        without_mocap_bodies(staged)  # authored below as kinematic rigid bodies
        usd_path = MjcfConverter(MjcfConverterCfg(
            asset_path=staged, usd_dir=os.path.join(self.workdir, "usd"),
            fix_base=False, make_instanceable=False, force_usd_conversion=True, self_collision=False,
        )).usd_path

        UsdGeom.Xform.Define(stage, f"{self.ENV_NS}/env_0")
        from ._drives import articulation_props, rigid_body_props

        spawn = sim_utils.UsdFileCfg(usd_path=usd_path, articulation_props=articulation_props(sim_utils, cfg),
                                     rigid_props=rigid_body_props(sim_utils))
        robot0 = f"{self.ENV_NS}/env_0/{self.ROBOT}"
        spawn.func(robot0, spawn)
        self.root_link = L.mjcf_usd_name(L.root_body_name(info.body_names, info.body_parent, info.mocap_body_names))
        self.root_path = isolate_articulation_root(stage, robot0, self.root_link, fixed_base=self.mount == "fixed")
        if stage.GetPrimAtPath(f"{robot0}/{WORLD_BODY}"):  # real prims: filter paths of contact views (_contacts)
            make_physics_prims_authorable(stage, f"{robot0}/{WORLD_BODY}")

        # Author the per-shape / per-body values on env 0 BEFORE cloning.
        if any(v is not None for v in (cfg.contact_offset, cfg.rest_offset, cfg.max_depenetration_velocity)):
            make_physics_prims_authorable(stage, robot0)
        if cfg.contact_offset is not None or cfg.rest_offset is not None:
            apply_collision_offsets(stage, contact_offset=cfg.contact_offset, rest_offset=cfg.rest_offset)
        if cfg.max_depenetration_velocity is not None:
            apply_max_depenetration_velocity(stage, cfg.max_depenetration_velocity)
        mocap_paths = author_mocap_bodies(stage, f"{self.ENV_NS}/env_0", self.lite)  # kinematic bodies, cloned
        body_paths = apply_contact_report(stage)  # the bodies contacts are reported for (see _contacts)
        author_height_fields(stage, f"{self.ENV_NS}/env_0", self.lite)  # static colliders, cloned with env 0
        world_paths = static_collider_paths(stage, f"{self.ENV_NS}/env_0")

        self.progress(f"cloning {self.n} environments (replicated physics, filtered collisions)")
        from isaacsim.core.cloner import GridCloner

        cloner = GridCloner(spacing=self.spacing)
        cloner.define_base_env(self.ENV_NS)
        env_paths = cloner.generate_paths(f"{self.ENV_NS}/env", self.n)
        gpu = not self.device.startswith("cpu")
        origins = cloner.clone(source_prim_path=env_paths[0], prim_paths=env_paths, replicate_physics=True,
                               copy_from_source=False, enable_env_ids=gpu)
        if not gpu:
            cloner.filter_collisions(self.lab.physics_prim_path(self.sim), "/World/collisions", env_paths)
        self.env_origins = np.asarray(origins, dtype=np.float64).reshape(self.n, 3)

        self.robot = self._articulation()
        robot_paths = [p for p in body_paths if p.startswith(robot0 + "/")]
        self.contacts = ContactMapping.create(robot_paths, self.ENV_NS)  # None: contact_forces not declared
        self.progress("sim.reset()")
        self.sim.reset()
        robot = self.robot
        if bool(robot.is_fixed_base) != (self.mount == "fixed"):
            raise RuntimeError(f"PhysX built a {'fixed' if robot.is_fixed_base else 'floating'}-base articulation "
                               f"for a {self.mount} MJCF root {self.root_link!r}")
        self.layout = L.build_layout(info.joint_names, info.joint_types, info.joint_qposadr, info.joint_dofadr,
                                     info.nq, info.nv, list(robot.joint_names))
        self.body_ids = L.body_order(info.body_names, list(robot.body_names), info.mocap_body_names)
        if self.contacts is not None:
            self.contacts.resolve(info.body_names)
        self.env_rows = L.env_rows_from_prim_paths(list(self.lab.view(robot).prim_paths), self.n)
        self.row_origins = self.env_origins[self.env_rows]  # origin of the env each engine row holds
        self.row_env_paths = [f"{self.ENV_NS}/env_{e}" for e in self.env_rows]
        self.mocap = MocapBodies(self, mocap_paths)
        self.mocap.start(self.physx_view if mocap_paths else None, self.row_env_paths)
        leaf = {p.rsplit("/", 1)[-1]: p for p in robot_paths}
        links = {b: leaf[L.mjcf_usd_name(name)] for b, name in enumerate(info.body_names)
                 if b and L.mjcf_usd_name(name) in leaf and b not in mocap_paths}
        self.pairs = PairContacts(self, {**links, **mocap_paths}, world_paths) if self.contacts is not None else None
        self._actuator_maps()
        self.readback = self._solver_readback()
        from ._drives import read_body_properties

        self.body_properties = read_body_properties(self.stage, self.root_path)
        from unisim_core.plugin.plugin_support import SnapshotMemory

        from ._model_fields import ModelFields
        from ._sensors import SiteSensors
        from ._wrenches import Wrenches

        self.num_links = len(robot.body_names)
        self.sensor_reader = SiteSensors(self.lite)
        self.fields = ModelFields(self)
        self.wrenches = Wrenches(self)
        self.time = np.zeros(self.n)  # s, per engine row
        self.snapshots = SnapshotMemory(self.n)
        self.restored: dict[int, tuple] = {}  # engine row -> the reads of a restored snapshot row
        self._write_state(np.arange(self.n), np.tile(info.qpos0, (self.n, 1)), np.zeros((self.n, info.nv)))

    def _articulation(self):
        """The ``Articulation``, one implicit drive per MJCF hinge/slide joint (:mod:`~unisim_isaacsim._drives`)."""
        import re

        from isaaclab.actuators import ImplicitActuatorCfg
        from isaaclab.assets import Articulation, ArticulationCfg

        from ._drives import joint_actuator_cfgs
        from ._layout import init_joint_positions, mjcf_usd_name

        np, info, d = self.np, self.info, self.drives
        expr = {n: re.escape(mjcf_usd_name(n)) for n in info.joint_names}  # Isaac's joint names are prim names
        groups = joint_actuator_cfgs(ImplicitActuatorCfg, d, expr, self.UNLIMITED)
        q0 = self.init_qpos
        root = next((int(info.joint_qposadr[j]) for j, t in enumerate(info.joint_types) if t == "free"), None)
        quat = q0[root + 3:root + 7] if root is not None else np.array([1.0, 0.0, 0.0, 0.0])
        joint_pos = init_joint_positions(q0, info.joint_types, info.joint_qposadr, info.joint_range, info.joint_names)
        init_state = ArticulationCfg.InitialStateCfg(
            pos=tuple(float(x) for x in q0[root:root + 3]) if root is not None else (0.0, 0.0, 0.0),
            rot=tuple(float(x) for x in self._native_quat(quat)),
            joint_pos={expr[name]: value for name, value in joint_pos.items()},
        )
        return Articulation(ArticulationCfg(
            prim_path=f"{self.ENV_NS}/env_.*/{self.ROBOT}", spawn=None, init_state=init_state, actuators=groups,
            articulation_root_prim_path=self.root_path[len(f"{self.ENV_NS}/env_0/{self.ROBOT}"):]))

    def _actuator_maps(self) -> None:
        """Isaac joint index of each MJCF hinge/slide joint (the drives' joint order): every
        actuator reaches its joint as an explicit effort (:mod:`unisim_physx`)."""
        from ._layout import mjcf_usd_name

        index = {n: i for i, n in enumerate(self.robot.joint_names)}
        self.effort_joint_ids = [index[mjcf_usd_name(name)] for name in self.drives.joints]

    def _solver_readback(self) -> dict[str, Any]:
        """Each applied value with its provenance (see :mod:`unisim_isaacsim._readback`).

        PhysX 107.3's articulation view has getters for the shape contact / rest offsets only
        (``(num_envs, max_shapes)`` float32); every other field is the value authored on the stage:
        the articulation root's iteration counts, the physics scene's bounce threshold and GPU
        capacities (authored there by Isaac Sim's ``PhysicsContext``), each body's depenetration
        velocity.
        """
        from ._usd_helpers import read_engine_solver_values

        np, cfg, view = self.np, self.physx, self.lab.view(self.robot)
        out: dict[str, Any] = {}

        def from_view(field: str, getter: str) -> None:
            raw = np.asarray(self.lab.view_numpy(getattr(view, getter)()))
            if raw.ndim != 2 or raw.shape[0] != self.n:
                raise ValueError(f"{field}: expected ({self.n}, max_shapes) from {getter}, got {raw.shape}")
            if raw.size == 0:
                raise ValueError(f"{field}: {getter} reports no collision shapes")
            first = raw.reshape(-1)[0]
            if not np.all(raw == first):
                raise ValueError(f"{field}: the PhysX view reports non-uniform values {np.unique(raw)}")
            out[field] = {"value": float(first), "source": "physx_view", "rows": int(raw.shape[0])}

        def from_stage(field: str, prim_path: str, attr_name: str) -> None:
            attr = self.stage.GetPrimAtPath(prim_path).GetAttribute(attr_name)
            if not (attr and attr.HasAuthoredValue()):
                raise ValueError(f"{field}: {attr_name} is not authored on {prim_path}")
            value = attr.Get()
            if not isinstance(value, str):
                value = int(value) if isinstance(value, int) else float(value)
            out[field] = {"value": str(value) if field == "solver_type" else value, "source": "usd_stage",
                          "prims": 1}

        scene_path = self.lab.physics_prim_path(self.sim)
        for field, path, attr in (
            ("solver_position_iteration_count", self.root_path, "physxArticulation:solverPositionIterationCount"),
            ("solver_velocity_iteration_count", self.root_path, "physxArticulation:solverVelocityIterationCount"),
            ("bounce_threshold_velocity", scene_path, "physxScene:bounceThreshold"),
            ("gpu_max_rigid_contact_count", scene_path, "physxScene:gpuMaxRigidContactCount"),
            ("gpu_max_rigid_patch_count", scene_path, "physxScene:gpuMaxRigidPatchCount"),
            ("solver_type", scene_path, "physxScene:solverType"),
        ):
            if getattr(cfg, field) is not None:
                from_stage(field, path, attr)
        for field, getter in (("contact_offset", "get_contact_offsets"), ("rest_offset", "get_rest_offsets")):
            if getattr(cfg, field) is not None:
                from_view(field, getter)
        if cfg.max_depenetration_velocity is not None:
            entry = read_engine_solver_values(self.stage, include_contact_offset=False,
                                              include_max_depenetration_velocity=True)["max_depenetration_velocity"]
            out["max_depenetration_velocity"] = {"value": float(entry["value"]), "source": "usd_stage",
                                                 "prims": int(entry["prims"])}
        return out

    # -- state -----------------------------------------------------------------------------
    @property
    def physx_view(self):
        """The worker's own PhysX simulation view (``omni.physics.tensors``, torch frontend in both Isaac Lab
        generations), made on first use after ``sim.reset()``: mocap bodies and contact pairs."""
        if self._physx_view is None:
            import omni.physics.tensors as tensors

            view = tensors.create_simulation_view("torch")
            view.set_subspace_roots("/")
            self._physx_view = view
        return self._physx_view

    def torch_numpy(self, tensor) -> Any:
        """A result of :attr:`physx_view`'s views as numpy."""
        return tensor.detach().cpu().numpy()

    def _np(self, buf) -> Any:
        """An ``ArticulationData`` buffer as float64 numpy."""
        return self.lab.tensor(buf).detach().cpu().numpy().astype(self.np.float64)

    def _wxyz(self, q):
        from ._layout import xyzw_to_wxyz

        return xyzw_to_wxyz(q) if self.native_quat == "xyzw" else q

    def _native_quat(self, q):
        return self.np.ascontiguousarray(q[..., [1, 2, 3, 0]]) if self.native_quat == "xyzw" else q

    def _write_state(self, rows, qpos, qvel) -> None:
        from ._layout import isaac_from_qpos_qvel

        torch, dev = self.torch, self.robot.device
        w = isaac_from_qpos_qvel(self.layout, qpos, qvel, self.row_origins[rows])
        ids = torch.as_tensor(rows, dtype=torch.long, device=dev)
        t = lambda a: torch.as_tensor(a, dtype=torch.float32, device=dev)  # noqa: E731
        if w["root_pose"] is not None:
            pose = w["root_pose"].copy()
            pose[:, 3:7] = self._native_quat(pose[:, 3:7])
            self.lab.write_root(self.robot, t(pose), t(w["root_velocity"]), ids)
        self.lab.write_joints(self.robot, t(w["joint_pos"]), t(w["joint_vel"]), ids)
        self.lab.refresh(self.sim, self.robot)

    def _publish(self) -> None:
        from ._layout import qpos_qvel_from_isaac

        d = self.robot.data
        qpos, qvel = qpos_qvel_from_isaac(
            self.layout, root_pos_w=self._np(d.root_link_pos_w),
            root_quat_wxyz=self._wxyz(self._np(d.root_link_quat_w)),
            root_lin_vel_w=self._np(d.root_link_lin_vel_w), root_ang_vel_w=self._np(d.root_link_ang_vel_w),
            joint_pos=self._np(d.joint_pos), joint_vel=self._np(d.joint_vel), env_origins=self.row_origins)
        self.slots["qpos"][...] = qpos
        self.slots["qvel"][...] = qvel

    def link_table(self, name: str):
        """``robot.data.<name>`` as float64 numpy ``(n, L, ...)``, engine rows, world frame."""
        return self._np(getattr(self.robot.data, name))

    def _body_tables(self) -> dict[str, Any]:
        """Per MuJoCo body (world first), relative to each env origin: link origin pose (wxyz),
        origin linear and angular velocity, COM position and COM linear / angular acceleration."""
        from ._layout import bodies_from_isaac

        d = self.robot.data
        link_quat = self._wxyz(self._np(d.body_link_quat_w))
        pos, quat, lin, ang = bodies_from_isaac(
            self.body_ids, self._np(d.body_link_pos_w), link_quat, self._np(d.body_link_lin_vel_w),
            self._np(d.body_link_ang_vel_w), self.row_origins)
        acc = self._np(d.body_com_acc_w)  # [linear, angular] at the COM, world frame
        com, _, com_acc, ang_acc = bodies_from_isaac(self.body_ids, self._np(d.body_com_pos_w), link_quat,
                                                     acc[..., :3], acc[..., 3:], self.row_origins)
        self.mocap.fill(pos, quat, lin, ang, com)
        return {"pos": pos, "quat": quat, "lin_vel": lin, "ang_vel": ang, "com": com, "com_acc": com_acc,
                "ang_acc": ang_acc}

    def _reads(self) -> tuple:
        """``(bodies (pos, quat, lin, ang), sensordata)`` of the current state, engine rows; a restored
        snapshot's rows read what they read when it was taken."""
        t = self._body_tables()
        qpos, qvel = self.slots["qpos"], self.slots["qvel"]
        sens = self.sensor_reader.read(qpos=self.np.asarray(qpos, dtype=float), qvel=self.np.asarray(qvel, dtype=float),
                                       gravity=self.fields.tables["gravity"], **t)
        bodies = [t["pos"], t["quat"], t["lin_vel"], t["ang_vel"]]
        for row, (b, sd) in self.restored.items():
            for table, value in zip(bodies, b):
                table[row] = value
            sens[row] = sd
        if self.restored:
            self.mocap.fill(*bodies)  # mocap poses are not in a snapshot: they stay where they are
        return bodies, sens

    def _changed(self) -> None:
        self.restored.clear()

    # -- handlers --------------------------------------------------------------------------
    def handlers(self) -> dict[str, Any]:
        from unisim_core.plugin.worker.hosted import info_to_plain, pack_array, unpack_array
        from unisim_core.plugin.worker.shm import SlotSet

        from ._model_fields import MODEL_TERMS, REFUSED_TERMS

        np, torch = self.np, self.torch
        caps = ["contacts", "pre_step_control", "sensors", "body_force", "body_torque", "push", "physics_snapshot",
                "init_randomization", "interval_randomization", "reset_randomization"] + (
            ["video_capture"] if self.cameras else []) + ["mocap"] + (
            ["contact_forces", "contact_filters", "contact_torques"] if self.contacts is not None else [])
        forces = ["root_lin_vel_delta", "root_ang_vel_delta", "body_force", "body_torque"]

        def describe() -> dict[str, Any]:
            return {"info": info_to_plain(self.info), "capabilities": caps, "init_terms": list(MODEL_TERMS),
                    "interval_terms": list(MODEL_TERMS) + forces, "reset_terms": list(MODEL_TERMS) + forces,
                    "refused_terms": dict(REFUSED_TERMS),
                    "snapshot_tier": "state", "np_dtype": self.np_dtype.str, "env_rows": self.env_rows,
                    "quat_order": "wxyz", "solver_readback": self.readback,
                    "engine": {"name": "isaacsim", "isaaclab_extension": self.isaaclab_version, "device": self.device,
                               "native_quat_order": self.native_quat, "fixed_base": bool(self.robot.is_fixed_base),
                               "body_properties": self.body_properties}}

        def attach(descriptors: dict[str, Any]) -> None:
            self.slots = SlotSet.attach(descriptors)
            self._publish()

        def step(nsteps: int) -> None:
            robot, dev, ids = self.robot, self.robot.device, self.effort_joint_ids
            ctrl = np.asarray(self.slots["ctrl"], dtype=np.float64)
            self._changed()
            for k in range(nsteps):  # servo kp (explicit in MuJoCo) as an effort from this substep's state
                q, qd = self._np(robot.data.joint_pos)[:, ids], self._np(robot.data.joint_vel)[:, ids]
                law = self.fields.drives  # each env's randomized servo law (the model's until a write)
                efforts = torch.as_tensor(law.efforts(ctrl, q, qd), dtype=torch.float32, device=dev)
                self.lab.set_targets(robot, None, [], efforts, ids)
                self.wrenches.apply()
                self.mocap.substep(k, nsteps)
                robot.write_data_to_sim()
                self.sim.step(render=False)
                robot.update(self.dt)
                if self.contacts is not None:
                    self.contacts.update(self.dt)
                self.time += self.dt
            self.mocap.after_step()
            self._publish()

        def set_state(env_ids: list[int]) -> None:
            k = len(env_ids)
            self._changed()
            self._write_state(np.asarray(env_ids, dtype=np.int64), np.array(self.slots["in_qpos"][:k]),
                              np.array(self.slots["in_qvel"][:k]))
            self._publish()

        def bodies() -> None:
            (pos, quat, lin, ang), _ = self._reads()
            s = self.slots
            s["xpos"][...], s["xquat"][...], s["linvel"][...], s["angvel"][...] = pos, quat, lin, ang

        def sensors() -> None:
            if self.sensor_reader.dims:
                self.slots["sensordata"][...] = self._reads()[1]

        def apply_body_force(body_ids: list[int], force: dict, torque: dict | None) -> None:
            self.wrenches.stage(np.asarray(body_ids, dtype=np.int64), unpack_array(force),
                                None if torque is None else unpack_array(torque))

        def clear_body_forces() -> None:
            self.wrenches.clear()

        def get_physics_state() -> dict:
            """Rows ``[time, qpos, qvel]``; each row's reads are remembered, so restoring a row taken
            here reads back bit for bit (tier "state": PhysX's solver state is not in the row)."""
            rows = np.concatenate([self.time[:, None], np.asarray(self.slots["qpos"], dtype=np.float64),
                                   np.asarray(self.slots["qvel"], dtype=np.float64)], axis=1)
            bodies, sens = self._reads()
            keys = np.concatenate([rows, np.arange(self.n)[:, None]], axis=1)  # per engine row: env origins differ
            self.snapshots.remember(keys, ((tuple(t[i].copy() for t in bodies), sens[i].copy(),
                                            self.slots["qpos"][i].copy(), self.slots["qvel"][i].copy())
                                           for i in range(self.n)))
            return pack_array(rows)

        def set_physics_state(state: dict) -> None:
            rows = unpack_array(state)
            nq = self.info.nq
            self._changed()
            self._write_state(np.arange(self.n), rows[:, 1:1 + nq], rows[:, 1 + nq:])
            self.time = rows[:, 0].copy()
            self._publish()
            for i in range(self.n):
                known = self.snapshots.recall(np.append(rows[i], i))
                if known is not None:
                    self.restored[i] = known[:2]
                    self.slots["qpos"][i], self.slots["qvel"][i] = known[2], known[3]

        def write_model_field(term: str, env_ids: list[int], target_ids: list[int] | None, values: dict) -> None:
            self.fields.write(term, np.asarray(env_ids, dtype=np.int64),
                              None if target_ids is None else np.asarray(target_ids, dtype=np.int64),
                              unpack_array(values))
            self._changed()

        def read_model_field(term: str) -> dict:
            return pack_array(self.fields.read(term))

        def check_model_values(term: str, target_ids: list[int] | None) -> None:
            self.fields.check(term, None if target_ids is None else np.asarray(target_ids, dtype=np.int64))

        bound: list[tuple[Any, int]] = []  # key -> (ContactMapping or PairContacts, its key)

        def bind_contacts(body_ids: list[int], against_ids: list[int] | None, width: int = 3) -> int:
            """Net forces of robot bodies from the ContactSensor; anything else (a filter, torques, a mocap
            body) from PhysX's rigid contact views."""
            if against_ids is None and width == 3 and self.contacts.covers(body_ids):
                bound.append((self.contacts, self.contacts.bind(body_ids)))
            else:
                bound.append((self.pairs, self.pairs.bind(body_ids, against_ids, width, self.info.body_names)))
            return len(bound) - 1

        def contacts(key: int) -> dict:
            source, k = bound[key]
            return pack_array(source.read(k, self._np) if source is self.contacts else source.read(k))

        def bind_mocap(body_id: int) -> int:
            return self.mocap.index(body_id)

        def mocap_get(key: int) -> list:
            return [pack_array(a) for a in self.mocap.get(key)]

        def mocap_write(key: int, env_ids: list[int], pos: dict, quat: dict) -> None:
            self.mocap.write(key, np.asarray(env_ids, dtype=np.int64), unpack_array(pos), unpack_array(quat))
            self._changed()

        def init_renderer(spacing, offset_mode, headless, capture, width, height, camera) -> None:
            from unisim_core.contract.errors import UnsupportedCapabilityError

            if not self.cameras:
                raise UnsupportedCapabilityError("isaacsim", "video_capture", "launch with enable_cameras=True")
            import omni.replicator.core as rep

            from ._usd_scene import define_camera

            if self.camera is not None:
                self.camera["annotator"].detach()
            else:  # the MJCF's lights are not imported; light the scene evenly
                light = self.sim_utils.DomeLightCfg(intensity=2000.0, color=(0.9, 0.9, 0.9))
                light.func("/World/UniSimLight", light)
            path = "/World/UniSimCamera"
            define_camera(self.stage, path, int(width), int(height))
            product = rep.create.render_product(path, (int(width), int(height)))
            annotator = rep.AnnotatorRegistry.get_annotator("rgb", device="cpu")
            annotator.attach([product])
            self.camera = {"path": path, "product": product, "annotator": annotator, "cfg": dict(camera)}
            for _ in range(self.RENDER_WARMUP):  # RTX returns empty, then black frames while it warms up
                self.sim.render()

        def _aim() -> None:
            from ._layout import orbit_eye
            from ._usd_scene import set_camera_look_at

            cam = self.camera["cfg"]
            row = self.env_rows.index(0)  # the engine row holding contract env 0
            if cam.get("lookat") is not None:
                target = np.asarray(cam["lookat"], dtype=np.float64) + self.row_origins[row]
            else:
                body = self.info.body_names.index(cam["track_body"]) if cam.get("track_body") else 1
                ib = int(self.body_ids[min(body, len(self.body_ids) - 1)])
                target = self._np(self.robot.data.body_link_pos_w)[row, max(ib, 0)]
            eye = orbit_eye(target, cam.get("distance", 3.0), cam.get("azimuth", 135.0), cam.get("elevation", -20.0))
            set_camera_look_at(self.stage, self.camera["path"], eye, target)

        def capture_frame() -> dict:
            if self.camera is None:
                init_renderer(0.0, "none", True, True, 640, 480, {})
            _aim()
            renders = self.CAPTURE_RENDERS + self.RENDER_WARMUP
            for i in range(renders):  # at least CAPTURE_RENDERS: the annotator may lag the re-aimed camera
                self.sim.render()
                frame = np.asarray(self.camera["annotator"].get_data())
                if frame.size and i + 1 >= self.CAPTURE_RENDERS:
                    break
            if frame.size == 0:
                raise RuntimeError(f"the replicator rgb annotator returned no data after {renders} renders")
            return pack_array(np.ascontiguousarray(frame[..., :3], dtype=np.uint8))

        def close() -> None:
            import shutil

            if self.slots is not None:
                self.slots.close()
                self.slots = None
            shutil.rmtree(self.workdir, ignore_errors=True)

        ops = (describe, attach, step, set_state, bodies, sensors, apply_body_force, clear_body_forces,
               get_physics_state, set_physics_state, write_model_field, read_model_field, check_model_values,
               bind_contacts, contacts, bind_mocap, mocap_get, mocap_write,
               init_renderer, capture_frame, close)
        return {f.__name__: f for f in ops}


if __name__ == "__main__":
    main()
