"""Legged velocity tracking (Isaac Lab / legged_gym style) for any robot, written once against the contract."""

from __future__ import annotations

import attrs
import numpy as np

from unisim_core import (
    Capability,
    InitRandomizationPlan,
    IntervalRandomizationPlan,
    InvalidInputError,
    RandomizationOp,
    ResetRandomizationPayload,
    SceneCfg,
    SimBackend,
)
from unisim_core.contract.quat import quat_apply, quat_apply_inverse, quat_from_yaw, quat_mul
from unisim_core.tools.actuators import ActuatorModel, motor_actuator_names

from ._observations import ObservationManager, ObsTermCfg
from ._robot import QUADRUPED, RobotCfg, build_scene
from ._task import StepResult, Task
from ._terrain import GeneratedTerrain, TerrainCurriculum, TerrainGeneratorCfg, generate_terrain

__all__ = ["VelocityTrackingCfg", "VelocityTrackingTask", "DEFAULT_REWARD_WEIGHTS", "OBSERVATION_LAYOUT",
           "DEFAULT_OBSERVATIONS", "OBSERVATION_TERMS"]

#: Reward weights. Every term but ``termination`` is a rate (per second of control) and is
#: multiplied by the control period; ``termination`` is paid once per terminated episode.
DEFAULT_REWARD_WEIGHTS: dict[str, float] = {
    "track_lin_vel_xy": 1.0,  # exp(-|cmd_xy - v_xy|^2 / sigma^2), body frame
    "track_ang_vel_z": 0.5,  # exp(-(cmd_wz - w_z)^2 / sigma^2)
    "lin_vel_z": -2.0,  # v_z^2, (m/s)^2
    "ang_vel_xy": -0.05,  # |w_xy|^2, (rad/s)^2
    "orientation": -1.0,  # |g_xy|^2 of the unit gravity in the base frame
    "torques": -1e-4,  # |tau|^2 of the joint torques (the actuator model's, else the PD servos'), (N m)^2
    "dof_acc": -2.5e-7,  # |dqd/dt|^2, (rad/s^2)^2
    "action_rate": -0.01,  # |a_t - a_{t-1}|^2
    "feet_air_time": 0.5,  # sum over feet touching down of (air time - threshold s), when commanded to move
    "termination": -2.0,  # per terminated episode (base contact, tilt, off the terrain), not a rate
}

#: What each observation term holds (``na`` = actuated joints, ``P`` = height-scan points).
OBSERVATION_TERMS = {
    "base_lin_vel_b": "base linear velocity in the base frame, m/s (3)",
    "base_ang_vel_b": "base angular velocity in the base frame, rad/s (3)",
    "projected_gravity": "unit gravity in the base frame (3)",
    "command": "command (vx, vy m/s, wz rad/s) (3)",
    "dof_pos_rel": "actuated joint positions minus the default pose, rad (na)",
    "dof_vel": "actuated joint velocities, rad/s (na)",
    "last_action": "the previous action (na)",
    "height_scan": "base height above the terrain at each scan point minus 0.5, m (P; needs HEIGHT_SCAN)",
}

#: The shipped policy's observation: the terms in this order, no noise, no delay (48 values for 12 joints).
DEFAULT_OBSERVATIONS = tuple(ObsTermCfg(name=n) for n in ("base_lin_vel_b", "base_ang_vel_b", "projected_gravity",
                                                           "command", "dof_pos_rel", "dof_vel", "last_action"))
#: Observation columns of the default layout for the 12-joint quadruped, in order.
OBSERVATION_LAYOUT = (("base_lin_vel_b", 3), ("base_ang_vel_b", 3), ("projected_gravity", 3), ("command", 3),
                      ("dof_pos_rel", 12), ("dof_vel", 12), ("last_action", 12))


def _pair(value) -> tuple[float, float]:
    return tuple(float(v) for v in value)


def _range(inst, attribute, value) -> None:
    lo, hi = value if len(value) == 2 else (np.nan, np.nan)
    if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi):
        raise ValueError(f"VelocityTrackingCfg.{attribute.name}: expected a finite (low, high) with low <= high, "
                         f"got {value!r}")


def _positive(inst, attribute, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value) or value <= 0:
        raise ValueError(f"VelocityTrackingCfg.{attribute.name}: expected a positive number, got {value!r}")


def _positive_int(inst, attribute, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"VelocityTrackingCfg.{attribute.name}: expected an int >= 1, got {value!r}")


def _non_negative(inst, attribute, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value) or value < 0:
        raise ValueError(f"VelocityTrackingCfg.{attribute.name}: expected a number >= 0, got {value!r}")


def _terms(inst, attribute, value) -> None:
    if not value or not all(isinstance(t, ObsTermCfg) for t in value):
        raise ValueError(f"VelocityTrackingCfg.{attribute.name}: expected a non-empty tuple of ObsTermCfg, "
                         f"got {value!r}")
    unknown = [t.name for t in value if t.name not in OBSERVATION_TERMS]
    if unknown:
        raise ValueError(f"VelocityTrackingCfg.{attribute.name}: unknown terms {unknown}; known: "
                         f"{list(OBSERVATION_TERMS)}")


@attrs.frozen(kw_only=True)
class VelocityTrackingCfg:
    """Configuration of :class:`VelocityTrackingTask` (SI units; ranges are ``(low, high)``).

    - ``robot``: the :class:`RobotCfg` (default: the shipped quadruped, position servos).
    - Control: ``sim_dt`` s x ``decimation`` substeps (default 0.005 s x 4 = 50 Hz); the action is
      a joint-target offset, ``target = default pose + robot.action_scale * action`` (rad), sent to
      the model's position servos (clipped to their ctrl range) or, with ``robot.actuators``, to the
      actuator model that turns it into motor torques every substep (clipped to the joint range).
    - ``observations``: the terms in order, each with its scale, noise, delay and history
      (:class:`ObsTermCfg`; names in ``OBSERVATION_TERMS``); ``height_scan_size``/``_resolution``:
      the scan grid (m) around the base, yaw-aligned.
    - Commands ``(vx, vy, wz)`` in the base frame, drawn uniformly at reset and every ``command_resample_s``.
    - Rewards: ``reward_weights`` over ``DEFAULT_REWARD_WEIGHTS``' terms; the tracking terms are
      ``exp(-error^2 / tracking_sigma^2)``; ``feet_air_time`` pays ``air time - feet_air_time_threshold``
      (s) per foot touching down.
    - Reset: the default pose (on the terrain: at the centre of the env's sub-terrain), a uniform
      yaw, joint offsets within ``joint_pos_noise``, root velocities within ``root_vel_noise``.
    - ``terrain``: a generated height-field terrain (:class:`TerrainGeneratorCfg`) with its curriculum
      (``terrain_curriculum``), or ``None`` for the robot's flat floor.
    - Terminations: base contact, a tilt beyond ``max_tilt`` rad, leaving the terrain. Base contact
      and the feet's touch-downs come from the backend's contact sensing where it declares
      ``contact_forces`` and ``contact_sensing`` is on (a force above 1 N), else from geometry and
      the terrain's heights (the same on every engine, and cheaper): the base box within
      ``base_contact_margin`` m of the ground (a robot without ``base_geom``: its base origin below
      ``robot.min_base_height``), a foot centre within 5 mm of it.
    - Randomization (``randomize``; only terms the backend declares): foot and ground friction
      (sliding, torsional and rolling together) scaled by ``friction_scale``, ``base_mass_add`` kg on
      the base (per episode through ``set_state``, else once through ``apply_init_randomization``),
      horizontal pushes every ``push_interval_s`` (``push_robots`` with ``push_force`` N over one
      control step, else an interval root velocity
      delta of the same impulse).
    """

    robot: RobotCfg = QUADRUPED
    observations: tuple[ObsTermCfg, ...] = attrs.field(default=DEFAULT_OBSERVATIONS, converter=tuple,
                                                       validator=_terms)
    terrain: TerrainGeneratorCfg | None = None
    terrain_curriculum: bool = True
    height_scan_size: tuple[float, float] = attrs.field(default=(1.6, 1.0), converter=_pair)
    height_scan_resolution: float = attrs.field(default=0.1, validator=_positive)
    sim_dt: float = attrs.field(default=0.005, validator=_positive)
    decimation: int = attrs.field(default=4, validator=_positive_int)
    episode_length_s: float = attrs.field(default=10.0, validator=_positive)
    lin_vel_x: tuple[float, float] = attrs.field(default=(-0.8, 0.8), converter=_pair, validator=_range)
    lin_vel_y: tuple[float, float] = attrs.field(default=(-0.4, 0.4), converter=_pair, validator=_range)
    ang_vel_z: tuple[float, float] = attrs.field(default=(-1.0, 1.0), converter=_pair, validator=_range)
    command_resample_s: float = attrs.field(default=5.0, validator=_positive)
    tracking_sigma: float = attrs.field(default=0.5, validator=_positive)
    feet_air_time_threshold: float = attrs.field(default=0.5, validator=_non_negative)
    joint_pos_noise: float = attrs.field(default=0.1, validator=_non_negative)
    root_vel_noise: float = attrs.field(default=0.2, validator=_non_negative)
    base_contact_margin: float = attrs.field(default=0.01, validator=_non_negative)
    contact_sensing: bool = False
    max_tilt: float = attrs.field(default=1.0, validator=_positive)
    randomize: bool = True
    friction_scale: tuple[float, float] = attrs.field(default=(0.6, 1.25), converter=_pair, validator=_range)
    base_mass_add: tuple[float, float] = attrs.field(default=(-1.0, 1.5), converter=_pair, validator=_range)
    push_interval_s: float = attrs.field(default=8.0, validator=_positive)
    push_force: float = attrs.field(default=250.0, validator=_non_negative)
    reward_weights: dict[str, float] = attrs.field(factory=lambda: dict(DEFAULT_REWARD_WEIGHTS))

    def __attrs_post_init__(self) -> None:
        unknown = sorted(set(self.reward_weights) - set(DEFAULT_REWARD_WEIGHTS))
        if unknown:
            raise ValueError(f"VelocityTrackingCfg.reward_weights: unknown terms {unknown}; "
                             f"known: {sorted(DEFAULT_REWARD_WEIGHTS)}")
        if not isinstance(self.robot, RobotCfg):
            raise ValueError(f"VelocityTrackingCfg.robot: expected a RobotCfg, got {type(self.robot).__name__}")


class VelocityTrackingTask(Task):
    """Track a base-frame velocity command ``(vx, vy, wz)`` with any legged :class:`RobotCfg`."""

    def __init__(self, cfg: VelocityTrackingCfg | None = None) -> None:
        self.cfg = cfg if cfg is not None else VelocityTrackingCfg()
        self.robot = self.cfg.robot
        self.sim_dt = self.cfg.sim_dt
        self.decimation = int(self.cfg.decimation)
        self.episode_length_s = self.cfg.episode_length_s
        self.dt = self.sim_dt * self.decimation
        self.weights = {**DEFAULT_REWARD_WEIGHTS, **self.cfg.reward_weights}
        self.dr_terms: tuple[str, ...] = ()
        #: The generated terrain (``None`` on flat ground).
        self.terrain: GeneratedTerrain | None = generate_terrain(self.cfg.terrain) if self.cfg.terrain else None
        self.actuators: ActuatorModel | None = None
        self._scene: SceneCfg | None = None

    @property
    def scene(self) -> SceneCfg:
        if self._scene is None:
            self._scene = SceneCfg(build_scene(self.robot, self.terrain), default_keyframe=self.robot.keyframe)
        return self._scene

    # ------------------------------------------------------------------ cold path
    def bind(self, backend: SimBackend, rng: np.random.Generator) -> int:
        cfg, robot, b, n = self.cfg, self.robot, backend, backend.num_envs
        self.b, self.rng, self.n = b, rng, n
        self.home_qpos = b.get_default_qpos().astype(np.float64)
        names = b.get_actuator_joint_names()
        if robot.joint_names and tuple(names) != robot.joint_names:
            raise InvalidInputError(f"robot.joint_names: the model's actuators drive {list(names)}, expected "
                                    f"{list(robot.joint_names)} in this order")
        motors = motor_actuator_names(b)
        if robot.actuators:
            self.actuators = ActuatorModel(b, robot.actuators)  # refuses servos by name
        elif motors:
            raise InvalidInputError(
                f"robot.actuators: actuators {list(motors)} of {robot.model_file} take torques (motors), and "
                f"this task sends joint targets; give RobotCfg an actuator model (unisim_core.tools.actuators: "
                f"IdealPDCfg, DCMotorCfg) to turn targets into torques")
        self.act_cols = b.get_joint_dof_pos_indices(names)  # get_dof_pos column of each actuator's joint
        self.act_vel_cols = b.get_joint_dof_vel_indices(names)  # get_dof_vel column of each actuator's joint
        self.act_qpos_cols = b.get_joint_state_qpos_indices(names)  # full-qpos column of each actuator's joint
        self.act_qvel_cols = b.get_joint_state_qvel_indices(names)  # full-qvel column of each actuator's joint
        root = b.get_root_state_layout(b.model_info.body_names[b.base_body_id])
        self.root_q, self.root_v = root.qpos_start, root.qvel_start
        self.joint_range = b.get_joint_range().astype(np.float64)[self.act_cols]
        self.default_joint_pos = b.get_default_dof_pos().astype(np.float64)[self.act_cols]
        if self.actuators is None:
            self.ctrl_range = b.get_actuator_ctrl_range().astype(np.float64)
            kp, kd = b.get_actuator_gains()
            self.kp, self.kd = kp.astype(np.float64), kd.astype(np.float64)
        else:
            self.ctrl_range = self.joint_range
        self.base_half = b.get_geom_size(robot.base_geom).astype(np.float64) if robot.base_geom else None
        self.foot_ids = b.get_body_ids(list(robot.foot_bodies))
        self.foot_offset = np.asarray(robot.foot_offset, dtype=np.float64)
        na = b.num_actuators
        self.commands = np.zeros((n, 3))
        self.last_action = np.zeros((n, na))
        self.last_dof_vel = np.zeros((n, na))
        self.air_time = np.zeros((n, len(self.foot_ids)))
        self.last_contact = np.ones((n, len(self.foot_ids)), dtype=bool)
        self.feet_sensor = self.base_sensor = None
        if cfg.contact_sensing and Capability.CONTACT_FORCES in b.capabilities:
            self.feet_sensor = b.bind_contact_forces(list(robot.foot_bodies), track_air_time=True)
            self.base_sensor = b.bind_contact_forces([b.model_info.body_names[b.base_body_id]])
        self.episode_steps = np.zeros(n, dtype=np.int64)
        self.spawn_xy = np.zeros((n, 2))
        self._resample_every = max(1, round(cfg.command_resample_s / self.dt))
        self._push_every = max(1, round(cfg.push_interval_s / self.dt))
        self.curriculum = None
        if self.terrain is not None and cfg.terrain_curriculum:
            self.curriculum = TerrainCurriculum(self.terrain, n, rng, max_init_level=0 if cfg.terrain.curriculum
                                                else None)
        self.scanner = None
        widths = {"base_lin_vel_b": 3, "base_ang_vel_b": 3, "projected_gravity": 3, "command": 3,
                  "dof_pos_rel": na, "dof_vel": na, "last_action": na}
        if any(t.name == "height_scan" for t in cfg.observations):
            if self.terrain is None:
                raise InvalidInputError("observations: 'height_scan' reads a generated terrain; set "
                                        "VelocityTrackingCfg.terrain")
            sx, sy = cfg.height_scan_size
            r = cfg.height_scan_resolution
            gx, gy = np.meshgrid(np.arange(-sx / 2, sx / 2 + 1e-9, r), np.arange(-sy / 2, sy / 2 + 1e-9, r))
            self.scanner = b.create_hfield_scanner(hfield_geom_id=b.get_geom_id("terrain"),
                                                   offsets=np.stack([gx.ravel(), gy.ravel()], axis=1),
                                                   frame_body_id=b.base_body_id, alignment="yaw", output="distance")
            widths["height_scan"] = self.scanner.num_points
        self.obs = ObservationManager(cfg.observations, widths, n)
        self._fresh = self._state_fresh = False
        self._bind_randomization()
        return self.obs.size

    def _bind_randomization(self) -> None:
        """Pick the randomization route per term from what the backend declares (none: term off)."""
        b, cfg = self.b, self.cfg
        ground = "terrain" if self.terrain is not None else (self.robot.floor or "floor")
        self.friction_targets = np.array([b.get_geom_id(g) for g in (ground, *self.robot.foot_geoms)])
        self.base_id = np.array([b.base_body_id])
        dr = b.get_dr_capabilities()
        self._reset_terms = tuple(t for t in ("geom_friction", "body_mass") if cfg.randomize and t in dr.reset_terms)
        init_terms = tuple(t for t in ("geom_friction", "body_mass")
                           if cfg.randomize and t not in self._reset_terms and t in dr.init_terms)
        if Capability.PUSH in b.capabilities:
            self._push = "push_robots"
        elif "root_lin_vel_delta" in dr.interval_terms:
            self._push = "root_lin_vel_delta"
        else:
            self._push = None
        if not cfg.randomize or cfg.push_force <= 0:
            self._push = None
        if init_terms:
            b.apply_init_randomization(InitRandomizationPlan(self._model_ops(np.arange(self.n), init_terms)))
        #: Randomization actually applied on this backend (``term:route``), for reports.
        self.dr_terms = (tuple(f"{t}:reset" for t in self._reset_terms) + tuple(f"{t}:init" for t in init_terms)
                         + ((f"push:{self._push}",) if self._push else ()))

    def _model_ops(self, env_ids: np.ndarray, terms: tuple[str, ...]) -> list[RandomizationOp]:
        cfg, k, ops = self.cfg, len(env_ids), []
        if "geom_friction" in terms:
            # one scale per env for the whole triple (sliding, torsional, rolling), as a material's friction:
            # Genesis scales the three by one ratio and refuses a sliding-only scale where condim uses the others
            scale = self.rng.uniform(*cfg.friction_scale, size=(k, 1, 1))
            values = np.broadcast_to(scale, (k, len(self.friction_targets), 3)).copy()
            ops.append(RandomizationOp(term="geom_friction", values=values, env_ids=env_ids,
                                       target_ids=self.friction_targets, operation="scale"))
        if "body_mass" in terms:
            ops.append(RandomizationOp(term="body_mass", values=self.rng.uniform(*cfg.base_mass_add, size=(k, 1)),
                                       env_ids=env_ids, target_ids=self.base_id, operation="add"))
        return ops

    def reseed(self, rng: np.random.Generator) -> None:
        self.rng = rng
        if self.curriculum is not None:
            self.curriculum.rng = rng

    def action_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        scale = self.robot.action_scale
        low, high = self.ctrl_range[:, 0], self.ctrl_range[:, 1]
        return (low - self.default_joint_pos) / scale, (high - self.default_joint_pos) / scale

    def observation_bounds(self, obs_dim: int) -> tuple[np.ndarray, np.ndarray]:
        """Unit gravity in [-1, 1], the command in its ranges, the last action in the action box
        (for terms without noise, scale 1 and history 1); everything else unbounded."""
        cfg = self.cfg
        low, high = np.full(obs_dim, -np.inf), np.full(obs_dim, np.inf)
        known = {"projected_gravity": (-np.ones(3), np.ones(3)),
                 "command": (np.array([r[0] for r in (cfg.lin_vel_x, cfg.lin_vel_y, cfg.ang_vel_z)]),
                             np.array([r[1] for r in (cfg.lin_vel_x, cfg.lin_vel_y, cfg.ang_vel_z)])),
                 "last_action": self.action_bounds()}
        start = 0
        for term, (name, width) in zip(cfg.observations, self.obs.layout):
            if name in known and term.noise is None and term.scale == 1.0 and term.history == 1:
                low[start:start + width], high[start:start + width] = known[name]
            start += width
        return low, high

    # ------------------------------------------------------------------ hot path
    def ctrl_from_action(self, action: np.ndarray) -> np.ndarray:
        self._state_fresh = False  # a step follows
        target = self.default_joint_pos + self.robot.action_scale * action
        self._ctrl = np.clip(target, self.ctrl_range[:, 0], self.ctrl_range[:, 1]).astype(self.b.np_dtype)
        return self._ctrl

    def before_step(self, step_count: int) -> None:
        if self._push is None or step_count % self._push_every != self._push_every - 1:
            return
        f = self.cfg.push_force
        if self._push == "push_robots":
            self.b.push_robots([-f, f])
        else:  # the same impulse as a push over one control step, as a velocity change
            dv = np.zeros((self.n, 3))
            dv[:, :2] = self.rng.uniform(-f, f, size=(self.n, 2)) * self.dt / self.b.get_body_mass().sum()
            self.b.apply_interval_randomization(IntervalRandomizationPlan([
                RandomizationOp(term="root_lin_vel_delta", values=dv, operation="add")]))

    def _base_state(self) -> None:
        """Read the state once (``get_qpos``/``get_qvel``, MuJoCo's layout): the free root's position,
        orientation and world linear velocity, its body-frame angular velocity as stored, and the
        actuated joints."""
        qpos = self.b.get_qpos().astype(np.float64)
        qvel = self.b.get_qvel().astype(np.float64)
        q0, v0 = self.root_q, self.root_v
        self.base_pos = qpos[:, q0:q0 + 3]
        self.quat = qpos[:, q0 + 3:q0 + 7]
        self.lin_vel_b = quat_apply_inverse(self.quat, qvel[:, v0:v0 + 3])
        self.ang_vel_b = qvel[:, v0 + 3:v0 + 6]
        w, x, y, z = self.quat.T
        # unit gravity in the base frame: R^T (0, 0, -1) = -(third row of R)
        self.gravity_b = -np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=1)
        self.dof_pos = qpos[:, self.act_qpos_cols]
        self.dof_vel = qvel[:, self.act_qvel_cols]
        self._state_fresh = True

    def _ground(self, xy: np.ndarray) -> np.ndarray | float:
        return 0.0 if self.terrain is None else self.terrain.height_at(xy)

    def _foot_contact(self) -> np.ndarray:
        """``(num_envs, feet)`` foot centres within 5 mm of the ground (height <= radius + 5 mm)."""
        pos, quat = self.b.get_body_pose_w(self.foot_ids)
        centre = pos.astype(np.float64) + quat_apply(quat.astype(np.float64), self.foot_offset)
        return centre[..., 2] - self._ground(centre[..., :2]) <= self.robot.foot_radius + 0.005

    def base_contact(self) -> np.ndarray:
        """``(num_envs,)`` a contact force on the base above 1 N (``contact_forces``), else the base
        box's lowest corner within ``base_contact_margin`` m of the ground under it (no box: the
        base origin below ``robot.min_base_height`` over the ground)."""
        if self.base_sensor is not None:
            return self.base_sensor.in_contact()[:, 0]
        pos = self.base_pos
        if self.base_half is None:
            return pos[:, 2] - self._ground(pos[:, :2]) < self.robot.min_base_height
        lowest = pos[:, 2] - np.abs(self.gravity_b) @ self.base_half  # |third row of R| . half-sizes
        return lowest - self._ground(pos[:, :2]) <= self.cfg.base_contact_margin

    def evaluate(self, action: np.ndarray) -> StepResult:
        self._base_state()
        cfg, w, dt, cmd = self.cfg, self.weights, self.dt, self.commands
        self.episode_steps += 1
        self._fresh = True
        sigma2 = cfg.tracking_sigma ** 2
        if self.actuators is not None:
            torque = self.actuators.applied_torque
        else:
            torque = self.kp * (self._ctrl - self.dof_pos) - self.kd * self.dof_vel
        moving = np.linalg.norm(cmd[:, :2], axis=1) > 0.1
        if self.feet_sensor is not None:  # the backend's timers: touch-downs and the air phase they end
            first, last_air = self.feet_sensor.first_contact(), self.feet_sensor.last_air_time
            air = np.sum((last_air - cfg.feet_air_time_threshold) * (first & (last_air > 0)), axis=1) * moving
        else:
            contact = self._foot_contact()
            first_contact = contact & ~self.last_contact & (self.air_time > 0)
            self.air_time += dt
            air = np.sum((self.air_time - cfg.feet_air_time_threshold) * first_contact, axis=1) * moving
            self.air_time[contact] = 0.0
            self.last_contact = contact
        tilt = self.gravity_b[:, 2] > -np.cos(cfg.max_tilt)
        terminated = self.base_contact() | tilt
        if self.terrain is not None:
            hx, hy = self.terrain.half_extent
            terminated |= (np.abs(self.base_pos[:, 0]) > hx - 0.5) | (np.abs(self.base_pos[:, 1]) > hy - 0.5)
        #: ``(num_envs,)`` tracking errors of the last step: ``|cmd_xy - v_xy|`` m/s, ``|cmd_wz - w_z|`` rad/s.
        self.lin_vel_error = np.linalg.norm(cmd[:, :2] - self.lin_vel_b[:, :2], axis=1)
        self.ang_vel_error = np.abs(cmd[:, 2] - self.ang_vel_b[:, 2])
        raw = {
            "track_lin_vel_xy": np.exp(-self.lin_vel_error ** 2 / sigma2),
            "track_ang_vel_z": np.exp(-self.ang_vel_error ** 2 / sigma2),
            "lin_vel_z": self.lin_vel_b[:, 2] ** 2,
            "ang_vel_xy": np.sum(self.ang_vel_b[:, :2] ** 2, axis=1),
            "orientation": np.sum(self.gravity_b[:, :2] ** 2, axis=1),
            "torques": np.sum(torque ** 2, axis=1),
            "dof_acc": np.sum(((self.dof_vel - self.last_dof_vel) / dt) ** 2, axis=1),
            "action_rate": np.sum((action - self.last_action) ** 2, axis=1),
            "feet_air_time": air,
        }
        terms = {k: (w[k] * dt * v).astype(np.float32) for k, v in raw.items()}
        terms["termination"] = (w["termination"] * terminated).astype(np.float32)
        reward = np.sum(list(terms.values()), axis=0).astype(np.float32)
        self.last_action = action.astype(np.float64)
        self.last_dof_vel = self.dof_vel
        resample = np.flatnonzero(self.episode_steps % self._resample_every == 0)
        if len(resample):
            self._sample_commands(resample)
        return reward, terminated, terms

    def _sample_commands(self, env_ids: np.ndarray) -> None:
        cfg, k = self.cfg, len(env_ids)
        self.commands[env_ids] = np.stack([self.rng.uniform(*cfg.lin_vel_x, k), self.rng.uniform(*cfg.lin_vel_y, k),
                                           self.rng.uniform(*cfg.ang_vel_z, k)], axis=1)

    def _spawn(self, env_ids: np.ndarray, qpos: np.ndarray) -> None:
        """Place ``env_ids``' bases on the terrain: their sub-terrain's centre (curriculum) or a random
        one, within 0.25 m, at the default base height over the highest ground nearby."""
        k, q0 = len(env_ids), self.root_q
        if self.curriculum is not None:
            ended = self.episode_steps[env_ids] > 0
            if ended.any():
                done = env_ids[ended]
                walked = np.linalg.norm(self.b.get_base_pos()[done, :2] - self.spawn_xy[done], axis=1)
                asked = np.linalg.norm(self.commands[done, :2], axis=1) * self.episode_steps[done] * self.dt
                self.curriculum.update(done, walked, asked)
            origins = self.curriculum.origins(env_ids)
        else:
            rows, cols = self.terrain.origins.shape[:2]
            origins = self.terrain.origins[self.rng.integers(0, rows, k), self.rng.integers(0, cols, k)]
        xy = origins[:, :2] + self.rng.uniform(-0.25, 0.25, (k, 2))
        qpos[:, q0:q0 + 2] = xy
        qpos[:, q0 + 2] += self.terrain.max_height_near(xy, 0.3)
        self.spawn_xy[env_ids] = xy

    def reset(self, env_ids: np.ndarray) -> None:
        cfg, b, k = self.cfg, self.b, len(env_ids)
        qpos = np.tile(self.home_qpos, (k, 1))
        yaw = self.rng.uniform(-np.pi, np.pi, k)
        q0, v0, dof_cols = self.root_q, self.root_v, self.act_qpos_cols
        qpos[:, q0 + 3:q0 + 7] = quat_mul(quat_from_yaw(yaw), qpos[:, q0 + 3:q0 + 7])
        noise = self.rng.uniform(-cfg.joint_pos_noise, cfg.joint_pos_noise, (k, len(dof_cols)))
        qpos[:, dof_cols] = np.clip(qpos[:, dof_cols] + noise, self.joint_range[:, 0], self.joint_range[:, 1])
        if self.terrain is not None:
            self._spawn(env_ids, qpos)
        qvel = np.zeros((k, b.nv))
        qvel[:, v0:v0 + 6] = self.rng.uniform(-cfg.root_vel_noise, cfg.root_vel_noise, (k, 6))
        payload = ResetRandomizationPayload(self._model_ops(env_ids, self._reset_terms)) if self._reset_terms else None
        b.set_state(env_ids, qpos, qvel, randomization=payload)
        self._sample_commands(env_ids)
        self.last_action[env_ids] = 0.0
        self.last_dof_vel[env_ids] = 0.0
        self.air_time[env_ids] = 0.0
        self.last_contact[env_ids] = True
        self.episode_steps[env_ids] = 0
        if self.actuators is not None:
            self.actuators.reset(env_ids, np.tile(self.default_joint_pos, (k, 1)), self.rng)
        self._base_state()
        self.obs.reset(env_ids, {name: v[env_ids] for name, v in self._term_values().items()}, self.rng)

    def _term_values(self) -> dict[str, np.ndarray]:
        values = {"base_lin_vel_b": self.lin_vel_b, "base_ang_vel_b": self.ang_vel_b,
                  "projected_gravity": self.gravity_b, "command": self.commands,
                  "dof_pos_rel": self.dof_pos - self.default_joint_pos, "dof_vel": self.dof_vel,
                  "last_action": self.last_action}
        if self.scanner is not None:
            values["height_scan"] = self.scanner.scan().astype(np.float64) - 0.5
        return values

    def observe(self) -> np.ndarray:
        if not self._state_fresh:  # evaluate() and reset() read it; nothing moved since
            self._base_state()
        obs = self.obs.compute(self._term_values(), self.rng, advance=self._fresh)
        self._fresh = False
        return obs
