"""``MotrixOptions``: the typed options of the MotrixSim backend."""

from __future__ import annotations

import attrs

from unisim_core.contract.options import BackendOptions, boolean, optional_positive_int

__all__ = ["MotrixOptions"]


@attrs.frozen(kw_only=True)
class MotrixOptions(BackendOptions):
    """MotrixSim options (on top of :class:`~unisim_core.contract.options.BackendOptions`).

    - ``add_body_sensors``: expose, for every body, four derived sensors
      ``<body>_body_pos`` (3), ``<body>_body_quat`` (4, wxyz), ``<body>_body_linvel`` (3) and
      ``<body>_body_angvel`` (3), world frame, appended after the model's sensors.
    - ``max_iterations``: solver iteration cap (``SceneModel.options.max_iterations``);
      ``None`` keeps the engine default (100).
    - ``threads``: worker count of MotrixSim's process-wide thread pool
      (``motrixsim.init_thread_pool``). It can be set once per process and only before
      the pool is used; a conflicting second request raises. ``None``: leave the pool alone.
    """

    add_body_sensors: bool = attrs.field(default=False, validator=boolean)
    max_iterations: int | None = attrs.field(default=3, validator=optional_positive_int)
    threads: int | None = attrs.field(default=None, validator=optional_positive_int)
