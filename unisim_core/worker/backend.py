"""``WorkerBackend``: any registered backend, hosted in its own worker process.

``create_backend(name, ..., isolation="subprocess")`` returns one. The host validates
every input (the base class), forwards primitives over the worker channel, and reads
hot-path state from shared memory refreshed by the worker after each ``step`` and
``set_state``. Capabilities are the inner backend's, less those whose objects cannot
cross a process boundary (interactive ``render``, height scanners, terrain samplers,
mocap bindings). Errors the inner backend raises for bad input come back as the same
UniSim error class; any other failure poisons the backend (see ``WorkerClient``).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ..backend import SimBackend
from ..capabilities import Capability
from ..config import CameraCfg, SceneCfg
from ..model import ModelInfo
from ..registry import load_object
from .client import WorkerClient
from .errors import WorkerCallError
from .hosted import info_from_plain, pack_array, scene_to_plain, unpack_array

__all__ = ["WorkerBackend", "NOT_FORWARDED"]

#: Capabilities whose results are live objects that stay in the worker.
NOT_FORWARDED = frozenset({Capability.RENDER, Capability.HEIGHT_SCAN, Capability.TERRAIN, Capability.MOCAP})
INIT_TIMEOUT_S = 300.0
CALL_TIMEOUT_S = 60.0


def _remote_error(exc: WorkerCallError) -> BaseException:
    """Re-raise a UniSim or builtin input error from the worker as its own class."""
    name = exc.remote_type
    module, _, qualname = name.rpartition(".")
    if module.startswith("unisim_core.") or not module:
        try:
            cls = load_object(f"{module or 'builtins'}:{qualname}")
        except (ImportError, AttributeError):
            return exc
        if isinstance(cls, type) and issubclass(cls, ValueError | TypeError | KeyError | NotImplementedError):
            err = cls.__new__(cls)
            Exception.__init__(err, exc.remote_message)
            return err
    return exc


class WorkerBackend(SimBackend):
    """A backend running in a worker process (same contract, same results)."""

    CAPABILITIES = frozenset(Capability) - NOT_FORWARDED

    def __init__(self, scene: SceneCfg, num_envs: int, sim_dt: float, *, target: str, target_cls: type[SimBackend],
                 **options: Any) -> None:
        self.name = target_cls.name or target
        self.version = target_cls.version
        self.options_cls = target_cls.options_cls
        super().__init__(scene, num_envs, sim_dt, **options)
        self._fresh: set[str] = set()  # lazily published tables valid for the current state
        plain = {k: (np.dtype(v).name if k == "np_dtype" else v) for k, v in options.items()}
        self._client = WorkerClient(
            [sys.executable, "-m", "unisim_core.worker", "unisim_core.worker.hosted:factory"],
            init_args={"target": target, "scene": scene_to_plain(scene), "num_envs": num_envs, "sim_dt": sim_dt,
                       "options": plain},
            init_timeout=INIT_TIMEOUT_S, call_timeout=CALL_TIMEOUT_S,
        )
        desc = self._call("describe")
        self._remote_info = info_from_plain(desc["info"])
        self._caps = frozenset(Capability(c) for c in desc["capabilities"]) - NOT_FORWARDED
        self.INIT_TERMS = frozenset(desc["init_terms"])
        self.INTERVAL_TERMS = frozenset(desc["interval_terms"])
        self.RESET_TERMS = frozenset(desc["reset_terms"])
        info, n = self._remote_info, num_envs
        nbody, dtype = len(info.body_names), np.dtype(desc["np_dtype"])
        slots = self._client.slots
        self._ctrl = slots.add("ctrl", (n, len(info.actuator_names)), dtype)
        self._in_qpos = slots.add("in_qpos", (n, info.nq), np.float64)
        self._in_qvel = slots.add("in_qvel", (n, info.nv), np.float64)
        self._qpos = slots.add("qpos", (n, info.nq), dtype)
        self._qvel = slots.add("qvel", (n, info.nv), dtype)
        self._xpos = slots.add("xpos", (n, nbody, 3), dtype)
        self._xquat = slots.add("xquat", (n, nbody, 4), dtype)
        self._linvel = slots.add("linvel", (n, nbody, 3), dtype)
        self._angvel = slots.add("angvel", (n, nbody, 3), dtype)
        self._sensordata = slots.add("sensordata", (n, max(1, int(info.sensor_dims.sum()))), dtype)
        self._call("attach", descriptors=slots.descriptors)

    def _call(self, op: str, **args: Any) -> Any:
        if op not in ("bodies", "sensors"):
            self._fresh.clear()  # any other op may change the state
        try:
            return self._client.request(op, args)
        except WorkerCallError as exc:
            raise _remote_error(exc) from exc

    @property
    def capabilities(self) -> frozenset[Capability]:
        return self._caps

    @property
    def worker_pid(self) -> int:
        return self._client.pid

    def _close(self) -> None:
        try:
            if self._client.faulted is None:
                self._call("close")
        finally:
            self._client.close()

    # primitives ------------------------------------------------------------------------
    def _load_model_info(self) -> ModelInfo:
        return self._remote_info

    def _step(self, ctrl: np.ndarray, nsteps: int) -> None:
        self._ctrl[...] = ctrl
        self._call("step", nsteps=nsteps)

    def _set_state(self, env_ids: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> None:
        k = len(env_ids)
        self._in_qpos[:k] = qpos
        self._in_qvel[:k] = qvel
        self._call("set_state", env_ids=env_ids.tolist())

    def get_qpos(self) -> np.ndarray:
        return self._qpos.astype(self.np_dtype)

    def get_qvel(self) -> np.ndarray:
        return self._qvel.astype(self.np_dtype)

    def _published(self, op: str) -> None:
        if op not in self._fresh:
            self._call(op)
            self._fresh.add(op)

    def _body(self, table: np.ndarray, body_ids: np.ndarray) -> np.ndarray:
        self._published("bodies")
        return np.ascontiguousarray(table[:, body_ids], dtype=self.np_dtype)

    def _body_pos_w(self, body_ids: np.ndarray) -> np.ndarray:
        return self._body(self._xpos, body_ids)

    def _body_quat_w(self, body_ids: np.ndarray) -> np.ndarray:
        return self._body(self._xquat, body_ids)

    def _body_lin_vel_w(self, body_ids: np.ndarray) -> np.ndarray:
        return self._body(self._linvel, body_ids)

    def _body_ang_vel_w(self, body_ids: np.ndarray) -> np.ndarray:
        return self._body(self._angvel, body_ids)

    def _read_sensor(self, index: int) -> np.ndarray:
        self._published("sensors")
        adr = int(self._remote_info.sensor_adr[index])
        dim = int(self._remote_info.sensor_dims[index])
        return np.array(self._sensordata[:, adr:adr + dim], dtype=self.np_dtype)

    def _apply_body_force(self, body_ids: np.ndarray, force: np.ndarray, torque: np.ndarray | None) -> None:
        self._call("apply_body_force", body_ids=body_ids.tolist(), force=pack_array(force),
                   torque=None if torque is None else pack_array(torque))

    def _clear_body_forces(self) -> None:
        self._call("clear_body_forces")

    def _site_jacobian(self, site_id: int, dof_indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        jp, jr = self._call("site_jacobian", site_id=site_id, dof_indices=dof_indices.tolist())
        return unpack_array(jp), unpack_array(jr)

    def _get_physics_state(self) -> np.ndarray:
        return unpack_array(self._call("get_physics_state"))

    def _set_physics_state(self, state: np.ndarray) -> None:
        self._call("set_physics_state", state=pack_array(state))

    def _write_model_field(self, term: str, env_ids: np.ndarray, target_ids: np.ndarray | None,
                           values: np.ndarray) -> None:
        self._call("write_model_field", term=term, env_ids=env_ids.tolist(),
                   target_ids=None if target_ids is None else target_ids.tolist(), values=pack_array(values))

    def _read_model_field(self, term: str) -> np.ndarray:
        return unpack_array(self._call("read_model_field", term=term))

    def _init_renderer(self, spacing: float, offset_mode: str, headless: bool, capture: bool, width: int,
                       height: int, camera: CameraCfg) -> None:
        import attrs

        cam = {k: (list(v) if isinstance(v, tuple) else v) for k, v in attrs.asdict(camera).items() if v is not None}
        self._call("init_renderer", spacing=spacing, offset_mode=offset_mode, headless=headless, capture=capture,
                   width=width, height=height, camera=cam)

    def _capture_frame(self) -> np.ndarray:
        return unpack_array(self._call("capture_frame"))
