"""UniLab's backend surface (``unisim.backend.base.SimBackend`` of ``unisim-core`` 2.2, the seed
contract UniLab 1.5 consumes) over any UniSim backend.

The UniSim backend does the physics and keeps the contract's conventions (MuJoCo layout, wxyz,
world-frame ``*_w``); this class speaks UniLab's names and records:

- tensor lifecycle ``HOST_BRIDGE`` (in process): UniSim's numpy state is authoritative; torch
  tensors cross at four measured boundaries (control in, state and sensors out, reset in,
  selected state out) through :class:`HostBridgePlan`, on the CPU or a CUDA device;
- resets: ``set_state_tensor`` (rows) and ``set_state_tensor_mask`` (a fixed-width mask: one
  ``set_state`` of the true rows, ``unisim_core.contract.torch_views.set_state_masked``), UniLab's packed
  reset transaction (``bind_packed_reset``) on top, with UniLab's reset terms mapped onto UniSim's
  reset randomization (``kp`` -> ``actuator_kp``, ...);
- sensors sampled as UniLab's MuJoCo backend samples them (``sensor_timing="last_substep"``, the
  default here; ``"after_step"`` is the contract's) through ``unisim_core.contract.sensor_timing``, plus
  UniLab's synthetic ``track_{pos,quat,linvel,angvel}_w_<body>`` sensors from the body getters.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from unisim.backend.base import (
    PlayCapabilities,
    PublicStateWidths,
    RootStateLayout,
    SelectedResetPublication,
    SensorView,
    TensorDataPlane,
    TensorExecution,
    TensorIOSpec,
    TensorLifecycleCapabilities,
    TensorProcessTopology,
)
from unisim.backend.base import SimBackend as UniLabSimBackend
from unisim.dr.types import DomainRandomizationCapabilities

from unisim_core import RandomizationOp, ResetRandomizationPayload
from unisim_core.contract.sensor_timing import SensorClock
from unisim_core.contract.torch_views import to_numpy, torch_module
from unisim_core.plugin.derived_sensors import DerivedSensors

__all__ = ["UniLabBackend", "RESET_TERMS"]

#: UniLab reset term -> (UniSim reset term, its id space or None when global).
RESET_TERMS: Mapping[str, tuple[str, str | None]] = {
    "kp": ("actuator_kp", "actuator"),
    "kd": ("actuator_kd", "actuator"),
    "gravity": ("gravity", None),
    "body_mass": ("body_mass", "body"),
    "geom_friction": ("geom_friction", "geom"),
}
#: UniLab's synthetic world-frame body sensors: prefix -> (getter, width).
_BODY_SENSORS = {"track_pos_w_": ("get_body_pos_w", 3), "track_quat_w_": ("get_body_quat_w", 4),
                 "track_linvel_w_": ("get_body_lin_vel_w", 3), "track_angvel_w_": ("get_body_ang_vel_w", 3)}
_STATE_FIELDS = frozenset({"qpos", "qvel", "ctrl"})


class UniLabBackend(UniLabSimBackend):
    """``backend_type`` ``"unisim-<engine>"``: UniLab's backend over the UniSim backend ``sim``."""

    def __init__(self, sim, *, sensor_timing: str = "last_substep", derived=(), scene_copy: str | None = None) -> None:
        self.sim = sim
        self.backend_type = f"unisim-{sim.name or type(sim).__name__}"
        self._clock = SensorClock(sim, sensor_timing)
        self._derived = DerivedSensors(sim, derived)
        self._scene_copy = scene_copy  # the rewritten scene the engine loaded (derived sensors), removed at close
        self._ctrl = np.zeros((sim.num_envs, sim.num_actuators), dtype=np.float32)
        self._scene_cleanup_handle = None
        self._play_capabilities = PlayCapabilities()
        terms = {u for u, (ours, _) in RESET_TERMS.items() if ours in sim.get_dr_capabilities().reset_terms}
        self._reset_terms = frozenset(terms)

    # ------------------------------------------------------------------ sizes and model tables
    @property
    def num_envs(self) -> int:
        return self.sim.num_envs

    @property
    def num_actuators(self) -> int:
        return self.sim.num_actuators

    @property
    def num_dof_vel(self) -> int:
        return self.sim.nv

    @property
    def model(self) -> Any:
        return self.sim.model_info

    def get_actuator_ctrl_range(self) -> np.ndarray:
        return self.sim.get_actuator_ctrl_range()

    def get_actuator_names(self) -> tuple[str, ...]:
        return tuple(self.sim.get_actuator_names())

    def get_actuator_joint_names(self) -> tuple[str, ...]:
        return tuple(self.sim.get_actuator_joint_names())

    def get_body_ids(self, names: Sequence[str]) -> np.ndarray:
        return np.asarray(self.sim.get_body_ids(tuple(names)), dtype=np.int32)

    def get_joint_dof_pos_indices(self, names: Sequence[str]) -> np.ndarray:
        return self.sim.get_joint_dof_pos_indices(tuple(names))

    def get_joint_dof_vel_indices(self, names: Sequence[str]) -> np.ndarray:
        return self.sim.get_joint_dof_vel_indices(tuple(names))

    def get_joint_state_qpos_indices(self, names: Sequence[str]) -> np.ndarray:
        return self.sim.get_joint_state_qpos_indices(tuple(names))

    def get_joint_state_qvel_indices(self, names: Sequence[str]) -> np.ndarray:
        return self.sim.get_joint_state_qvel_indices(tuple(names))

    def get_joint_range(self, *, names: Sequence[str] | None = None) -> np.ndarray:
        return self.sim.get_joint_range(None if names is None else tuple(names))

    def get_keyframe_qpos(self, name: str) -> np.ndarray:
        return self.sim.get_keyframe_qpos(name)

    def get_default_qpos(self) -> np.ndarray:
        return self.sim.get_default_qpos()

    def get_default_dof_pos(self) -> np.ndarray:
        return self.sim.get_default_dof_pos()

    def get_init_qvel(self) -> np.ndarray:
        return self.sim.get_init_qvel()

    def get_root_state_layout(self, root_body_name: str) -> RootStateLayout:
        layout = self.sim.get_root_state_layout(root_body_name)
        return RootStateLayout(qpos_indices=layout.qpos_indices, qvel_indices=layout.qvel_indices)

    def get_gravity(self) -> np.ndarray:
        return self.sim.get_gravity()

    def get_body_mass(self) -> np.ndarray:
        return self.sim.get_body_mass()

    def get_geom_friction(self) -> np.ndarray:
        return self.sim.get_geom_friction()

    def get_scene_visual_model_file(self) -> str | None:
        return self.sim.scene.visual_model_file

    def get_scene_model_file(self) -> str | None:
        return self.sim.scene.model_file

    def get_play_capabilities(self) -> PlayCapabilities:
        return self._play_capabilities

    def materialize(self) -> None:
        """The UniSim backend is complete once constructed."""

    def cleanup_scene_assets(self) -> None:
        self.sim.cleanup_scene_assets()

    def close(self) -> None:
        self.sim.close()
        if self._scene_copy is not None and os.path.exists(self._scene_copy):
            os.unlink(self._scene_copy)

    def __del__(self) -> None:  # UniLab's base closes scene assets here; the UniSim backend owns its own
        pass

    # ------------------------------------------------------------------ randomization
    def get_dr_capabilities(self) -> DomainRandomizationCapabilities:
        return DomainRandomizationCapabilities(supported_reset_terms=self._reset_terms,
                                               supported_device_reset_terms=self._reset_terms)

    def get_reset_term_default(self, term: str) -> np.ndarray:
        if term not in self._reset_terms:
            raise NotImplementedError(f"{self.backend_type} does not support reset term {term!r}; "
                                      f"supported: {sorted(self._reset_terms)}")
        kp, kd = self.sim.get_actuator_gains()
        tables = {"kp": kp, "kd": kd, "gravity": self.sim.get_gravity(), "body_mass": self.sim.get_body_mass(),
                  "geom_friction": self.sim.get_geom_friction()}
        return np.array(tables[term], dtype=np.float32)

    def _payload(self, env_ids: np.ndarray, randomization) -> ResetRandomizationPayload | None:
        """UniLab's ``TensorResetRandomizationPayload`` (rows of ``env_ids``) as UniSim reset ops."""
        if randomization is None:
            return None
        counts = {"actuator": self.sim.num_actuators, "body": self.sim.num_bodies,
                  "geom": len(self.sim.model_info.geom_names)}
        ops = []
        for term in RESET_TERMS | {"base_mass_delta": None, "base_com_offset": None}:
            value = getattr(randomization, term, None)
            if value is None:
                continue
            if term not in self._reset_terms:
                raise NotImplementedError(f"{self.backend_type} does not support reset term {term!r}; "
                                          f"supported: {sorted(self._reset_terms)}")
            ours, target = RESET_TERMS[term]
            values = to_numpy(term, value).astype(np.float64)
            ops.append(RandomizationOp(term=ours, values=values, env_ids=env_ids,
                                       target_ids=None if target is None else np.arange(counts[target])))
        return ResetRandomizationPayload(ops) if ops else None

    # ------------------------------------------------------------------ tensor lifecycle
    def get_tensor_execution(self) -> TensorExecution:
        return TensorExecution.HOST_BRIDGE

    def get_tensor_capabilities(self) -> TensorLifecycleCapabilities:
        torch = torch_module()
        devices = ("cpu", "cuda") if torch.cuda.is_available() else ("cpu",)
        packed = bool(self._reset_terms)
        return TensorLifecycleCapabilities(
            execution=TensorExecution.HOST_BRIDGE, state_views=True, state_fields=_STATE_FIELDS, sensor_views=True,
            stepping=True, selected_reset=True, reset_randomization=packed, device_reset_randomization=packed,
            packed_reset=packed, packed_reset_fields=self._reset_terms, packed_host_bridge=True,
            process_topology=TensorProcessTopology.IN_PROCESS, data_plane=TensorDataPlane.HOST_BRIDGE,
            stream_event_ownership="synchronous host bridge: every transfer completes before the call returns",
            torch_devices=devices, selected_reset_publication=SelectedResetPublication.AUTHORITATIVE_VIEWS,
            mask_selected_reset=True)

    def get_public_state_widths(self) -> PublicStateWidths:
        return PublicStateWidths(nq=self.sim.nq, nv=self.sim.nv)

    def _host_state(self, field: str) -> np.ndarray:
        if field == "ctrl":
            return self._ctrl
        if field in ("qpos", "qvel"):
            return getattr(self.sim, f"get_{field}")()
        raise KeyError(f"{self.backend_type}: unknown tensor state field {field!r}; known: {sorted(_STATE_FIELDS)}")

    def get_state_views(self, fields: tuple[str, ...] | str | None = None, device: Any | None = None) -> dict:
        torch = torch_module()
        names = ("qpos", "qvel") if fields is None else ((fields,) if isinstance(fields, str) else tuple(fields))
        target = torch.device("cpu" if device is None else device)
        return {f: torch.from_numpy(np.array(self._host_state(f), dtype=np.float32)).to(target) for f in names}

    def sensor_widths(self, names: Sequence[str]) -> tuple[int, ...]:
        """Flattened width of each named sensor (UniLab's synthetic body sensors included)."""
        return tuple(self._sensor_part(n)[1] for n in names)

    def _sensor_part(self, name: str) -> tuple[Any, int]:
        for prefix, (getter, width) in _BODY_SENSORS.items():
            if name.startswith(prefix):
                body = self.sim.get_body_ids((name[len(prefix):],))
                return (getter, body), width
        if name in self._derived.widths:
            return "derived", self._derived.widths[name]
        dims = dict(zip(self.sim.model_info.sensor_names, self.sim.model_info.sensor_dims))
        if name not in dims:
            self.sim.get_sensor_data(name)  # the contract's error naming the sensor and the known ones
        return None, int(dims[name])

    def read_sensors(self, names: Sequence[str]) -> np.ndarray:
        """``(num_envs, total width)`` float32: the named sensors under the backend's sensor timing."""
        parts = []
        for name in names:
            source, _ = self._sensor_part(name)
            if source is None:
                parts.append(self._clock.read((name,)))
            elif source == "derived":
                parts.append(self._derived.read((name,), native=self._clock.read))
            else:
                getter, body = source
                parts.append(getattr(self.sim, getter)(body)[:, 0])
        if not parts:
            return np.zeros((self.num_envs, 0), dtype=np.float32)
        return np.concatenate(parts, axis=1).astype(np.float32, copy=False)

    def get_sensor_names(self) -> tuple[str, ...]:
        native = [n for n in self.sim.model_info.sensor_names if n not in self._derived.widths]
        return (*native, *self._derived.names)

    def get_sensor_view(self, name: str, device: Any | None = None) -> Any:
        torch = torch_module()
        return torch.from_numpy(self.read_sensors((name,))).to(torch.device("cpu" if device is None else device))

    def bind_sensor_data(self, names: Sequence[str]) -> SensorView:
        names = tuple(names)
        return SensorView(backend_type=self.backend_type, names=names, dimensions=self.sensor_widths(names),
                          num_envs=self.num_envs, _reader=lambda: self.read_sensors(names))

    def bind_host_bridge_io(self, spec: TensorIOSpec):
        from ._bridge import HostBridgePlan

        return HostBridgePlan(self, spec)

    def bind_packed_reset(self, *, device: Any | None = None) -> Any:
        from unisim.backend.packed_reset import PackedResetTransaction

        return PackedResetTransaction(self, device=device)

    # ------------------------------------------------------------------ stepping and resets (host plane)
    def host_step(self, ctrl: np.ndarray, nsteps: int) -> dict:
        """Hold ``ctrl (num_envs, num_actuators)`` over ``nsteps`` substeps; ``{"timing": {...}}`` ms."""
        started = time.perf_counter()
        self._ctrl[...] = ctrl
        self._clock.step(self._ctrl, nsteps)
        return {"timing": {"physics_step_ms": (time.perf_counter() - started) * 1000.0}}

    def host_set_state(self, env_ids: np.ndarray, qpos: np.ndarray, qvel: np.ndarray, randomization=None) -> dict:
        """Write rows ``env_ids`` (UniLab's reset payload applied to them)."""
        started = time.perf_counter()
        env_ids = np.asarray(env_ids, dtype=np.int64)
        self._clock.set_state(env_ids, np.asarray(qpos, np.float64), np.asarray(qvel, np.float64),
                              self._payload(env_ids, randomization))
        return {"timing": {"set_state_ms": (time.perf_counter() - started) * 1000.0}}

    def step_tensor(self, ctrl: Any, nsteps: int = 1) -> dict | None:
        return self.host_step(to_numpy("ctrl", ctrl), nsteps)

    def set_state_tensor(self, env_indices: Any, qpos: Any, qvel: Any, randomization=None) -> dict | None:
        rows = to_numpy("env_indices", env_indices).astype(np.int64)
        return self.host_set_state(rows, to_numpy("qpos", qpos), to_numpy("qvel", qvel), randomization)

    def set_state_tensor_mask(self, reset_mask: Any, qpos: Any, qvel: Any, randomization=None, *,
                              full_refresh: bool = False) -> dict | None:
        if full_refresh:
            raise NotImplementedError(f"{self.backend_type} does not declare mask_selected_reset_full_refresh")
        mask = to_numpy("reset_mask", reset_mask)
        rows = np.flatnonzero(mask)
        if randomization is not None:  # full-width tables: the true rows are the payload
            torch = torch_module()
            index = torch.as_tensor(rows)
            randomization = type(randomization)(**{
                f: (None if getattr(randomization, f) is None else getattr(randomization, f).cpu()[index])
                for f in randomization.__dataclass_fields__})
        qpos, qvel = to_numpy("qpos", qpos), to_numpy("qvel", qvel)
        return self.host_set_state(rows, qpos[rows], qvel[rows], randomization)
