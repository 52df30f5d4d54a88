"""``MotrixOptions``: the typed options of the MotrixSim backend."""

from __future__ import annotations

import attrs

from unisim_core.errors import InvalidInputError
from unisim_core.options import BackendOptions

__all__ = ["MotrixOptions"]


def _opt_pos_int(inst, attribute, value):
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError(f"{attribute.name}: expected an int >= 1 or None, got {value!r}")


def _bool(inst, attribute, value):
    if not isinstance(value, bool):
        raise InvalidInputError(f"{attribute.name}: expected a bool, got {value!r}")


@attrs.frozen(kw_only=True)
class MotrixOptions(BackendOptions):
    """MotrixSim options (on top of :class:`~unisim_core.options.BackendOptions`).

    - ``add_body_sensors``: expose, for every body, four derived sensors
      ``<body>_body_pos`` (3), ``<body>_body_quat`` (4, wxyz), ``<body>_body_linvel`` (3) and
      ``<body>_body_angvel`` (3), world frame, appended after the model's sensors.
    - ``max_iterations``: solver iteration cap (``SceneModel.options.max_iterations``);
      ``None`` keeps the engine default (100).
    - ``threads``: worker count of MotrixSim's process-wide thread pool
      (``motrixsim.init_thread_pool``). It can be set once per process and only before
      the pool is used; a conflicting second request raises. ``None``: leave the pool alone.
    """

    add_body_sensors: bool = attrs.field(default=False, validator=_bool)
    max_iterations: int | None = attrs.field(default=3, validator=_opt_pos_int)
    threads: int | None = attrs.field(default=None, validator=_opt_pos_int)
