"""Worker-side contact sensing (capability ``contact_forces``) on Isaac Lab's ``ContactSensor``.

One sensor covers every robot body (the rigid bodies :func:`~unisim_isaacsim._usd_helpers.apply_contact_report`
gave ``PhysxContactReportAPI`` on env 0 before cloning): ``ContactSensorCfg(prim_path=<bodies' parent
in every env>/.*, update_period=0, history_length=0, track_air_time=False)``, built before
``sim.reset()`` (a sensor initializes on PLAY) and updated after every substep. A binding selects
columns of ``data.net_forces_w`` ``(num_envs, B, 3)``: world frame, N, the force on each body summed
over its contacts, rows in the articulation's env order (both views match ``env_.*`` alike: to be
confirmed on a GPU). Contact state and air time are the core's (:mod:`unisim_core.contacts`), not
the sensor's.

Not mapped: ``contact_filters`` (Isaac Lab filters many-to-one only, one sensor body per env and
its filters fixed before PLAY, while the contract binds any bodies at run time). PhysX's net force
is its normal part (Isaac Lab: "PhysX ... cannot compute the aggregate friction component"), so a
body held by static friction reads no tangential force, as on SAPIEN.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ContactMapping"]


class ContactMapping:
    """``ContactSensor`` over the bodies under one parent prim; ``bind`` / ``read`` serve the worker ops."""

    @classmethod
    def create(cls, body_paths: list[str], env_ns: str) -> ContactMapping | None:
        """The mapping, or ``None`` (``contact_forces`` not declared) unless the bodies share one
        parent prim below env 0 (one sensor expression ``<parent>/.*`` reaches them all)."""
        parents = {p.rsplit("/", 1)[0] for p in body_paths}
        env0 = f"{env_ns}/env_0"
        if len(parents) != 1 or not next(iter(parents)).startswith(env0 + "/"):
            return None
        return cls(f"{env_ns}/env_.*{next(iter(parents))[len(env0):]}/.*")

    def __init__(self, expr: str) -> None:
        from isaaclab.sensors import ContactSensor, ContactSensorCfg

        self.sensor = ContactSensor(ContactSensorCfg(prim_path=expr, update_period=0.0, history_length=0,
                                                     track_air_time=False))
        self.columns: dict[int, int] = {}
        self._keys: list[Any] = []

    def resolve(self, body_names: list[str]) -> None:
        """After ``sim.reset()``: the sensor column of each MJCF body id it reports."""
        from ._layout import mjcf_usd_name

        index = {name: i for i, name in enumerate(self.sensor.body_names)}
        self.columns = {b: index[mjcf_usd_name(n)] for b, n in enumerate(body_names) if mjcf_usd_name(n) in index}

    def update(self, dt: float) -> None:
        self.sensor.update(dt)

    def bind(self, body_ids: list[int], against_ids: list[int] | None, names: list[str]) -> int:
        """A key for :meth:`read`; every body must be a sensor body (a rigid body with colliders)."""
        from unisim_core.errors import UnsupportedCapabilityError

        if against_ids is not None:
            raise UnsupportedCapabilityError("isaacsim", "contact_filters", "Isaac Lab filters many-to-one only")
        missing = [names[b] for b in body_ids if b not in self.columns]
        if missing:
            raise UnsupportedCapabilityError("isaacsim", "contact_forces", f"bodies {missing} are not rigid bodies "
                                             f"of the articulation's contact sensor ({self.sensor.body_names})")
        self._keys.append([self.columns[b] for b in body_ids])
        return len(self._keys) - 1

    def read(self, key: int, to_numpy) -> Any:
        """``(num_envs, n, 3)`` float64, N, world frame, engine rows (``to_numpy``: a sensor tensor as numpy)."""
        return to_numpy(self.sensor.data.net_forces_w)[:, self._keys[key]]
