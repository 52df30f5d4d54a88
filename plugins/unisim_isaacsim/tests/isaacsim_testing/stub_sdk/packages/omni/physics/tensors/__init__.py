"""STUB ``omni.physics.tensors``: the simulation view the worker makes itself, its rigid body views (mocap
bodies) and rigid contact views (contact pairs); torch frontend only.

Rules mirrored (omni.physics.tensors 107.3 as Isaac Lab 2.3.2 and 3.0.0 call it, e.g.
``isaaclab/sensors/contact_sensor/contact_sensor.py``):

- ``create_simulation_view(frontend)`` after PLAY (``sim.reset()``); results are tensors of the
  frontend on the simulation's device, inputs must be too;
- ``create_rigid_body_view(paths)``: rows in the order of the paths given, each a rigid body;
  ``get_transforms()`` ``(count, 7)`` ``[pos, quat xyzw]`` world; ``set_kinematic_targets(data,
  indices)``: full ``(count, 7)`` data, the indexed rows applied at the next step, kinematic bodies only;
- ``create_rigid_contact_view(sensor_paths, filter_patterns=[one list per sensor], max_contact_data_count)``:
  every sensor a rigid body with ``PhysxContactReportAPI`` (Isaac Lab's ``ContactSensor`` checks it),
  every filter list of one length (``filter_count``), each entry a rigid body or collider on the stage;
  ``get_net_contact_forces(dt)`` ``(S, 3)``, ``get_contact_force_matrix(dt)`` ``(S, F, 3)`` (the force on
  the sensor), ``get_contact_data(dt)``: normal force magnitudes ``(K, 1)``, points ``(K, 3)``, normals
  ``(K, 3)``, separations ``(K, 1)``, per-pair counts and start indices ``(S, F)``, at most
  ``max_contact_data_count`` points (the rest dropped).

Forces come from the STUB contact model (:func:`isaacsim_testing.stub_sdk.engine.resting_contacts`).
Its normals point up, the way the upper body of a pair is pushed: the orientation of PhysX's normals
is not something the worker relies on (it orients each pair's by the force matrix).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from isaaclab.sim import SimulationContext
from isaacsim_testing.stub_sdk.engine import STUB, resting_contacts

import omni.usd


def create_simulation_view(frontend: str) -> SimulationView:
    if frontend != "torch":
        raise NotImplementedError(f"{STUB}: only the torch frontend is modelled, got {frontend!r}")
    sim = SimulationContext.instance_
    if sim is None or sim.kinematic is None:
        raise RuntimeError("the physics simulation view is invalid before the simulation starts (sim.reset())")
    return SimulationView(sim)


class SimulationView:
    def __init__(self, sim: Any) -> None:
        self._sim, self.device = sim, sim.device
        self.roots = None

    def set_subspace_roots(self, root: str) -> None:
        self.roots = root

    def _out(self, array: np.ndarray) -> torch.Tensor:
        return torch.Tensor(np.asarray(array, dtype=np.float32), self.device)

    def _in(self, t: Any, what: str) -> np.ndarray:
        if not isinstance(t, torch.Tensor) or t.device != self.device:
            raise TypeError(f"{what}: expected a torch tensor on {self.device}")
        return np.asarray(t.array)

    def create_rigid_body_view(self, paths: list[str]) -> RigidBodyView:
        return RigidBodyView(self, list(paths))

    def create_rigid_contact_view(self, sensor_paths: list[str], filter_patterns: list[list[str]] | None = None,
                                  max_contact_data_count: int = 0) -> RigidContactView:
        return RigidContactView(self, list(sensor_paths), [list(f) for f in filter_patterns or []],
                                int(max_contact_data_count))


class RigidBodyView:
    def __init__(self, sim_view: SimulationView, paths: list[str]) -> None:
        kin = sim_view._sim.kinematic
        missing = [p for p in paths if p not in kin.paths]
        if missing:
            raise NotImplementedError(f"{STUB}: rigid body view over {missing}: only kinematic bodies are modelled")
        self._view, self._kin = sim_view, kin
        self._rows = [kin.paths.index(p) for p in paths]
        self.prim_paths, self.count = list(paths), len(paths)

    def get_transforms(self) -> torch.Tensor:
        return self._view._out(self._kin.pose[self._rows])

    def set_kinematic_targets(self, data: Any, indices: Any) -> None:
        values = self._view._in(data, "data").astype(np.float64)
        idx = self._view._in(indices, "indices").astype(np.int64)
        if values.shape != (self.count, 7):
            raise ValueError(f"set_kinematic_targets: data must be ({self.count}, 7), got {values.shape}")
        for i in idx:
            self._kin.targets[self._rows[int(i)]] = values[int(i)]


class RigidContactView:
    def __init__(self, sim_view: SimulationView, sensors: list[str], filters: list[list[str]], capacity: int) -> None:
        from pxr import UsdPhysics

        stage = omni.usd.get_context().get_stage()
        for path in sensors:
            prim = stage.GetPrimAtPath(path)
            if not prim or not prim.HasAPI(UsdPhysics.RigidBodyAPI) or \
                    "PhysxContactReportAPI" not in prim.GetAppliedSchemas():
                raise RuntimeError(f"rigid contact view: sensor {path!r} is no rigid body with PhysxContactReportAPI")
        if filters and (len(filters) != len(sensors) or len({len(f) for f in filters}) != 1):
            raise RuntimeError("rigid contact view: one filter list per sensor, all of one length")
        for path in (p for f in filters for p in f):
            prim = stage.GetPrimAtPath(path)
            if not prim or not (prim.HasAPI(UsdPhysics.RigidBodyAPI) or prim.HasAPI(UsdPhysics.CollisionAPI)):
                raise RuntimeError(f"rigid contact view: filter {path!r} did not match a rigid body or collider")
        self._view, self._filters = sim_view, filters
        self.sensor_paths, self.sensor_count = sensors, len(sensors)
        self.filter_count = len(filters[0]) if filters else 0
        self.max_contact_data_count = capacity

    def _contacts(self, dt: float) -> list[dict[str, Any]]:
        if not dt > 0:
            raise ValueError(f"dt must be positive, got {dt}")
        sim = self._view._sim
        return resting_contacts(omni.usd.get_context().get_stage(), sim, -float(sim.cfg.gravity[2]))

    def _pairs(self, dt: float):
        """Per (sensor, filter): the contacts between them, each as (sign of its force on the sensor, contact)."""
        contacts = self._contacts(dt)
        for s, sensor in enumerate(self.sensor_paths):
            for f, other in enumerate(self._filters[s] if self._filters else []):
                yield s, f, [(1.0 if c["body"] == sensor else -1.0, c) for c in contacts
                             if {c["body"], c["other"]} == {sensor, other}]

    def get_net_contact_forces(self, dt: float) -> torch.Tensor:
        out = np.zeros((self.sensor_count, 3))
        for c in self._contacts(dt):
            for s, sensor in enumerate(self.sensor_paths):
                out[s] += c["force"] if c["body"] == sensor else -c["force"] if c["other"] == sensor else 0.0
        return self._view._out(out)

    def get_contact_force_matrix(self, dt: float) -> torch.Tensor:
        out = np.zeros((self.sensor_count, self.filter_count, 3))
        for s, f, pairs in self._pairs(dt):
            for sign, c in pairs:
                out[s, f] += sign * c["force"]
        return self._view._out(out)

    def get_contact_data(self, dt: float) -> tuple[torch.Tensor, ...]:
        forces, points, normals = [], [], []
        counts = np.zeros((self.sensor_count, self.filter_count), dtype=np.uint32)
        starts = np.zeros_like(counts)
        for s, f, pairs in self._pairs(dt):
            starts[s, f] = len(forces)
            for _, c in pairs:
                for p, share in zip(c["points"], c["shares"]):
                    if len(forces) < self.max_contact_data_count:
                        forces.append([share * np.linalg.norm(c["force"])])
                        points.append(p)
                        normals.append([0.0, 0.0, 1.0])
            counts[s, f] = len(forces) - starts[s, f]
        K = max(len(forces), 1)
        pad = lambda rows, w: np.array(rows + [[0.0] * w] * (K - len(rows)))  # noqa: E731
        out, dev = self._view._out, self._view.device
        return (out(pad(forces, 1)), out(pad(points, 3)), out(pad(normals, 3)), out(np.zeros((K, 1))),
                torch.Tensor(counts, dev), torch.Tensor(starts, dev))
