"""``ModelInfo``: the engine-neutral description of a loaded model.

A backend builds one on the cold path (from its engine's model) and the
contract derives every name lookup and model table from it. Layout follows
MuJoCo: bodies, joints, actuators, sensors, sites and geoms in model order,
``qpos``/``qvel`` addresses per joint, body 0 is the world.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import numpy as np

__all__ = ["ModelInfo", "JOINT_QPOS_WIDTH", "JOINT_QVEL_WIDTH"]

#: qpos / qvel width of each joint type.
JOINT_QPOS_WIDTH = {"free": 7, "ball": 4, "slide": 1, "hinge": 1}
JOINT_QVEL_WIDTH = {"free": 6, "ball": 3, "slide": 1, "hinge": 1}


def _f64(shape_tail: tuple[int, ...]):
    def convert(value):
        arr = np.array(value, dtype=np.float64, copy=True)
        arr.setflags(write=False)
        return arr

    def check(inst, attribute, value):
        if value.ndim != 1 + len(shape_tail) or value.shape[1:] != shape_tail:
            raise ValueError(
                f"ModelInfo.{attribute.name}: expected shape (n, {', '.join(map(str, shape_tail))}), "
                f"got {value.shape}"
            )

    return attrs.field(converter=convert, validator=check)


def _i64():
    def convert(value):
        arr = np.array(value, dtype=np.int64, copy=True).reshape(-1)
        arr.setflags(write=False)
        return arr

    return attrs.field(converter=convert)


def _names():
    return attrs.field(converter=lambda v: tuple(str(x) for x in v))


@attrs.frozen(kw_only=True)
class ModelInfo:
    """Static model tables. Arrays are read-only; lengths must agree (checked)."""

    nq: int
    nv: int
    body_names: tuple[str, ...] = _names()
    body_parent: np.ndarray = _i64()  #: (nbody,) parent body id; the world is its own parent
    body_mass: np.ndarray = _f64(())  #: (nbody,) kg
    body_ipos: np.ndarray = _f64((3,))  #: (nbody, 3) COM in the body frame, m
    body_inertia: np.ndarray = _f64((3,))  #: (nbody, 3) principal inertia, kg·m²
    joint_names: tuple[str, ...] = _names()
    joint_types: tuple[str, ...] = _names()  #: "free" | "ball" | "slide" | "hinge"
    joint_body: np.ndarray = _i64()  #: (njnt,) owning body id
    joint_qposadr: np.ndarray = _i64()
    joint_dofadr: np.ndarray = _i64()
    joint_range: np.ndarray = _f64((2,))  #: (njnt, 2) [low, high]; (-inf, inf) when unlimited
    dof_damping: np.ndarray = _f64(())  #: (nv,)
    dof_armature: np.ndarray = _f64(())  #: (nv,)
    dof_frictionloss: np.ndarray = _f64(())  #: (nv,)
    actuator_names: tuple[str, ...] = _names()
    actuator_joint: np.ndarray = _i64()  #: (nu,) target joint id, -1 when not a joint
    actuator_ctrl_range: np.ndarray = _f64((2,))  #: (nu, 2); (-inf, inf) when unlimited
    actuator_kp: np.ndarray = _f64(())  #: (nu,) position gain (0 for motors)
    actuator_kd: np.ndarray = _f64(())  #: (nu,) velocity gain
    sensor_names: tuple[str, ...] = _names()
    sensor_dims: np.ndarray = _i64()  #: (nsensor,) values per sensor
    site_names: tuple[str, ...] = _names()
    site_body: np.ndarray = _i64()
    geom_names: tuple[str, ...] = _names()
    geom_types: tuple[str, ...] = _names()  #: "plane", "hfield", "sphere", "capsule", "box", …
    geom_body: np.ndarray = _i64()
    geom_size: np.ndarray = _f64((3,))
    geom_friction: np.ndarray = _f64((3,))  #: (ngeom, 3) sliding, torsional, rolling
    geom_solref: np.ndarray = _f64((2,))
    geom_solimp: np.ndarray = _f64((5,))
    geom_contype: np.ndarray = _i64()
    geom_conaffinity: np.ndarray = _i64()
    gravity: np.ndarray = attrs.field(converter=lambda v: np.array(v, dtype=np.float64).reshape(3))
    qpos0: np.ndarray = attrs.field(converter=lambda v: np.array(v, dtype=np.float64).reshape(-1))
    keyframes: Mapping[str, np.ndarray] = attrs.field(
        factory=dict, converter=lambda d: {str(k): np.array(v, dtype=np.float64) for k, v in d.items()}
    )
    mocap_body_names: tuple[str, ...] = attrs.field(default=(), converter=lambda v: tuple(map(str, v)))

    def __attrs_post_init__(self) -> None:
        groups = {
            "body": ("body_names", "body_parent", "body_mass", "body_ipos", "body_inertia"),
            "joint": ("joint_names", "joint_types", "joint_body", "joint_qposadr", "joint_dofadr",
                      "joint_range"),
            "actuator": ("actuator_names", "actuator_joint", "actuator_ctrl_range", "actuator_kp",
                         "actuator_kd"),
            "sensor": ("sensor_names", "sensor_dims"),
            "site": ("site_names", "site_body"),
            "geom": ("geom_names", "geom_types", "geom_body", "geom_size", "geom_friction",
                     "geom_solref", "geom_solimp", "geom_contype", "geom_conaffinity"),
            "dof": ("dof_damping", "dof_armature", "dof_frictionloss"),
        }
        for group, fields in groups.items():
            lengths = {f: len(getattr(self, f)) for f in fields}
            if len(set(lengths.values())) > 1:
                raise ValueError(f"ModelInfo: {group} tables disagree in length: {lengths}")
        if len(self.dof_damping) != self.nv:
            raise ValueError(f"ModelInfo: dof tables have {len(self.dof_damping)} rows, nv={self.nv}")
        if self.qpos0.shape != (self.nq,):
            raise ValueError(f"ModelInfo.qpos0: expected shape ({self.nq},), got {self.qpos0.shape}")
        for name, q in self.keyframes.items():
            if q.shape != (self.nq,):
                raise ValueError(f"ModelInfo.keyframes[{name!r}]: expected ({self.nq},), got {q.shape}")
        bad = set(self.joint_types) - set(JOINT_QPOS_WIDTH)
        if bad:
            raise ValueError(f"ModelInfo.joint_types: unknown types {sorted(bad)}")

    @property
    def sensor_adr(self) -> np.ndarray:
        """(nsensor,) start of each sensor in the flat sensordata row."""
        return np.concatenate(([0], np.cumsum(self.sensor_dims)[:-1])).astype(np.int64)
