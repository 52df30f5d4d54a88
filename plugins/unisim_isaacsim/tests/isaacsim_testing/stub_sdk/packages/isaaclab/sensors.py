"""STUB ``isaaclab.sensors``: ``ContactSensor`` / ``ContactSensorCfg`` (the names in Isaac Lab 2.3.2
and 3.0.0; ``data.net_forces_w`` a torch tensor in 2.3, read through ``.torch`` in 3.0).

Rules mirrored (Isaac Lab 2.3.2 ``isaaclab/sensors/contact_sensor/contact_sensor.py``):

- the sensor bodies are the prims matching the last element of ``prim_path`` below the first
  matching parent that carry ``PhysxContactReportAPI``; none is a ``RuntimeError`` naming
  ``activate_contact_sensors``; filters (``filter_prim_paths_expr``) need one body per env;
- it initializes at ``sim.reset()`` (the PLAY callback), after the assets;
- ``data.net_forces_w`` ``(num_envs, num_bodies, 3)``, world frame, N, the force on each body.

Forces from the STUB contact model (:func:`isaacsim_testing.stub_sdk.engine.resting_contacts`: boxes
at rest carry their weight and what rests on them; ``g`` from the ``SimulationCfg``): the net force on
a body is the sum over its contacts.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import omni.usd
import torch
from isaacsim_testing.stub_sdk import lab_major
from isaacsim_testing.stub_sdk.engine import resting_contacts

from isaaclab._cfg import MISSING, cfg_class
from isaaclab.sim import SimulationContext

V2 = lab_major() == 2
ContactSensorCfg = cfg_class("ContactSensorCfg", {
    "prim_path": MISSING, "update_period": 0.0, "history_length": 0, "track_air_time": False,
    "force_threshold": 1.0, "filter_prim_paths_expr": []})


class _Data:
    def __init__(self, sensor: ContactSensor) -> None:
        self._sensor = sensor

    @property
    def net_forces_w(self):
        forces = self._sensor._forces().astype(np.float32)
        device = self._sensor.device
        if V2:
            return torch.Tensor(forces, device)
        from isaaclab.assets import _Proxy

        return _Proxy(forces, device)


class ContactSensor:
    def __init__(self, cfg: Any) -> None:
        self.cfg = cfg
        self.sim = SimulationContext.instance_
        if self.sim is None:
            raise RuntimeError("Simulation context is not initialized")
        self.sim.sensors.append(self)
        self.device = self.sim.device
        self.body_names: list[str] | None = None
        self.data = _Data(self)

    def _initialize_impl(self) -> None:
        from pxr import Usd

        stage = omni.usd.get_context().get_stage()
        parent_expr, leaf = self.cfg.prim_path.rsplit("/", 1)
        parents = sorted(str(p.GetPath()) for p in Usd.PrimRange(stage.GetPseudoRoot())
                         if re.fullmatch(parent_expr, str(p.GetPath())))  # string-sorted, as the articulation view
        if not parents:
            raise RuntimeError(f"Could not find prim with path {parent_expr}.")
        template = stage.GetPrimAtPath(parents[0])
        self.body_names = [c.GetName() for c in template.GetChildren()
                           if re.fullmatch(leaf, c.GetName()) and "PhysxContactReportAPI" in c.GetAppliedSchemas()]
        if not self.body_names:
            raise RuntimeError(f"Sensor at path '{self.cfg.prim_path}' could not find any bodies with contact reporter "
                               "API.\nHINT: Make sure to enable 'activate_contact_sensors' in the corresponding asset "
                               "spawn configuration.")
        if self.cfg.filter_prim_paths_expr and len(self.body_names) > 1:
            raise RuntimeError("contact filtering needs one sensor body per environment (many-to-one)")
        self._paths = [[f"{p}/{b}" for b in self.body_names] for p in parents]

    def _forces(self) -> np.ndarray:
        if self.body_names is None:
            raise RuntimeError("the contact sensor is not initialized: call sim.reset() first")
        net = net_contact_forces(omni.usd.get_context().get_stage(), self.sim)
        return np.array([[net.get(path, np.zeros(3)) for path in paths] for paths in self._paths])

    def update(self, dt: float, force_recompute: bool = False) -> None:
        """Isaac Lab advances the sensor's timestamps; the stub computes forces on read."""


def net_contact_forces(stage, sim) -> dict[str, np.ndarray]:
    """The net contact force on every body in contact, by prim path (world frame, N)."""
    net: dict[str, np.ndarray] = {}
    for c in resting_contacts(stage, sim, -float(sim.cfg.gravity[2])):
        net[c["body"]] = net.get(c["body"], np.zeros(3)) + c["force"]
        net[c["other"]] = net.get(c["other"], np.zeros(3)) - c["force"]
    return net
