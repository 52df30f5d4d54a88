"""MJCF features MuJoCo Warp cannot run, found in the compiled model and refused by feature name
and element (``unisim_core.plugin.mjcf_features``) before ``put_model`` would refuse them by enum."""

from __future__ import annotations

import mujoco
import numpy as np
from mujoco_warp._src import types as mjw_types

from unisim_core.plugin.mjcf_features import mj_enum_tag, unsupported_error, use

__all__ = ["check_model_features"]

_O = mujoco.mjtObj
#: (kind, MjModel type column, MuJoCo enum, MuJoCo Warp's supported enum, object type of a row)
_TABLES = (
    ("transmission", "actuator_trntype", mujoco.mjtTrn, mjw_types.TrnType, _O.mjOBJ_ACTUATOR),
    ("equality", "eq_type", mujoco.mjtEq, mjw_types.EqType, _O.mjOBJ_EQUALITY),
    ("geom", "geom_type", mujoco.mjtGeom, mjw_types.GeomType, _O.mjOBJ_GEOM),
    ("sensor", "sensor_type", mujoco.mjtSensor, mjw_types.SensorType, _O.mjOBJ_SENSOR),
)
#: (MjModel plugin column, object type, feature kind and tag of a plugin there)
_PLUGINS = (("body_plugin", _O.mjOBJ_BODY, "model", "plugin"),
            ("actuator_plugin", _O.mjOBJ_ACTUATOR, "actuator", "plugin"),
            ("sensor_plugin", _O.mjOBJ_SENSOR, "sensor", "plugin"))


def check_model_features(backend: str, path: str, m: mujoco.MjModel) -> None:
    """``UnsupportedCapabilityError`` naming the first element whose type MuJoCo Warp lacks."""
    for kind, column, enum, supported, obj in _TABLES:
        values = np.asarray(getattr(m, column))
        bad = np.flatnonzero(~np.isin(values, [int(x) for x in supported]))
        if bad.size:
            i = int(bad[0])
            tag = mj_enum_tag(enum(int(values[i])).name)
            raise unsupported_error(backend, use(kind, tag, mujoco.mj_id2name(m, obj, i) or "", path),
                                    "MuJoCo Warp does not implement it")
    for column, obj, kind, tag in _PLUGINS:
        ids = np.flatnonzero(np.asarray(getattr(m, column)) != -1)
        if ids.size:
            raise unsupported_error(backend, use(kind, tag, mujoco.mj_id2name(m, obj, int(ids[0])) or "", path),
                                    "MuJoCo Warp runs no engine plugins")
