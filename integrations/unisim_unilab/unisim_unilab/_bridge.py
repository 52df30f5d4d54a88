"""UniLab's host-bridge transfer plan over a UniSim backend: one packed float32 row per env holding the
requested state fields, then sensors, then body poses (UniLab's ``TensorIOSpec`` order), filled from the
UniSim getters and copied to the plan's torch device in one transfer."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np
from unisim.backend.base import HostBodyPoseViews, HostBridgeTransferPlan, TensorIOSpec
from unisim.backend.body_pose_packet import (
    body_pose_packet_views,
    compile_body_pose_packet_block,
    pack_body_pose_packet_block,
    validate_known_body_names,
)

from unisim_core.contract.torch_views import to_numpy, torch_module

__all__ = ["HostBridgePlan"]


class HostBridgePlan(HostBridgeTransferPlan):
    """``spec``'s packet on ``spec.device`` (CPU when ``None``) for the ``UniLabBackend`` ``owner``."""

    def __init__(self, owner, spec: TensorIOSpec) -> None:
        torch = torch_module()
        self._owner, self._spec, self._torch = owner, spec, torch
        self.last_timing: dict[str, float] = {}
        self._stats = {"d2h_count": 0, "h2d_count": 0, "d2h_bytes": 0, "h2d_bytes": 0, "synchronization_count": 0}
        self.device = torch.device("cpu" if spec.device is None else spec.device)
        unknown = set(spec.state_fields) - {"qpos", "qvel", "ctrl"}
        if unknown:
            raise ValueError(f"{owner.backend_type} packed state I/O supports qpos, qvel and ctrl; "
                             f"got {sorted(unknown)}")
        widths = {"qpos": owner.sim.nq, "qvel": owner.sim.nv, "ctrl": owner.num_actuators}
        self._widths = {f: widths[f] for f in spec.state_fields}
        self._widths.update(zip(spec.sensor_names, owner.sensor_widths(spec.sensor_names)))
        self._offsets, cursor = {}, 0
        for name, width in self._widths.items():
            self._offsets[name] = cursor
            cursor += width
        self._body = compile_body_pose_packet_block(spec, owner=owner.backend_type)
        if self._body is not None:
            validate_known_body_names(self._body.body_names, owner.sim.model_info.body_names, owner=owner.backend_type)
            self._body_ids = owner.sim.get_body_ids(self._body.body_names)
            self._offsets.update({k: cursor + v for k, v in self._body.offsets.items()})
            cursor += self._body.row_width
        self._host = np.zeros((owner.num_envs, cursor), dtype=np.float32)
        self._packet = torch.zeros((owner.num_envs, cursor), dtype=torch.float32, device=self.device)
        self._ctrl: np.ndarray | None = None
        self._closed = False
        self._publish("state")

    @property
    def spec(self) -> TensorIOSpec:
        return self._spec

    @property
    def transfer_stats(self) -> dict[str, int]:
        return dict(self._stats)

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"{self._owner.backend_type} host-bridge plan is closed")

    def _record(self, direction: str, label: str, nbytes: int, started: float) -> None:
        self._stats[f"{direction}_count"] += 1
        self._stats[f"{direction}_bytes"] += int(nbytes)
        if self.device.type == "cuda":
            self._stats["synchronization_count"] += 1
        self.last_timing[f"tensor_{label}_packed_{direction}_ms"] = (time.perf_counter() - started) * 1000.0

    def _pack(self) -> None:
        owner, host = self._owner, self._host
        for field in self._spec.state_fields:
            host[:, self._offsets[field]:self._offsets[field] + self._widths[field]] = owner._host_state(field)
        if self._spec.sensor_names:
            start = self._offsets[self._spec.sensor_names[0]]
            values = owner.read_sensors(self._spec.sensor_names)
            host[:, start:start + values.shape[1]] = values
        if self._body is not None:
            base = min(self._offsets[n] for n in self._body.packet_names)
            pack_body_pose_packet_block(host[:, base:], self._body, self._body_poses, None)

    def _body_poses(self, rows) -> tuple[np.ndarray, np.ndarray]:
        return self._owner.sim.get_body_pos_w(self._body_ids), self._owner.sim.get_body_quat_w(self._body_ids)

    def _publish(self, label: str) -> None:
        started = time.perf_counter()
        self._pack()
        self._packet.copy_(self._torch.from_numpy(self._host))
        if self.device.type == "cuda":
            self._torch.cuda.synchronize(self.device)
        self._record("h2d", label, self._host.nbytes, started)

    def _views(self) -> dict[str, Any]:
        views = {n: self._packet[:, self._offsets[n]:self._offsets[n] + w] for n, w in self._widths.items()}
        if self._body is not None:
            count = len(self._body.body_names)
            for field, name in zip(self._body.body_fields, self._body.packet_names):
                width = {"pos_w": 3, "quat_w": 4}[field] * count
                views[name] = self._packet[:, self._offsets[name]:self._offsets[name] + width]
        return views

    def get_body_pose_views(self) -> HostBodyPoseViews:
        self._check_open()
        if self._body is None:
            raise RuntimeError(f"{self._owner.backend_type} host-bridge plan did not request body poses")
        base = min(self._offsets[n] for n in self._body.packet_names)
        return body_pose_packet_views(self._packet[:, base:], self._body, owner=self._owner.backend_type)

    def write_control(self, ctrl: Any) -> None:
        self._check_open()
        self.last_timing = {}
        started = time.perf_counter()
        expected = (self._owner.num_envs, self._owner.num_actuators)
        if tuple(ctrl.shape) != expected:
            raise ValueError(f"{self._owner.backend_type} packed ctrl must have shape {expected}, "
                             f"got {tuple(ctrl.shape)}")
        self._ctrl = to_numpy("ctrl", ctrl)
        self._record("d2h", "control", self._ctrl.nbytes, started)

    def step(self, nsteps: int = 1) -> dict | None:
        self._check_open()
        if self._ctrl is None:
            raise RuntimeError("write_control() must complete before packed step()")
        ctrl, self._ctrl = self._ctrl, None
        result = self._owner.host_step(ctrl, nsteps)
        result["timing"].update(self.last_timing)
        return result

    def read_state_sensors(self) -> Mapping[str, Any]:
        self._check_open()
        self.last_timing = {}
        self._publish("state")
        return self._views()

    def apply_reset(self, env_indices: Any, qpos: Any, qvel: Any, randomization: Any | None = None) -> dict | None:
        self._check_open()
        self.last_timing = {}
        started = time.perf_counter()
        rows = to_numpy("env_indices", env_indices).astype(np.int64)
        qpos, qvel = to_numpy("qpos", qpos), to_numpy("qvel", qvel)
        self._record("d2h", "reset", rows.nbytes + qpos.nbytes + qvel.nbytes, started)
        if not len(rows):
            return {"timing": dict(self.last_timing)}
        result = self._owner.host_set_state(rows, qpos, qvel, randomization)
        result["timing"].update(self.last_timing)
        return result

    def read_selected_state_sensors(self) -> Mapping[str, Any]:
        self._check_open()
        self._publish("selected")  # the whole packet: rows that were not reset read as before
        return self._views()

    def close(self) -> None:
        self._closed = True
