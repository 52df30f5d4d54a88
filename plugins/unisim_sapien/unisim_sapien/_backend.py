"""``SapienBackend``: the SimBackend contract on SAPIEN 3's PhysX 5 (CPU), one scene per env.

The MJCF file is read by ``unisim_core.plugin.mjcf_lite`` (tables, names, sensors, keyframes, height fields;
features outside its subset refused by name) and :mod:`._mjcf_extra` (mesh files), and
built as PhysX articulations by :mod:`._build` with the PhysX mapping of ``unisim_physx``:
MuJoCo's body/joint semantics set explicitly, joint damping and servo ``kv`` on an implicit drive,
the rest of every actuator as a joint effort recomputed before each substep.

Conventions converted here: PhysX link velocities are centre-of-mass velocities with a world
angular velocity; the contract's free-joint ``qvel`` is ``[v_origin (world), w (body frame)]`` and
body linear velocities are at the body origin. Engine state is float32. Sensors are evaluated from
link kinematics by MuJoCo's definitions; PhysX reports no link accelerations, so the accelerometer
uses the velocity change over the last substep (after ``set_state``, over one probe substep that
is undone with ``PhysxCpuSystem.pack``/``unpack``).
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import numpy as np
import sapien

from unisim_core import SimBackend, UnsupportedCapabilityError
from unisim_core.contract import quat as Q
from unisim_core.contract.contacts import ContactSums
from unisim_core.contract.heightfield import HFieldSampler
from unisim_core.contract.kinematics import site_jacobian
from unisim_core.contract.model import ModelInfo
from unisim_core.contract.subtree import SUBTREE_SENSORS, subtree_sensor
from unisim_core.plugin.mjcf_lite import FRAME_AXES, in_reference_frame
from unisim_core.plugin.plugin_support import SnapshotMemory, load_mjcf_or_refuse
from unisim_physx import IMPLICIT_KV, mujoco_integrator, physx_drives

from . import _hooks
from ._build import (
    actors,
    build_env,
    check_scene,
    check_tendons,
    configure_engine,
    friction_ranks,
    layout_of,
    posed,
    world_pose,
)
from ._equality import connects, joint_tendons
from ._friction import physx_materials
from ._hooks import REFUSED_TERMS
from ._mjcf_extra import acting_tendons, read_meshes
from ._mocap import MocapBodies, PosedLink, SapienMocapPoseBinding
from ._options import SapienOptions
from ._randomization import ModelFields
from ._readback import read_solver_values
from ._site_motors import SiteMotors
from ._thread_keys import check_thread_keys
from ._warnings import SapienModellingWarning

__all__ = ["SapienBackend"]


#: mjcf_lite's optional features this backend simulates (``unisim_core.plugin.mjcf_lite.OPTIONAL_FEATURES``).
ACCEPTED = frozenset({"frictionloss", "body_gravcomp", "hfield", "mocap", "multi_joint_body",
                      "joint_stiffness", "fixed_tendon", "dampratio", "joint_equality", "site_transmission",
                      "tendon_transmission", "connect_equality", "general_actuator", "subtreecom_sensor",
                      "subtreelinvel_sensor", "subtreeangmom_sensor", "framexaxis_sensor", "frameyaxis_sensor",
                      "framezaxis_sensor", "tendon_equality"})
#: Features the reader refuses that SAPIEN's PhysX has no counterpart for: the refusal carries the engine's reason.
ENGINE_LIMITS = {
    "ball_joint": "SAPIEN 3's articulation joints are fixed, revolute, prismatic or free: it has no spherical joint",
    "spatial_tendon": "SAPIEN 3 builds PhysX fixed tendons only (joint coordinates); a spatial tendon's path through "
                      "sites and wrapping geoms has no counterpart",
    "plugin": "MuJoCo's engine plugins run inside MuJoCo only",
    "plugin_actuator": "MuJoCo's engine plugins run inside MuJoCo only",
    "joint_actuatorgravcomp": "PhysX compensates gravity per link (its gravity off, or a force at its COM); nothing "
                              "routes a joint's share through its actuators' force clamp",
}


def _xyz(v) -> np.ndarray:
    return np.asarray(v, dtype=np.float64)


#: Below this many env-body rows the kinematics are converted in Python floats: on a few 3-vectors
#: each numpy call costs ~1-3 µs (quadruped N=1: 127 µs per read in numpy, 9 µs in floats).
_SCALAR_ROWS = 32
#: A zero torque (or force) for PhysX's add_force_torque (it copies its arguments).
_ZERO3 = np.zeros(3, dtype=np.float32)


def _engine_ordered(drives, rows: np.ndarray) -> tuple[Any, np.ndarray]:
    """``(drives, order)``: ``drives`` with its joints listed in the engine's order (``rows[p]`` is the
    MJCF joint of dof ``p``) and, where every joint has exactly one actuator, its actuators too
    (actuator ``p`` drives dof ``p``: the servo law then runs on whole dof vectors, no gather or
    scatter per substep); ``order``: the MJCF actuator of each drives actuator (ctrl columns)."""
    inv = np.empty(len(rows), dtype=np.int64)
    inv[rows] = np.arange(len(rows))
    act_joint = np.where(drives.act_joint >= 0, inv[drives.act_joint], -1)  # -1: an actuator on a fixed tendon
    order = np.arange(len(act_joint))
    if drives.moment is None and len(act_joint) == len(rows) and len(set(act_joint.tolist())) == len(rows):
        order = np.argsort(act_joint)
    return dataclasses.replace(  # per-env fields may carry a leading env axis (stack_drives): the last one is indexed
        drives, joints=tuple(drives.joints[r] for r in rows), damping=drives.damping[..., rows],
        force_limit=drives.force_limit[..., rows], explicit_damping=drives.explicit_damping[..., rows],
        armature=drives.armature[..., rows], act_joint=act_joint[order], gear=drives.gear[order],
        kp=drives.kp[..., order], kv=drives.kv[..., order], kind=drives.kind[order],
        force_range=drives.force_range[order], ctrl_range=drives.ctrl_range[order],
        kv_on_drive=drives.kv_on_drive[..., order],
        gain=None if drives.gain is None else drives.gain[..., order],
        stiffness=None if drives.stiffness is None else drives.stiffness[..., rows],
        springref=None if drives.springref is None else drives.springref[..., rows],
        moment=None if drives.moment is None else drives.moment[order][:, rows]), order


class SapienBackend(SimBackend):
    """SAPIEN 3 (PhysX 5, CPU) behind the UniSim contract: ``num_envs`` scenes."""

    name = "sapien"
    version = _hooks.__version__
    contract_range = ">=1.0,<2"
    options_cls = SapienOptions
    CAPABILITIES = _hooks.CAPABILITIES
    INIT_TERMS = _hooks.INIT_TERMS
    INTERVAL_TERMS = _hooks.INTERVAL_TERMS
    RESET_TERMS = _hooks.RESET_TERMS
    REFUSED_TERMS = REFUSED_TERMS
    SNAPSHOT_TIER = "state"  # PhysX's contact cache is not part of a snapshot
    MAX_ABS_VALUE = float(np.finfo(np.float32).max)  # PhysX state and inputs are float32
    KIT_RULES = 4  # kit rules 4 (dynamics::many_contacts_hold) passes
    #: Measured on SAPIEN 3.0.3, PhysX CPU, PGS (kit, 2 envs).
    KNOWN_KIT_DEVIATIONS = {
        "contacts::friction_force_within_cone": (
            "PhysX's contact reports carry the normal impulse only (PxContactPairPoint.impulse has no friction "
            "part): a box held by static friction against a 4.5 N push reads a tangential force of 1.2e-6 N; "
            "normal forces, contact state and air time pass their checks"),
        "contacts::pushed_box_torque": (
            "normal impulses only (as friction_force_within_cone): the moments of the normal forces are exact, "
            "friction's are missing; the box pushed at its bottom face reads (4.0e-5, -1.4e-4, 0) N m where the "
            "friction 0.1 m below the COM gives (0, 0.45, 0)"),
        "contacts::yaw_torque_balanced": (
            "normal impulses only: the twist that holds the box against a 0.2 N m yaw torque is friction's, read "
            "as -5.8e-12 N m where -0.2 is due"),
        "contacts::standing_quadruped_torque_balance": (
            "normal impulses only: the feet's friction against the base's sway along x (7.3 N, 0.27 m below the "
            "COM) is missing from the sum, which reads (0, 2.16, 0) N m against a tolerance of 1.16"),
        "capabilities::declared_works[physics_snapshot-restore_reads]": (
            "state tier: a restore writes the packed engine state back (qpos/qvel bit for bit), but PhysX recomputes "
            "the link poses from it by forward kinematics: body positions and velocities differ from those when the "
            "snapshot was taken by one float32 ulp (1.2e-7)"),
        "reference::trajectory[hfield_terrain-qvel]": (
            "contact tier: PhysX contacts are rigid: the ball stops on the height field at impact (vertical velocity "
            "-0.0016 m/s at t = 0.150 s) while MuJoCo's soft contact is still absorbing it (-0.506 m/s), 0.504 over "
            "the 0.5 m/s velocity tolerance; positions stay within the tier"),
    }

    options: SapienOptions

    def __init__(self, scene, num_envs, sim_dt, **options) -> None:
        super().__init__(scene, num_envs, sim_dt, **options)
        path = str(self.scene.model_file)
        self._lite = lite = load_mjcf_or_refuse(path, self.name, accept=ACCEPTED, reasons=ENGINE_LIMITS)
        acting = acting_tendons(path) if lite.constraints.get("fixed_tendon") else []
        if acting:
            raise UnsupportedCapabilityError(self.name, "fixed_tendon", f"{path}: fixed tendons {acting} act on their "
                                             "joints; PhysX's fixed tendons are not mapped onto MuJoCo's here (their "
                                             "limits are springs, not MuJoCo's soft constraints); inert ones are read")
        assets, integrator = read_meshes(path, lite), mujoco_integrator(path)
        if integrator == "rk4":  # the same dynamics, PhysX's own first-order integration: named, measured
            warnings.warn(SapienModellingWarning(
                f"{path}: <option integrator=\"RK4\">: PhysX integrates the model's dynamics with its own "
                "first-order scheme (velocity terms implicit, as implicitfast), not MuJoCo's 4th-order Runge-Kutta; "
                "the difference is PhysX's integration error at this timestep (docs/sapien.md)"), stacklevel=2)
        implicit_kv = IMPLICIT_KV.get(integrator, True)
        if integrator not in IMPLICIT_KV and integrator != "rk4":
            raise UnsupportedCapabilityError(self.name, "integrator", f"{path}: <option integrator={integrator!r}>; "
                                             f"mapped: {sorted(IMPLICIT_KV) + ['rk4']}")
        check_scene(lite, assets, path)
        ellipsoids = [g["name"] or str(k) for k, g in enumerate(lite.geoms) if g["type"] == "ellipsoid"
                      and (g["contype"] or g["conaffinity"]) and lite.contact]
        if ellipsoids:
            warnings.warn(SapienModellingWarning(
                f"{path}: PhysX has no ellipsoid: geoms {ellipsoids} collide as a convex hull within 2.4 % of their "
                "radii (docs/sapien.md)"), stacklevel=2)
        try:  # PhysX averages a contact's two materials, MuJoCo takes the larger friction
            friction = physx_materials(np.asarray([g["friction"][0] for g in lite.geoms]), lite.collision_pairs(),
                                       friction_ranks(lite), [g["name"] for g in lite.geoms], path)
        except ValueError as exc:
            raise UnsupportedCapabilityError(self.name, "geom_friction", f"{path}: {exc}") from None
        _ = self.model_info  # names given by the options are checked before the engine loads
        # a frictionloss joint's damping: explicit, with MuJoCo's dt D as armature (physx_drives' dt)
        #: the joint actuators' ctrl columns (``None``: every actuator drives a joint); site motors apart
        joint_acts = [a for a, act in enumerate(lite.actuators) if act["site"] < 0]  # on joints and fixed tendons
        self._joint_cols = None if len(joint_acts) == len(lite.actuators) else np.array(joint_acts, dtype=np.int64)
        self._drives = physx_drives(lite.joints, [lite.actuators[a] for a in joint_acts], implicit_kv=implicit_kv,
                                    dt=self.sim_dt, tendons=lite.tendons)
        tendons = (joint_tendons(path, lite, self.sim_dt, self.name)
                   if lite.constraints.get("joint_equality") or lite.constraints.get("tendon_equality") else [])
        check_tendons(lite, tendons, path)
        joins = connects(path, lite, self.name) if lite.constraints.get("connect_equality") else []
        check_thread_keys(self._num_envs)
        cfg = self.options.physx
        configure_engine(cfg, lite.gravity)
        self._scenes, self._arts, self._shapes, kinematic = [], [], [], []
        for _ in range(self._num_envs):
            scene_, arts, shapes, mocap = build_env(lite, assets, self._drives, cfg, self.sim_dt, friction, tendons,
                                                    joins, path=path)
            self._scenes.append(scene_)
            self._arts.append(arts)
            self._shapes.append(shapes)
            kinematic.append(mocap)
        self._systems = [s.physx_system for s in self._scenes]
        self._layout = lay = layout_of(lite, self._arts[0])
        self._mocap, self._actor = MocapBodies(kinematic), actors(lite)
        self._links = [[None] + [arts[a].get_links()[k] if a >= 0 else self._posed_link(i, b)
                                 for b, (a, k) in enumerate(lay.body_link[1:], start=1)]
                       for i, arts in enumerate(self._arts)]
        #: per env, per body: its COM in the body frame, m (``body_com_offset`` randomizes it per env)
        com = np.array([[0.0, 0.0, 0.0]] + [_xyz(link.cmass_local_pose.p) for link in self._links[0][1:]])
        self._com = np.repeat(com[None], self._num_envs, axis=0)
        self._com_rows = [com.tolist()] * self._num_envs
        #: per articulation with dofs: ``(a, rows, qpos columns, qvel columns)``, rows (MJCF hinge/slide
        #: joint order) listed in PhysX's active-joint order, so an engine vector maps with one index
        self._dofs = []
        for a in range(len(lay.tops)):
            rows = np.flatnonzero(lay.dof_src[:, 0] == a)
            rows = rows[np.argsort(lay.dof_src[rows, 1])]
            if rows.size:
                self._dofs.append((a, rows, lay.dof_src[rows, 2], lay.dof_src[rows, 3]))
        #: per hinge/slide joint, MuJoCo's ``ref``: the model pose is q = ref in MuJoCo, q = 0 in PhysX
        self._ref = np.array([j["ref"] for j in lite.joints if j["type"] != "free"], dtype=np.float64)
        self._ref_cols = lay.dof_src[:, 2]
        self._has_ref = bool(self._ref.any())
        #: when one articulation holds every hinge/slide joint (a robot): the drives in PhysX's dof
        #: order, so a substep reads, drives and writes each env's dof vector as PhysX lays it out
        #: (drives, ctrl columns, ref, the articulation per env, q and qd buffers (n, J))
        self._set_drives(self._drives)
        self.solver_readback = read_solver_values(self._systems, self._arts, cfg)
        self._all_bodies = np.arange(1, len(lite.body_names))
        self._free_bodies = np.array([f[3] for f in lay.free], dtype=np.int64)
        self._sensor_frames = [lite.frame_offset(s["objtype"], s["obj"]) if s["objtype"] not in ("joint", "subtree")
                               else None for s in lite.sensors]
        accel = [f[0] for f, s in zip(self._sensor_frames, lite.sensors) if s["type"] == "accelerometer"]
        self._accel = bool(accel)
        self._accel_bodies = np.unique([b for b in accel if b > 0]).astype(np.int64)  # the world does not move
        self._cache: tuple[np.ndarray, ...] | None = None
        #: ``get_qpos``/``get_qvel`` of the current state: the core's divergence check reads them after
        #: every step, the caller's reads that follow are copies (quadruped N=1: one read of ~40 µs saved)
        self._reads: dict[str, np.ndarray] = {}
        #: kinematics of the accelerometer bodies before the last substep (pos, quat, lin, ang), or the
        #: engine's reads they are made from (``_link_reads``): see ``_previous``
        self._prev_kin: tuple[np.ndarray, ...] | None = None
        self._prev_reads: list | None = None
        self._fresh = np.ones(self._num_envs, dtype=bool)
        self._time = np.zeros(self._num_envs)
        self._snapshots = SnapshotMemory(self._num_envs)  # each snapshot row's engine state (exact restores)
        self._wrench: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._fields = ModelFields(self, posed(lite), implicit_kv)
        self._site_motors = SiteMotors(lite) if self._joint_cols is not None else None
        #: (link per env, float32 force per env at the COM) applied before every substep: MJCF gravcomp
        #: other than 0 and 1, randomized gravity (``ModelFields.body_forces``)
        self._body_forces: list[tuple[list, np.ndarray]] = []
        self._set_body_forces(self._fields.body_forces())
        self._reset_to_default(np.arange(self._num_envs))

    # ------------------------------------------------------------------ engine access
    @property
    def sapien_scenes(self) -> list[sapien.Scene]:
        """The per-env ``sapien.Scene`` objects (advanced use; writes bypass validation)."""
        return self._scenes

    @property
    def sapien_articulations(self) -> list[list]:
        """Per env, its ``PhysxArticulation`` objects (one per MJCF world child)."""
        return self._arts

    def _load_model_info(self) -> ModelInfo:
        return self._lite.model_info()

    #: The shared Jacobian from the model tables and the link poses (MuJoCo's ``mj_jacSite``).
    _site_jacobian = site_jacobian

    def _posed_link(self, env: int, b: int) -> PosedLink:
        """Body ``b`` of a mocap body's kinematic actor in env ``env``, read as a link."""
        m = self._actor[b]
        return PosedLink(self._mocap, m, env, None if m == b else world_pose(self._lite, b, m))

    def _bind_mocap_pose(self, body_id: int) -> SapienMocapPoseBinding:
        return SapienMocapPoseBinding(self, body_id)

    def _height_field(self, geom_id: int) -> HFieldSampler:
        """The shared sampler of MuJoCo's triangulated surface: the static triangle mesh PhysX collides with is
        built on the same triangles (``_build._add_shape``)."""
        return HFieldSampler.from_lite(self._lite, geom_id)

    # ------------------------------------------------------------------ kinematics
    def _link_reads(self, bodies: np.ndarray) -> list[list[tuple]]:
        """Per env, per body of ``bodies``: its link's ``(pose, COM velocity, angular velocity)`` as PhysX
        reports them (world frame; copies, converted by :meth:`_kinematics` when needed)."""
        return [[(links[b].entity_pose, links[b].linear_velocity, links[b].angular_velocity) for b in bodies]
                for links in self._links]

    def _kinematics(self, bodies: np.ndarray | None = None, reads: list | None = None) -> tuple[np.ndarray, ...]:
        """``(pos, quat_wxyz, lin_vel at origin, ang_vel)``, each ``(n, nbody, 3|4)`` float64, world
        frame, for ``bodies`` (default: all; the other rows stay zero/identity), from the engine or from
        ``reads`` (:meth:`_link_reads` of ``bodies``)."""
        n, nb = self._num_envs, self._com.shape[1]
        bodies = self._all_bodies if bodies is None else bodies
        reads = self._link_reads(bodies) if reads is None else reads
        pos, quat = np.zeros((n, nb, 3)), np.zeros((n, nb, 4))
        lin, ang = np.zeros((n, nb, 3)), np.zeros((n, nb, 3))
        quat[..., 0] = 1.0
        scalar = n * len(bodies) <= _SCALAR_ROWS
        for i, env in enumerate(reads):
            for b, (pose, v, w) in zip(bodies, env):
                pos[i, b], quat[i, b] = pose.p, pose.q
                ang[i, b] = w
                if scalar:  # COM -> origin, as below
                    lin[i, b] = Q.com_to_origin_velocity_scalar(pose.q.tolist(), v.tolist(), w.tolist(),
                                                                self._com_rows[i][b])
                else:
                    lin[i, b] = v
        if not scalar:  # COM -> origin
            lin[:, bodies] = Q.com_to_origin_velocity(quat[:, bodies], lin[:, bodies], ang[:, bodies],
                                                      self._com[:, bodies])
        return pos, quat, lin, ang

    def _previous(self) -> tuple[np.ndarray, ...] | None:
        """:meth:`_kinematics` of the accelerometer bodies before the last substep (the step keeps the
        engine's reads; they are converted here, on first use), ``None`` before any step."""
        if self._prev_reads is not None:
            self._prev_kin, self._prev_reads = self._kinematics(self._accel_bodies, self._prev_reads), None
        return self._prev_kin

    def _stale(self) -> None:
        """The engine state changed: drop every reading cached from it."""
        self._cache = None
        self._reads.clear()

    def _now(self) -> tuple[np.ndarray, ...]:
        if self._cache is None:
            self._cache = self._kinematics()
        return self._cache

    def _joint_state(self) -> tuple[np.ndarray, np.ndarray]:
        """Hinge/slide ``(q, qd)``, ``(n, J)`` in MJCF joint order."""
        n, J = self._num_envs, len(self._layout.dof_src)
        q, qd = np.zeros((n, J)), np.zeros((n, J))
        for i, arts in enumerate(self._arts):
            for a, rows, _, _ in self._dofs:
                q[i, rows], qd[i, rows] = arts[a].get_qpos(), arts[a].get_qvel()
        if self._has_ref:
            q += self._ref
        return q, qd

    # ------------------------------------------------------------------ primitives
    def _step(self, ctrl: np.ndarray, nsteps: int) -> None:
        write_efforts, every, systems = self._efforts_writer(ctrl), self._drives.state_dependent, self._systems
        self._reads.clear()  # the state moves on (nothing in the loop reads through them)
        for k in range(nsteps):
            if every or k == 0:  # motors alone: the efforts depend on ctrl only
                write_efforts()
            if self._wrench:
                self._apply_wrenches()
            if self._body_forces:
                self._apply_body_forces()
            if self._site_motors is not None:
                self._site_motors.apply(ctrl, self._now(), self._links)
            if self._accel and k == nsteps - 1:  # the accelerometer reads the velocity change over the last substep
                if self._cache is None:  # converted only when the accelerometer is read
                    self._prev_reads = self._link_reads(self._accel_bodies)
                else:
                    self._prev_kin, self._prev_reads = self._cache, None
            if self._mocap.pending:
                self._mocap.substep(k, nsteps)
            for system in systems:
                system.step()
            self._cache = None  # the kinematics moved on (_apply_wrenches reads them before each substep)
        self._mocap.clear()
        self._time += nsteps * self.sim_dt
        self._fresh[:] = False

    def _efforts_writer(self, ctrl: np.ndarray):
        """``fn()`` writing the explicit joint efforts for ``ctrl`` at the current state into every env
        (``PhysxDrives.servo``: the ctrl terms are computed once, here)."""
        if self._joint_cols is not None:  # the joint actuators' columns (site motors: SiteMotors)
            ctrl = ctrl[:, self._joint_cols]
        if self._engine_order is not None:  # one articulation holds every joint: the law on PhysX's dof vectors
            drives, order, ref, arts, q, qd = self._engine_order
            has_ref, f32, f64 = self._has_ref, np.float32, np.float64
            if len(arts) == 1 and drives.state_dependent and drives.whole_vectors:  # one env: its (J,) vectors
                art, servo_one = arts[0], drives.servo(ctrl[0, order])

                def write_one() -> None:
                    q0 = art.get_qpos().astype(f64)
                    art.set_qf(servo_one(q0 + ref if has_ref else q0, art.get_qvel().astype(f64)).astype(f32))

                return write_one
            servo = drives.servo(ctrl[:, order])

            def write() -> None:
                if drives.state_dependent:
                    for i, art in enumerate(arts):
                        q[i], qd[i] = art.get_qpos(), art.get_qvel()
                efforts = servo(q + ref if has_ref else q, qd).astype(f32)
                for i, art in enumerate(arts):
                    art.set_qf(efforts[i])

            return write
        drives, servo = self._drives, self._drives.servo(ctrl)
        zeros = np.zeros((self._num_envs, len(self._layout.dof_src)))

        def write_mjcf_order() -> None:
            q, qd = self._joint_state() if drives.state_dependent else (zeros, zeros)
            efforts = servo(q, qd).astype(np.float32)
            for a, rows, _, _ in self._dofs:
                qf = efforts[:, rows]
                for i, arts in enumerate(self._arts):
                    arts[a].set_qf(qf[i])

        return write_mjcf_order

    def _set_state(self, env_ids: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> None:
        self._check_open()
        lay = self._layout
        for k, i in enumerate(env_ids):
            arts = self._arts[i]
            for a, qa, da, body in lay.free:
                p, q = qpos[k, qa:qa + 3], Q.quat_normalize(qpos[k, qa + 3:qa + 7])
                w = Q.quat_apply(q, qvel[k, da + 3:da + 6])
                v = qvel[k, da:da + 3] + Q.cross(w, Q.quat_apply(q, self._com[i, body]))  # origin -> COM
                arts[a].set_root_pose(sapien.Pose(p.astype(np.float32), q.astype(np.float32)))
                arts[a].set_root_linear_velocity(v.astype(np.float32))
                arts[a].set_root_angular_velocity(w.astype(np.float32))
            for a, rows, qcols, vcols in self._dofs:
                arts[a].set_qpos((qpos[k, qcols] - self._ref[rows]).astype(np.float32))
                arts[a].set_qvel(qvel[k, vcols].astype(np.float32))
        self._fresh[env_ids] = True
        self._stale()

    def get_qpos(self) -> np.ndarray:
        if not self._reads:
            self._read_state()
        return self._reads["qpos"].copy()

    def get_qvel(self) -> np.ndarray:
        if not self._reads:
            self._read_state()
        return self._reads["qvel"].copy()

    def _read_state(self) -> None:
        """``_reads["qpos"]``/``["qvel"]`` of the current state, in one pass over the engine: hinge/slide
        joints from ``get_qpos``/``get_qvel`` (plus MuJoCo's ``ref``), free roots from their link's pose
        and velocities (COM -> origin velocity, world -> body angular velocity)."""
        lay, n = self._layout, self._num_envs
        qpos, qvel = np.zeros((n, self.nq)), np.zeros((n, self.nv))
        for i, arts in enumerate(self._arts):
            for a, _, qcols, vcols in self._dofs:
                art = arts[a]
                qpos[i, qcols], qvel[i, vcols] = art.get_qpos(), art.get_qvel()
        if self._has_ref:
            qpos[:, self._ref_cols] += self._ref
        if lay.free and n * len(lay.free) <= _SCALAR_ROWS and self._cache is None:  # Python floats
            for i, env in enumerate(self._link_reads(self._free_bodies)):
                com = self._com_rows[i]
                for (_, qa, da, body), (pose, v, w) in zip(lay.free, env):
                    q, w = pose.q.tolist(), w.tolist()
                    qpos[i, qa:qa + 3], qpos[i, qa + 3:qa + 7] = pose.p, q
                    qvel[i, da:da + 3] = Q.com_to_origin_velocity_scalar(q, v.tolist(), w, com[body])
                    qvel[i, da + 3:da + 6] = Q.quat_apply_scalar(q[0], -q[1], -q[2], -q[3], *w)
        elif lay.free:
            pos, quat, lin, ang = self._cache or self._kinematics(self._free_bodies)
            for _, qa, da, body in lay.free:
                qpos[:, qa:qa + 3], qpos[:, qa + 3:qa + 7] = pos[:, body], quat[:, body]
                qvel[:, da:da + 3] = lin[:, body]
                qvel[:, da + 3:da + 6] = Q.quat_apply_inverse(quat[:, body], ang[:, body])
        self._reads["qpos"] = np.ascontiguousarray(qpos, dtype=self.np_dtype)
        self._reads["qvel"] = np.ascontiguousarray(qvel, dtype=self.np_dtype)

    def _cols(self, k: int, body_ids: np.ndarray) -> np.ndarray:
        """Column ``k`` of the kinematics (0 pos, 1 quat, 2 origin velocity, 3 angular velocity) for ``body_ids``."""
        return np.ascontiguousarray(self._now()[k][:, body_ids], dtype=self.np_dtype)

    def _body_pos_w(self, body_ids):
        return self._cols(0, body_ids)

    def _body_quat_w(self, body_ids):
        return self._cols(1, body_ids)

    def _body_lin_vel_w(self, body_ids):
        return self._cols(2, body_ids)

    def _body_ang_vel_w(self, body_ids):
        return self._cols(3, body_ids)

    # ------------------------------------------------------------------ sensors
    def _sensor_point(self, kin, index: int) -> tuple[np.ndarray, ...]:
        """World ``(pos, quat, lin_vel, ang_vel)`` of sensor ``index``'s frame (its site, geom, body
        inertial frame or body frame: ``LiteModel.frame_offset``) from body kinematics ``kin``."""
        return self._frame_at(kin, self._sensor_frames[index])

    @staticmethod
    def _frame_at(kin, offset: tuple) -> tuple[np.ndarray, ...]:
        """World ``(pos, quat, lin_vel, ang_vel)`` of the frame ``offset = (body, pos, quat)`` in its body."""
        body, off_pos, off_quat = offset
        p, q, v, w = (k[:, body] for k in kin)
        arm = Q.quat_apply(q, np.broadcast_to(off_pos, p.shape))
        return p + arm, Q.quat_mul(q, np.broadcast_to(off_quat, q.shape)), v + Q.cross(w, arm), w

    def _read_sensor(self, index: int) -> np.ndarray:
        kind, info = self._lite.sensors[index]["type"], self.model_info
        if kind in ("jointpos", "jointvel"):
            obj = self._lite.sensors[index]["obj"]
            col = info.joint_qposadr[obj] if kind == "jointpos" else info.joint_dofadr[obj]
            return (self.get_qpos() if kind == "jointpos" else self.get_qvel())[:, col, None]
        if kind in SUBTREE_SENSORS:
            return subtree_sensor(self, kind, self._lite.sensors[index]["obj"], self._lite.body_iquat).astype(
                self.np_dtype)
        kin = self._now()
        point = self._sensor_point(kin, index)
        if kind == "accelerometer":  # proper acceleration of the point, in its frame
            value = Q.quat_apply_inverse(point[1], self._point_acceleration(kin, index, point[2])
                                         - self._fields.gravity())
        elif kind in ("gyro", "velocimeter"):  # body-frame angular / linear velocity of the point
            value = Q.quat_apply_inverse(point[1], point[3] if kind == "gyro" else point[2])
        elif "reftype" in self._lite.sensors[index]:  # measured in another frame (site, body, xbody or geom)
            s = self._lite.sensors[index]
            ref = self._frame_at(kin, self._lite.frame_offset(s["reftype"], s["ref"]))
            value = in_reference_frame(kind, point[0], point[1], ref[0], ref[1])
        elif kind in FRAME_AXES:
            value = Q.quat_apply(point[1], np.eye(3)[FRAME_AXES[kind]])
        else:
            value = point[("framepos", "framequat", "framelinvel", "frameangvel").index(kind)]
        return np.ascontiguousarray(value, dtype=self.np_dtype)

    def _point_acceleration(self, kin, index: int, vel: np.ndarray) -> np.ndarray:
        """World acceleration of sensor ``index``'s point: its velocity change over the last substep,
        or over a probe substep for envs written since their last step."""
        acc = np.zeros_like(vel)
        prev = self._previous()
        if prev is not None:  # the point's velocity then, at its position then (centripetal part kept)
            acc = (vel - self._sensor_point(prev, index)[2]) / self.sim_dt
        if self._fresh.any():
            ahead = self._sensor_point(self._probe_step(), index)[2]
            acc[self._fresh] = ((ahead - vel) / self.sim_dt)[self._fresh]
        return acc

    def _probe_step(self) -> tuple[np.ndarray, ...]:
        """Body kinematics one substep ahead (current efforts and gravity compensation, no wrench) for the
        envs written since their last step (the others keep their current kinematics); those systems are
        restored."""
        fresh = np.flatnonzero(self._fresh)
        saved = [self._systems[i].pack() for i in fresh]
        for i in fresh:
            for links, force in self._body_forces:
                links[i].add_force_torque(force[i], _ZERO3)
            self._systems[i].step()
        out = self._kinematics()
        for i, blob in zip(fresh, saved):
            self._systems[i].unpack(blob)
        self._stale()
        return out

    # ------------------------------------------------------------------ contacts
    def _bind_contact_forces(self, body_ids: np.ndarray, against_ids: np.ndarray | None):
        """Net contact forces from PhysX's contact reports of the last substep: per contact point, its
        impulse (on the pair's first shape's body) over ``sim_dt``, at its world position (a binding with
        torques sums each point's moment about the world origin, ``p x impulse / dt``, not the pair's
        summed impulse at one point). Each shape is its geom's MJCF body, as MuJoCo's ``geom_bodyid``
        (a world-welded body's geoms on the static actor included), so ``against`` filters by body."""
        sums = ContactSums(body_ids, against_ids, self._com.shape[1])
        lite = self._lite
        shape_body = [{id(shape): lite.geoms[g]["body"] for g, shape in shapes.items()} for shapes in self._shapes]

        def fill(out: np.ndarray) -> None:
            env, first, second, impulse, position = [], [], [], [], []
            for i, system in enumerate(self._systems):
                body_of = shape_body[i]
                for contact in system.get_contacts():
                    points = contact.points
                    if points:
                        a, b = contact.shapes
                        k = len(points)
                        env += [i] * k
                        first += [body_of[id(a)]] * k
                        second += [body_of[id(b)]] * k
                        impulse += [p.impulse for p in points]
                        position += [p.position for p in points]
            if env:
                sums.add(out, np.array(env), np.array(second), np.array(first),
                         np.array(impulse, dtype=np.float64) / self.sim_dt, np.array(position, dtype=np.float64))

        return fill

    # ------------------------------------------------------------------ forces
    def _apply_body_force(self, body_ids, force, torque) -> None:
        for k, b in enumerate(body_ids):
            if b > 0:
                tau = np.zeros_like(force[:, k]) if torque is None else torque[:, k]
                self._wrench[int(b)] = (force[:, k].astype(np.float64), tau.astype(np.float64))

    def _clear_body_forces(self) -> None:
        self._wrench.clear()

    def _apply_wrenches(self) -> None:
        """Staged world wrenches at body origins, for the next substep (PhysX clears them after it)."""
        pos = self._now()[0]
        for b, (force, torque) in self._wrench.items():
            for i, links in enumerate(self._links):
                links[b].add_force_at_point(force[i].astype(np.float32), pos[i, b].astype(np.float32))
                links[b].add_force_torque(_ZERO3, torque[i].astype(np.float32))

    def _apply_body_forces(self) -> None:
        """The per-substep forces at the COM (``ModelFields.body_forces``: MuJoCo's gravity compensation
        ``-gravcomp m g`` for gravcomp other than 0 and 1, randomized gravity's difference), for the next
        substep (``add_force_torque`` acts at the COM; PhysX clears it after the step)."""
        for links, force in self._body_forces:
            for link, f in zip(links, force):
                link.add_force_torque(f, _ZERO3)

    def _set_body_forces(self, forces: list[tuple[int, np.ndarray]]) -> None:
        self._body_forces = [([links[b] for links in self._links], f) for b, f in forces]

    def _set_com(self, env: int, body: int, com: np.ndarray) -> None:
        """Env ``env``'s body ``body`` has its COM at ``com`` (body frame, m): the origin/COM velocity conversions."""
        self._com[env, body] = com
        self._com_rows[env] = self._com[env].tolist()
        self._stale()

    def _set_drives(self, drives) -> None:
        """The drives every substep's servo law runs (one env's, or stacked per env after a randomization);
        when one articulation holds every hinge/slide joint (a robot), also in PhysX's dof order, so a
        substep reads, drives and writes each env's dof vector as PhysX lays it out (drives, ctrl columns,
        ref, the articulation per env, q and qd buffers (n, J))."""
        self._drives, self._engine_order = drives, None
        if len(self._dofs) == 1 and len(self._dofs[0][1]) == len(drives.joints):
            a, rows = self._dofs[0][:2]
            buffers = np.zeros((self._num_envs, len(rows))), np.zeros((self._num_envs, len(rows)))
            self._engine_order = (*_engine_ordered(drives, rows), self._ref[rows],
                                  [env[a] for env in self._arts], *buffers)

    # ------------------------------------------------------------------ randomization
    def _check_model_values(self, term: str, env_ids: np.ndarray, target_ids: np.ndarray | None,
                            values: np.ndarray) -> None:
        self._fields.check(term, env_ids, target_ids, values)

    def _write_model_field(self, term: str, env_ids: np.ndarray, target_ids: np.ndarray | None,
                           values: np.ndarray) -> None:
        self._check_open()
        self._fields.write(term, env_ids, target_ids, values)

    def _read_model_field(self, term: str) -> np.ndarray:
        return self._fields.read(term).astype(self.np_dtype)

    # ------------------------------------------------------------------ snapshots
    def _get_physics_state(self) -> np.ndarray:
        """Rows ``[time, qpos, qvel]`` (float64 copies of the float32 engine state). Each row's
        engine state (``PhysxCpuSystem.pack``) is remembered, so restoring a row taken here writes
        it back bit for bit (the free-root velocity conversion does not round-trip in float32)."""
        rows = np.concatenate((self._time[:, None], self.get_qpos().astype(np.float64),
                               self.get_qvel().astype(np.float64)), axis=1)
        prev = self._previous()
        self._snapshots.remember(rows, ((system.pack(), bool(self._fresh[i]),
                                         None if prev is None else tuple(k[i].copy() for k in prev))
                                        for i, system in enumerate(self._systems)))
        return rows

    def _set_physics_state(self, state: np.ndarray) -> None:
        self._mocap.clear()  # the engine's poses are the snapshot's
        self._set_state(np.arange(self._num_envs), state[:, 1:1 + self.nq], state[:, 1 + self.nq:])
        self._time = state[:, 0].copy()
        if self._previous() is None:
            self._prev_kin = tuple(np.zeros_like(k) for k in self._now())
        for i, system in enumerate(self._systems):
            known = self._snapshots.recall(state[i])
            if known is not None:
                system.unpack(known[0])
                self._fresh[i] = known[1]
                if known[2] is not None:
                    for table, row in zip(self._prev_kin, known[2]):
                        table[i] = row
        self._stale()

    # ------------------------------------------------------------------ lifecycle
    def _close(self) -> None:
        self._links = self._arts = self._systems = self._scenes = []  # type: ignore[assignment]
        self._engine_order = None
