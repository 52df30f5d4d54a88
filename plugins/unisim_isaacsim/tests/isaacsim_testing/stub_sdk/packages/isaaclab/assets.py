"""STUB ``isaaclab.assets``: ``Articulation`` / ``ArticulationCfg`` over the stub PhysX view.

Rules mirrored:

- construction registers the asset; ``sim.reset()`` initializes it (Isaac Lab 2.3.2
  ``isaaclab/assets/asset_base.py``: the PLAY callback runs ``_initialize_impl``); the
  ``articulation_root_prim_path`` must carry ``ArticulationRootAPI``;
- every actuator's ``joint_names_expr`` and every ``init_state.joint_pos`` key must match a joint
  (``isaaclab/utils/string.py`` ``resolve_matching_names`` / ``resolve_matching_names_values``:
  "Not all regular expressions are matched");
- ``_validate_cfg``: a default joint position outside its limits raises ``ValueError`` (2.3.2
  ``isaaclab/assets/articulation/articulation.py`` L1920-1935; 3.0.0
  ``isaaclab_physx/assets/articulation/articulation.py`` L4204-4219), re-raised by ``sim.reset()``;
- Isaac Lab 2.3.2: torch data in timestamped buffers, quaternions wxyz; writers store the written
  state in their buffers and drop only the body buffers (articulation.py L427-446, L606-614);
  ``InitialStateCfg.rot`` wxyz;
- Isaac Lab 3.0.0: ``ProxyArray`` data (``.torch``), quaternions xyzw (``articulation_data.py``
  ``root_link_quat_w``), keyword-only ``*_index`` writers, targets through
  ``actuators.target_command.set_position_index`` / ``set_effort_index``
  (``isaaclab/actuators/actuator_collection.py``), ``root_view``, ``InitialStateCfg.rot`` xyzw
  (``isaaclab/assets/asset_base_cfg.py``);
- external wrenches: 2.3.2 ``set_external_force_and_torque(forces, torques, positions, body_ids,
  env_ids, is_global)`` fills per-link buffers (all zero: ``has_external_wrench`` off) that
  ``write_data_to_sim`` hands to ``apply_forces_and_torques_at_position`` before every step
  (articulation.py ``write_data_to_sim``); 3.0.0 ``permanent_wrench_composer.set_forces_and_torques_index``
  (``isaaclab/utils/wrench_composer.py``);
- joint damping / armature: 2.3.2 ``write_joint_damping_to_sim`` / ``write_joint_armature_to_sim``
  ``(len(env_ids), len(joint_ids))``, 3.0.0 their ``*_index`` keyword forms; mass properties 3.0.0
  ``set_masses_index`` / ``set_coms_index`` / ``set_inertias_index`` (partial data) and ``data.body_mass``,
  ``body_com_pose_b`` (xyzw), ``body_inertia``;
- ``data.body_com_pos_w`` (link pose applied to the COM offset) and ``data.body_com_acc_w`` ``(n, L, 6)``
  (``[lin_acc, ang_acc]`` of the COM, world: ``get_link_accelerations``).
"""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

import numpy as np
import omni.usd
import torch
from isaacsim_testing.stub_sdk import lab_major
from isaacsim_testing.stub_sdk.engine import ArticulationModel, ArticulationView, _qrot

from isaaclab._cfg import MISSING, cfg_class
from isaaclab.sim import SimulationContext

V2 = lab_major() == 2
_IDENTITY = (1.0, 0.0, 0.0, 0.0) if V2 else (0.0, 0.0, 0.0, 1.0)


class ArticulationCfg:
    InitialStateCfg = cfg_class("InitialStateCfg", {
        "pos": (0.0, 0.0, 0.0), "rot": _IDENTITY, "lin_vel": (0.0, 0.0, 0.0), "ang_vel": (0.0, 0.0, 0.0),
        "joint_pos": {".*": 0.0}, "joint_vel": {".*": 0.0}})

    def __init__(self, *, prim_path: str = MISSING, spawn: Any = None, init_state: Any = None,
                 actuators: dict[str, Any] = MISSING, articulation_root_prim_path: str | None = None) -> None:
        self.prim_path, self.spawn, self.actuators = prim_path, spawn, actuators
        self.init_state = init_state if init_state is not None else self.InitialStateCfg()
        self.articulation_root_prim_path = articulation_root_prim_path


def _resolve(exprs: list[str], names: list[str], what: str) -> list[int]:
    ids, unmatched = [], []
    for e in exprs:
        hit = [i for i, n in enumerate(names) if re.fullmatch(e, n)]
        ids += hit
        if not hit:
            unmatched.append(e)
    if unmatched:
        raise ValueError(f"Not all regular expressions are matched! {what} {unmatched} in {names}")
    return ids


class _Buffer:
    """Isaac Lab 2.3.2 ``isaaclab/utils/buffers/timestamped_buffer.py``."""

    def __init__(self) -> None:
        self.data, self.timestamp = None, -1.0


class _Proxy:
    """Isaac Lab 3.0.0 ``isaaclab/utils/warp/proxy_array.py``: read through ``.torch``."""

    def __init__(self, array: np.ndarray, device: str) -> None:
        self.torch = torch.Tensor(array, device)


class _WarpArray:
    """A ``warp.array``'s ``numpy()`` (a host copy); no ``cpu()``, unlike a torch tensor."""

    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    def numpy(self) -> np.ndarray:
        return self._array.copy()


class _Data:
    def __init__(self, robot: Articulation) -> None:
        self._robot, self._sim_timestamp = robot, 0.0
        for name in ("_root_link_pose_w", "_root_link_vel_w", "_joint_pos", "_joint_vel", "_body_link_pose_w",
                     "_body_link_vel_w", "_body_com_acc_w"):
            setattr(self, name, _Buffer())

    def _read(self, name: str, pull) -> np.ndarray:
        buf = getattr(self, name)
        if buf.timestamp < self._sim_timestamp:
            buf.data, buf.timestamp = pull(), self._sim_timestamp
        return buf.data

    def _out(self, array: np.ndarray):
        device = self._robot.device
        return torch.Tensor(np.asarray(array, dtype=np.float32), device) if V2 else _Proxy(array, device)

    def _wxyz(self, q: np.ndarray) -> np.ndarray:
        return q[..., [3, 0, 1, 2]] if V2 else q

    def _root_pose(self) -> np.ndarray:
        view = self._robot._view
        return self._read("_root_link_pose_w", view.get_root_transforms) if V2 else view._pending("root_pose")

    def _root_vel(self) -> np.ndarray:
        view = self._robot._view
        return self._read("_root_link_vel_w", view.get_root_velocities) if V2 else view._pending("root_vel")

    def _links(self) -> np.ndarray:
        view = self._robot._view
        if V2:
            return self._read("_body_link_pose_w", view.get_link_transforms)
        return view._links(view._pending("root_pose"))  # 3.0 recomputes forward kinematics on read

    @property
    def root_link_pos_w(self):
        return self._out(self._root_pose()[:, :3])

    @property
    def root_link_quat_w(self):
        return self._out(self._wxyz(self._root_pose()[:, 3:]))

    @property
    def root_link_lin_vel_w(self):
        return self._out(self._root_vel()[:, :3])

    @property
    def root_link_ang_vel_w(self):
        return self._out(self._root_vel()[:, 3:])

    @property
    def joint_pos(self):
        view = self._robot._view
        return self._out(self._read("_joint_pos", view.get_dof_positions) if V2 else view._pending("dof_pos"))

    @property
    def joint_vel(self):
        view = self._robot._view
        return self._out(self._read("_joint_vel", view.get_dof_velocities) if V2 else view._pending("dof_vel"))

    @property
    def body_link_pos_w(self):
        return self._out(self._links()[..., :3])

    @property
    def body_link_quat_w(self):
        return self._out(self._wxyz(self._links()[..., 3:]))

    @property
    def body_com_pos_w(self):
        links = self._links()
        com = self._robot._view.coms[..., :3]
        return self._out(links[..., :3] + _qrot(links[..., [6, 3, 4, 5]], com))

    @property
    def body_com_acc_w(self):
        view = self._robot._view
        return self._out(self._read("_body_com_acc_w", view.get_link_accelerations) if V2
                         else view.get_link_accelerations())

    if not V2:
        @property
        def body_mass(self):
            return self._out(self._robot._view.masses)

        @property
        def body_com_pose_b(self):
            return self._out(self._robot._view.coms)

        @property
        def body_inertia(self):
            return self._out(self._robot._view.inertias)

    @property
    def body_link_lin_vel_w(self):
        return self._out(self._link_vel()[..., :3])

    @property
    def body_link_ang_vel_w(self):
        return self._out(self._link_vel()[..., 3:])

    def _link_vel(self) -> np.ndarray:
        view = self._robot._view
        if V2:
            return view.get_link_velocities()
        return view._link_velocities(view._pending("root_vel"))  # 3.0 recomputes forward kinematics on read


class _TargetCommand:
    def __init__(self, robot: Articulation) -> None:
        self._robot = robot

    def set_position_index(self, *, value, joint_ids=None, env_ids=None, full_data=False) -> None:
        self._robot._set_target("pos", value, joint_ids)

    def set_effort_index(self, *, value, joint_ids=None, env_ids=None, full_data=False) -> None:
        self._robot._set_target("effort", value, joint_ids)


class _WrenchComposer:
    """Isaac Lab 3.0.0 ``WrenchComposer``: ``set_forces_and_torques_index`` overwrites the wrench of the
    envs and bodies given (all by default); it acts at every step until overwritten."""

    def __init__(self, robot: Articulation) -> None:
        self._robot = robot

    def set_forces_and_torques_index(self, forces=None, torques=None, positions=None, body_ids=None, env_ids=None,
                                     is_global=False) -> None:
        self._robot._wrench(forces, torques, positions, body_ids, env_ids, is_global)


class Articulation:
    def __init__(self, cfg: ArticulationCfg) -> None:
        self.cfg = cfg
        self.sim = SimulationContext.instance_
        if self.sim is None:
            raise RuntimeError("Simulation context is not initialized")
        self.sim.assets.append(self)
        self._view = None
        self.device = self.sim.device
        self._targets = {"pos": None, "effort": None}
        self.has_external_wrench = False
        if not V2:
            self.actuators = SimpleNamespace(target_command=_TargetCommand(self))
            self.permanent_wrench_composer = _WrenchComposer(self)

    # -- initialization (sim.reset) ----------------------------------------------------------
    def _initialize_impl(self) -> None:
        from pxr import Usd

        stage = omni.usd.get_context().get_stage()
        envs = sorted(str(p.GetPath()) for p in Usd.PrimRange(stage.GetPseudoRoot())
                      if re.fullmatch(self.cfg.prim_path, str(p.GetPath())))
        if not envs:
            raise RuntimeError(f"Could not find prim with path {self.cfg.prim_path}.")
        rel = self.cfg.articulation_root_prim_path or ""
        model = ArticulationModel(stage, envs[0] + rel)
        self._view = ArticulationView(stage, model, [e + rel for e in envs], self.device,  # string-sorted rows
                                      (lambda a: torch.Tensor(a, self.device)) if V2 else _WarpArray,
                                      (lambda a: torch.Tensor(a, "cpu")) if V2 else _WarpArray)
        self.joint_names, self.body_names = list(model.joint_names), list(model.body_names)
        self.data = _Data(self)
        self.data.joint_names = self.joint_names
        n, J = self._view.count, len(self.joint_names)
        for act in self.cfg.actuators.values():
            ids = _resolve(list(act.joint_names_expr), self.joint_names, "actuator joints")
            self._view.stiffness[:, ids] = act.stiffness
            self._view.damping[:, ids] = act.damping
        default = np.zeros(J)
        for key, value in self.cfg.init_state.joint_pos.items():
            default[_resolve([key], self.joint_names, "init_state.joint_pos")] = value
        self.default_joint_pos = np.tile(default, (n, 1)).astype(np.float32)
        self._validate_cfg()
        self._view.dof_pos[:] = self.default_joint_pos

    def _validate_cfg(self) -> None:
        limits = self._view.get_dof_limits()[0]
        d = self.default_joint_pos[0]
        bad = np.nonzero((d < limits[:, 0]) | (d > limits[:, 1]))[0]
        if len(bad):
            msg = "The following joints have default positions out of the limits: \n"
            for i in bad:
                msg += f"\t- '{self.joint_names[i]}': {d[i]:.3f} not in [{limits[i, 0]:.3f}, {limits[i, 1]:.3f}]\n"
            raise ValueError(msg)

    # -- properties ------------------------------------------------------------------------------
    def _ready(self):
        if self._view is None:
            raise RuntimeError("the articulation is not initialized: call sim.reset() first")
        return self._view

    @property
    def is_fixed_base(self) -> bool:
        return bool(self._ready().shared_metatype.fixed_base)

    if V2:
        @property
        def root_physx_view(self):
            return self._ready()
    else:
        @property
        def root_view(self):
            return self._ready()

    # -- writes ------------------------------------------------------------------------------
    def _array(self, t, shape: tuple[int, ...], what: str) -> np.ndarray:
        if not isinstance(t, torch.Tensor) or t.device != self.device:
            raise TypeError(f"{what}: expected a torch tensor on {self.device}")
        if t.shape != shape:
            raise ValueError(f"{what}: expected shape {shape}, got {t.shape}")
        return np.asarray(t.array, dtype=np.float64)

    def _ids(self, env_ids) -> np.ndarray:
        return np.asarray(env_ids.array if isinstance(env_ids, torch.Tensor) else env_ids, dtype=np.int64)

    def _write_pose(self, root_pose, env_ids) -> None:
        ids = self._ids(env_ids)
        pose = self._array(root_pose, (len(ids), 7), "root_pose")
        if V2:
            self.data._root_link_pose_w.data = self.data._root_pose().copy()
            self.data._root_link_pose_w.data[ids] = pose[:, [0, 1, 2, 4, 5, 6, 3]]
            self.data._root_link_pose_w.timestamp = self.data._sim_timestamp
            pose = pose[:, [0, 1, 2, 4, 5, 6, 3]]  # to PhysX's xyzw
            for name in ("_body_link_pose_w", "_body_link_vel_w"):
                getattr(self.data, name).timestamp = -1.0
        self._view.set_root_transforms(pose, ids)

    def _write_velocity(self, root_velocity, env_ids) -> None:
        ids = self._ids(env_ids)
        vel = self._array(root_velocity, (len(ids), 6), "root_velocity")
        if V2:
            self.data._root_link_vel_w.data = self.data._root_vel().copy()
            self.data._root_link_vel_w.data[ids] = vel
            self.data._root_link_vel_w.timestamp = self.data._sim_timestamp
            self.data._body_link_vel_w.timestamp = -1.0
        self._view.set_root_velocities(vel, ids)

    def _write_joints(self, position, velocity, env_ids) -> None:
        ids = self._ids(env_ids)
        J = len(self.joint_names)
        pos = self._array(position, (len(ids), J), "position")
        vel = self._array(velocity, (len(ids), J), "velocity")
        if V2:
            for name, values, pull in (("_joint_pos", pos, self._view.get_dof_positions),
                                       ("_joint_vel", vel, self._view.get_dof_velocities)):
                buf = getattr(self.data, name)
                buf.data = self.data._read(name, pull).copy()
                buf.data[ids] = values
                buf.timestamp = self.data._sim_timestamp
            for name in ("_body_link_pose_w", "_body_link_vel_w"):
                getattr(self.data, name).timestamp = -1.0
        self._view.set_dof_positions(pos, ids)
        self._view.set_dof_velocities(vel, ids)

    if V2:
        def write_root_link_pose_to_sim(self, root_pose, env_ids=None) -> None:
            self._write_pose(root_pose, env_ids)

        def write_root_link_velocity_to_sim(self, root_velocity, env_ids=None) -> None:
            self._write_velocity(root_velocity, env_ids)

        def write_joint_state_to_sim(self, position, velocity, joint_ids=None, env_ids=None) -> None:
            self._write_joints(position, velocity, env_ids)

        def set_joint_position_target(self, target, joint_ids=None, env_ids=None) -> None:
            self._set_target("pos", target, joint_ids)

        def set_joint_effort_target(self, target, joint_ids=None, env_ids=None) -> None:
            self._set_target("effort", target, joint_ids)
    else:
        def write_root_link_pose_to_sim_index(self, *, root_pose, env_ids=None, full_data=False,
                                              skip_forward=False) -> None:
            self._write_pose(root_pose, env_ids)

        def write_root_link_velocity_to_sim_index(self, *, root_velocity, env_ids=None, full_data=False,
                                                  skip_forward=False) -> None:
            self._write_velocity(root_velocity, env_ids)

        def write_joint_state_to_sim_index(self, *, position, velocity, joint_ids=None, env_ids=None,
                                           full_data=False, skip_forward=False) -> None:
            self._write_joints(position, velocity, env_ids)

    def _set_target(self, kind: str, target, joint_ids) -> None:
        ids = list(joint_ids)
        self._targets[kind] = (ids, self._array(target, (self._ready().count, len(ids)), f"{kind} target"))

    def _wrench(self, forces, torques, positions, body_ids, env_ids, is_global: bool) -> None:
        view = self._ready()
        n, L = view.count, len(self.body_names)
        env = np.arange(n) if env_ids is None else self._ids(env_ids)
        bodies = np.arange(L) if body_ids is None else self._ids(body_ids)
        shape = (len(env), len(bodies), 3)
        if not hasattr(self, "_external_force"):
            self._external_force, self._external_torque, self._external_pos = (np.zeros((n, L, 3)) for _ in range(3))
        f, t = self._array(forces, shape, "forces"), self._array(torques, shape, "torques")
        self._external_force[np.ix_(env, bodies)] = f
        self._external_torque[np.ix_(env, bodies)] = t
        if positions is not None:
            self._external_pos[np.ix_(env, bodies)] = self._array(positions, shape, "positions")
        self._uses_positions = positions is not None
        self._global = bool(is_global)
        self.has_external_wrench = bool(self._external_force.any() or self._external_torque.any())

    if V2:
        def set_external_force_and_torque(self, forces, torques, positions=None, body_ids=None, env_ids=None,
                                          is_global=False) -> None:
            self._wrench(forces, torques, positions, body_ids, env_ids, is_global)

        def write_joint_damping_to_sim(self, damping, joint_ids=None, env_ids=None) -> None:
            self._joint_property("damping", damping, joint_ids, env_ids)

        def write_joint_armature_to_sim(self, armature, joint_ids=None, env_ids=None) -> None:
            self._joint_property("armature", armature, joint_ids, env_ids)
    else:
        def write_joint_damping_to_sim_index(self, *, damping, joint_ids=None, env_ids=None) -> None:
            self._joint_property("damping", damping, joint_ids, env_ids)

        def write_joint_armature_to_sim_index(self, *, armature, joint_ids=None, env_ids=None) -> None:
            self._joint_property("armature", armature, joint_ids, env_ids)

        def _body_property(self, name: str, values, body_ids, env_ids, width: tuple[int, ...]) -> None:
            view = self._ready()
            env = np.arange(view.count) if env_ids is None else self._ids(env_ids)
            bodies = np.arange(len(self.body_names)) if body_ids is None else self._ids(body_ids)
            getattr(view, name)[np.ix_(env, bodies)] = self._array(values, (len(env), len(bodies)) + width, name)

        def set_masses_index(self, *, masses, body_ids=None, env_ids=None) -> None:
            self._body_property("masses", masses, body_ids, env_ids, ())

        def set_coms_index(self, *, coms, body_ids=None, env_ids=None) -> None:
            self._body_property("coms", coms, body_ids, env_ids, (7,))

        def set_inertias_index(self, *, inertias, body_ids=None, env_ids=None) -> None:
            self._body_property("inertias", inertias, body_ids, env_ids, (9,))

    def _joint_property(self, name: str, values, joint_ids, env_ids) -> None:
        view = self._ready()
        env = np.arange(view.count) if env_ids is None else self._ids(env_ids)
        joints = np.arange(len(self.joint_names)) if joint_ids is None else np.asarray(list(joint_ids), dtype=np.int64)
        getattr(view, name)[np.ix_(env, joints)] = self._array(values, (len(env), len(joints)), name)

    def write_data_to_sim(self) -> None:
        view = self._ready()
        if self.has_external_wrench:  # articulation.py write_data_to_sim: before every step
            pos = self._external_pos if self._uses_positions else None
            t = lambda a: torch.Tensor(a.reshape(-1, 3), self.device)  # noqa: E731
            view.apply_forces_and_torques_at_position(t(self._external_force), t(self._external_torque),
                                                      None if pos is None else t(pos), np.arange(view.count),
                                                      self._global)
        if self._targets["pos"] is not None:
            ids, values = self._targets["pos"]
            view.pos_target[:, ids] = values
        if self._targets["effort"] is not None:
            ids, values = self._targets["effort"]
            view.effort[:, ids] = values

    def update(self, dt: float) -> None:
        self.data._sim_timestamp += dt
