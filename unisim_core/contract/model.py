"""``ModelInfo``: the engine-neutral description of a loaded model.

A backend builds one on the cold path (``SimBackend._load_model_info``, from its engine's model
or from :func:`unisim_core.plugin.mjcf_lite.load_mjcf` for engines without name tables) and the
contract derives every name lookup and model table from it. Layout follows MuJoCo's ``mjModel``:
bodies, joints, actuators, sensors, sites and geoms in model order (MJCF document order, bodies
depth first), body 0 is the world, ``qpos``/``qvel`` columns per joint as in MuJoCo. Every field
is documented below with its shape, units and frame; docs/backend-authors.md has the same table.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import numpy as np

__all__ = ["ModelInfo", "JOINT_QPOS_WIDTH", "JOINT_QVEL_WIDTH"]

#: qpos / qvel width of each joint type.
JOINT_QPOS_WIDTH = {"free": 7, "ball": 4, "slide": 1, "hinge": 1}
JOINT_QVEL_WIDTH = {"free": 6, "ball": 3, "slide": 1, "hinge": 1}


def _read_only(arr: np.ndarray) -> np.ndarray:
    """A read-only view of ``arr`` (a copy the caller owns) whose base is read-only too, so that
    ``setflags(write=True)`` cannot make it writable again."""
    owner = np.array(arr, copy=True)
    owner.setflags(write=False)
    return owner.view()


class _Keyframes(dict):
    """``{name: qpos}`` that cannot be changed (its arrays are read-only too); pickles as a dict."""

    def _refuse(self, *args, **kwargs):
        raise TypeError("ModelInfo.keyframes is read-only")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _refuse

    def __reduce__(self):
        return (_Keyframes, (dict(self),))


def _f64_parts(shape_tail: tuple[int, ...]):
    def convert(value):
        return _read_only(np.asarray(value, dtype=np.float64))

    def check(inst, attribute, value):
        if value.ndim != 1 + len(shape_tail) or value.shape[1:] != shape_tail:
            raise ValueError(
                f"ModelInfo.{attribute.name}: expected shape (n, {', '.join(map(str, shape_tail))}), "
                f"got {value.shape}"
            )

    return convert, check


def _f64(shape_tail: tuple[int, ...]):
    convert, check = _f64_parts(shape_tail)
    return attrs.field(converter=convert, validator=check)


def _optional_f64(shape_tail: tuple[int, ...]):
    """A ``_f64`` table that may be ``None`` (not reported by the backend)."""
    convert, check = _f64_parts(shape_tail)
    return attrs.field(default=None, converter=lambda v: None if v is None else convert(v),
                       validator=lambda inst, attribute, v: v is None or check(inst, attribute, v))


def _i64():
    def convert(value):
        return _read_only(np.asarray(value, dtype=np.int64).reshape(-1))

    return attrs.field(converter=convert)


def _names():
    return attrs.field(converter=lambda v: tuple(str(x) for x in v))


@attrs.frozen(kw_only=True)
class ModelInfo:
    """Static model tables (SI units, radians). Arrays are read-only copies (``keyframes`` too, and
    ``setflags(write=True)`` cannot undo it); lengths are checked.

    Counts: ``nbody`` (with the world), ``njnt``, ``nu`` actuators, ``nsensor``, ``nsite``,
    ``ngeom``. Names may be ``""`` (unnamed; such objects cannot be looked up by name). Ids are
    row indices into these tables, in MuJoCo's model order.
    """

    #: Number of generalized coordinates: the width of a ``qpos`` row (a free joint takes 7 columns
    #: ``[x y z qw qx qy qz]``, a ball joint 4 ``[qw qx qy qz]``, hinge and slide 1).
    nq: int
    #: Number of degrees of freedom: the width of a ``qvel`` row (free 6 ``[v_world, w_body]``:
    #: linear velocity of the body origin in the world frame, angular velocity in the body frame;
    #: ball 3, body frame; hinge and slide 1).
    nv: int
    #: ``(nbody,)`` body names; ``body_names[0]`` is the world (MuJoCo calls it ``"world"``).
    body_names: tuple[str, ...] = _names()
    #: ``(nbody,)`` parent body id; the world is its own parent (0). A parent precedes its children.
    body_parent: np.ndarray = _i64()
    #: ``(nbody,)`` mass, kg (0 for the world and massless bodies).
    body_mass: np.ndarray = _f64(())
    #: ``(nbody, 3)`` centre of mass in the body frame, m (MuJoCo ``body_ipos``).
    body_ipos: np.ndarray = _f64((3,))
    #: ``(nbody, 3)`` principal moments of inertia about the COM, kg·m², in the body's inertial
    #: frame (MuJoCo ``body_inertia``; that frame's orientation, ``body_iquat``, is not a field).
    body_inertia: np.ndarray = _f64((3,))
    #: ``(njnt,)`` joint names.
    joint_names: tuple[str, ...] = _names()
    #: ``(njnt,)`` joint kinds: ``"free" | "ball" | "slide" | "hinge"`` (widths in
    #: :data:`JOINT_QPOS_WIDTH` / :data:`JOINT_QVEL_WIDTH`).
    joint_types: tuple[str, ...] = _names()
    #: ``(njnt,)`` id of the body the joint moves (relative to its parent).
    joint_body: np.ndarray = _i64()
    #: ``(njnt,)`` first ``qpos`` column of each joint (MuJoCo ``jnt_qposadr``).
    joint_qposadr: np.ndarray = _i64()
    #: ``(njnt,)`` first ``qvel`` column of each joint, also its first dof id (``jnt_dofadr``).
    joint_dofadr: np.ndarray = _i64()
    #: ``(njnt, 2)`` ``[low, high]`` position limits: rad (hinge), m (slide); ``(-inf, inf)`` when
    #: the joint is not limited (always for free and ball joints).
    joint_range: np.ndarray = _f64((2,))
    #: ``(nv,)`` viscous damping per dof: N·m·s/rad (rotational dofs), N·s/m (translational).
    dof_damping: np.ndarray = _f64(())
    #: ``(nv,)`` armature (reflected rotor inertia added to the dof's diagonal of the mass
    #: matrix): kg·m² (rotational), kg (translational).
    dof_armature: np.ndarray = _f64(())
    #: ``(nv,)`` dry friction (maximum friction force) per dof: N·m (rotational), N (translational).
    dof_frictionloss: np.ndarray = _f64(())
    #: ``(nu,)`` actuator names; ``ctrl`` columns follow this order.
    actuator_names: tuple[str, ...] = _names()
    #: ``(nu,)`` id of the joint the actuator drives, ``-1`` for other transmissions (tendon, site).
    actuator_joint: np.ndarray = _i64()
    #: ``(nu, 2)`` ``[low, high]`` of ``ctrl`` in the actuator's own unit (a motor: force or torque
    #: before ``gear``; a position servo: the target joint position); ``(-inf, inf)`` when unlimited.
    actuator_ctrl_range: np.ndarray = _f64((2,))
    #: ``(nu,)`` position gain ``kp`` of affine (position) servos, N·m/rad or N/m, 0 otherwise:
    #: force ``kp·(ctrl − gear·q) − kd·gear·q̇`` (MuJoCo ``-biasprm[1]``).
    actuator_kp: np.ndarray = _f64(())
    #: ``(nu,)`` velocity gain ``kv`` of position and velocity servos, N·m·s/rad or N·s/m, 0 for
    #: motors (MuJoCo ``-biasprm[2]``; a velocity servo's force is ``kd·(ctrl − gear·q̇)``).
    actuator_kd: np.ndarray = _f64(())
    #: ``(nsensor,)`` sensor names.
    sensor_names: tuple[str, ...] = _names()
    #: ``(nsensor,)`` values per sensor (jointpos 1, framepos 3, framequat 4, gyro 3, ...); a
    #: sensor's values start at :attr:`sensor_adr` in the flat sensordata row.
    sensor_dims: np.ndarray = _i64()
    #: ``(nsite,)`` site names.
    site_names: tuple[str, ...] = _names()
    #: ``(nsite,)`` id of the body each site is attached to.
    site_body: np.ndarray = _i64()
    #: ``(ngeom,)`` geom names.
    geom_names: tuple[str, ...] = _names()
    #: ``(ngeom,)`` geom kinds, MuJoCo's names: ``"plane"``, ``"hfield"``, ``"sphere"``,
    #: ``"capsule"``, ``"ellipsoid"``, ``"cylinder"``, ``"box"``, ``"mesh"``, ...
    geom_types: tuple[str, ...] = _names()
    #: ``(ngeom,)`` id of the body each geom is attached to (0: static, in the world).
    geom_body: np.ndarray = _i64()
    #: ``(ngeom, 3)`` MuJoCo ``geom_size``, m, unused entries 0: sphere ``[r]``, capsule and
    #: cylinder ``[r, half-length]``, box and ellipsoid half-sizes, plane ``[half-x, half-y, grid]``.
    geom_size: np.ndarray = _f64((3,))
    #: ``(ngeom, 3)`` friction coefficients ``[sliding, torsional (m), rolling (m)]``.
    geom_friction: np.ndarray = _f64((3,))
    #: ``(ngeom, 2)`` contact ``solref`` ``[timeconst s, dampratio]`` (MuJoCo semantics).
    geom_solref: np.ndarray = _f64((2,))
    #: ``(ngeom, 5)`` contact ``solimp`` ``[dmin, dmax, width m, midpoint, power]``.
    geom_solimp: np.ndarray = _f64((5,))
    #: ``(ngeom,)`` contact type bitmask; geoms a, b may collide when
    #: ``contype[a] & conaffinity[b] or contype[b] & conaffinity[a]``.
    geom_contype: np.ndarray = _i64()
    #: ``(ngeom,)`` contact affinity bitmask (see ``geom_contype``).
    geom_conaffinity: np.ndarray = _i64()
    #: ``(3,)`` gravitational acceleration in the world frame, m/s² (``(0, 0, -9.81)`` usually).
    gravity: np.ndarray = attrs.field(converter=lambda v: _read_only(np.asarray(v, dtype=np.float64).reshape(3)))
    #: ``(nq,)`` the model's reference configuration (MuJoCo ``qpos0``: free joints at the body's
    #: MJCF pose, other joints at 0).
    qpos0: np.ndarray = attrs.field(converter=lambda v: _read_only(np.asarray(v, dtype=np.float64).reshape(-1)))
    #: ``{name: (nq,) qpos}`` named keyframes (unnamed MJCF keys may be left out).
    keyframes: Mapping[str, np.ndarray] = attrs.field(
        factory=dict, converter=lambda d: _Keyframes({str(k): _read_only(np.asarray(v, dtype=np.float64))
                                                      for k, v in d.items()})
    )
    #: Names of mocap bodies (world children posed by the user, not simulated), in mocap id order.
    mocap_body_names: tuple[str, ...] = attrs.field(default=(), converter=lambda v: tuple(map(str, v)))
    #: ``(njnt, 3)`` joint anchor in its body's frame, m (MuJoCo ``jnt_pos``); ``None`` when the backend does
    #: not report it (the shared site Jacobian, ``unisim_core.contract.kinematics``, needs it and says so).
    joint_pos: np.ndarray | None = _optional_f64((3,))
    #: ``(njnt, 3)`` unit joint axis (hinge, slide) in its body's frame (MuJoCo ``jnt_axis``); ``None``: unknown.
    joint_axis: np.ndarray | None = _optional_f64((3,))
    #: ``(nsite, 3)`` site position in its body's frame, m (MuJoCo ``site_pos``); ``None``: unknown.
    site_pos: np.ndarray | None = _optional_f64((3,))

    def __attrs_post_init__(self) -> None:
        groups = {
            "body": ("body_names", "body_parent", "body_mass", "body_ipos", "body_inertia"),
            "joint": ("joint_names", "joint_types", "joint_body", "joint_qposadr", "joint_dofadr",
                      "joint_range", "joint_pos", "joint_axis"),
            "actuator": ("actuator_names", "actuator_joint", "actuator_ctrl_range", "actuator_kp",
                         "actuator_kd"),
            "sensor": ("sensor_names", "sensor_dims"),
            "site": ("site_names", "site_body", "site_pos"),
            "geom": ("geom_names", "geom_types", "geom_body", "geom_size", "geom_friction",
                     "geom_solref", "geom_solimp", "geom_contype", "geom_conaffinity"),
            "dof": ("dof_damping", "dof_armature", "dof_frictionloss"),
        }
        for group, fields in groups.items():
            lengths = {f: len(getattr(self, f)) for f in fields if getattr(self, f) is not None}
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

    def __reduce__(self):  # rebuilt through the converters: read-only again after unpickling
        return (_model_info, (attrs.asdict(self, recurse=False),))

    @property
    def sensor_adr(self) -> np.ndarray:
        """(nsensor,) start of each sensor in the flat sensordata row."""
        return np.concatenate(([0], np.cumsum(self.sensor_dims)[:-1])).astype(np.int64)


def _model_info(fields: dict) -> ModelInfo:
    return ModelInfo(**fields)
