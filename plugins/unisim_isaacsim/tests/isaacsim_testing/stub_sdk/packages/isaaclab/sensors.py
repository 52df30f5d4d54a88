"""STUB ``isaaclab.sensors``: ``ContactSensor`` / ``ContactSensorCfg`` (the names in Isaac Lab 2.3.2
and 3.0.0; ``data.net_forces_w`` a torch tensor in 2.3, read through ``.torch`` in 3.0).

Rules mirrored (Isaac Lab 2.3.2 ``isaaclab/sensors/contact_sensor/contact_sensor.py``):

- the sensor bodies are the prims matching the last element of ``prim_path`` below the first
  matching parent that carry ``PhysxContactReportAPI``; none is a ``RuntimeError`` naming
  ``activate_contact_sensors``; filters (``filter_prim_paths_expr``) need one body per env;
- it initializes at ``sim.reset()`` (the PLAY callback), after the assets;
- ``data.net_forces_w`` ``(num_envs, num_bodies, 3)``, world frame, N, the force on each body.

STUB contact model (not PhysX): a body at rest on its env's ground plane z = 0 receives
``(0, 0, m g)``, any other ``(0, 0, 0)``. At rest: its lowest point (its link height above the
env origin minus the half height of its box colliders, the importer's Cube ``size``) within 1 mm
of z = 0. ``m`` from the body's ``MassAPI``, ``g`` from the ``SimulationCfg``.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import omni.usd
import torch
from isaacsim_testing.stub_sdk import lab_major

from isaaclab._cfg import MISSING, cfg_class
from isaaclab.sim import SimulationContext

V2 = lab_major() == 2
ContactSensorCfg = cfg_class("ContactSensorCfg", {
    "prim_path": MISSING, "update_period": 0.0, "history_length": 0, "track_air_time": False,
    "force_threshold": 1.0, "filter_prim_paths_expr": []})
#: Height above the ground within which a body's lowest point rests on it (m).
REST_TOLERANCE = 1e-3


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
        from pxr import Usd, UsdGeom, UsdPhysics

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
        cache = UsdGeom.XformCache()
        self._paths = [[f"{p}/{b}" for b in self.body_names] for p in parents]
        self._mass = np.array([stage.GetPrimAtPath(f"{parents[0]}/{b}").GetAttribute("physics:mass").Get() or 0.0
                               for b in self.body_names])
        self._half = np.array([max([c.GetAttribute("size").Get() / 2.0 for c in Usd.PrimRange(
            stage.GetPrimAtPath(f"{parents[0]}/{b}"), Usd.TraverseInstanceProxies())
            if c.HasAPI(UsdPhysics.CollisionAPI) and c.GetAttribute("size").HasAuthoredValue()] or [np.inf])
            for b in self.body_names])  # no box collider: never at rest on the ground
        env = [stage.GetPrimAtPath(p[:p.index(_env_of(p))] + _env_of(p)) for p in parents]
        self._origin_z = np.array([cache.GetLocalToWorldTransform(e).ExtractTranslation()[2] for e in env])

    def _forces(self) -> np.ndarray:
        if self.body_names is None:
            raise RuntimeError("the contact sensor is not initialized: call sim.reset() first")
        view = next(a._view for a in self.sim.assets)
        index = {p: i for i, p in enumerate(view.model.link_paths)}
        row_of = {_env_of(r): i for i, r in enumerate(view.prim_paths)}
        rows = [row_of[_env_of(paths[0])] for paths in self._paths]
        cols = [index.get(p) for p in self._paths[0]]
        z = np.array([[view.link_pose[r, c, 2] if c is not None else np.inf for c in cols] for r in rows])
        low = z - self._origin_z[:, None] - self._half[None, :]
        out = np.zeros((len(self._paths), len(self.body_names), 3))
        g = -float(self.sim.cfg.gravity[2])
        out[..., 2] = np.where(np.abs(low) <= REST_TOLERANCE, self._mass[None, :] * g, 0.0)
        return out

    def update(self, dt: float, force_recompute: bool = False) -> None:
        """Isaac Lab advances the sensor's timestamps; the stub computes forces on read."""


def _env_of(path: str) -> str:
    """The ``env_<k>`` element of a prim path."""
    return next(part for part in path.split("/") if part.startswith("env_"))
