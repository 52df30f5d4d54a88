"""Worker side of a worker-hosted backend: build any registered backend and serve its primitives.

Started by :class:`~unisim_core.worker.backend.WorkerBackend` as
``python -m unisim_core.worker unisim_core.worker.hosted:factory``. Hot-path arrays live in
host-allocated shared memory slots: ``ctrl``, ``in_qpos``/``in_qvel`` (inputs); ``qpos``/``qvel``
are published after every ``step``/``set_state`` (no further round trip for state reads),
body tables (``xpos``, ``xquat``, ``linvel``, ``angvel``) and ``sensordata`` on the first
read after a change (``bodies``/``sensors`` ops).
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ..config import SceneCfg, TerrainCfg
from ..errors import UniSimError
from ..model import ModelInfo
from .shm import SlotSet

#: UniSim errors (bad input, engine errors): the inner backend raised them on purpose and stays
#: usable, so the worker does too (``serve`` reports them with ``poisoned: False``).
SAFE_ERRORS: tuple[type[BaseException], ...] = (UniSimError,)


def pack_array(arr: np.ndarray) -> dict[str, Any]:
    """A numpy array as plain data for a control frame (cold paths only)."""
    arr = np.ascontiguousarray(arr)
    return {"dtype": arr.dtype.str, "shape": list(arr.shape), "data": arr.tobytes()}


def unpack_array(obj: dict[str, Any]) -> np.ndarray:
    return np.frombuffer(obj["data"], dtype=np.dtype(obj["dtype"])).reshape(obj["shape"]).copy()


def info_to_plain(info: ModelInfo) -> dict[str, Any]:
    out = {}
    for f in attrs.fields(ModelInfo):
        v = getattr(info, f.name)
        if isinstance(v, np.ndarray):
            out[f.name] = pack_array(v)
        elif f.name == "keyframes":
            out[f.name] = {k: pack_array(q) for k, q in v.items()}
        else:
            out[f.name] = list(v) if isinstance(v, tuple) else v
    return out


def info_from_plain(d: dict[str, Any]) -> ModelInfo:
    kw = {}
    for k, v in d.items():
        if k == "keyframes":
            kw[k] = {name: unpack_array(q) for name, q in v.items()}
        elif isinstance(v, dict) and "dtype" in v:
            kw[k] = unpack_array(v)
        else:
            kw[k] = v
    return ModelInfo(**kw)


def scene_to_plain(scene: SceneCfg) -> dict[str, Any]:
    d = attrs.asdict(scene, recurse=True)
    return {k: v for k, v in d.items() if v is not None}


def scene_from_plain(d: dict[str, Any]) -> SceneCfg:
    terrain = d.get("terrain")
    return SceneCfg(d["model_file"], visual_model_file=d.get("visual_model_file"),
                    default_keyframe=d.get("default_keyframe"),
                    terrain=TerrainCfg(**terrain) if terrain else None)


def factory(init: dict[str, Any], progress) -> dict[str, Any]:
    """INIT: create the inner backend, describe it, and return the op handlers."""
    from ..registry import create_backend

    progress(f"creating backend {init['target']!r} with {init['num_envs']} envs")
    backend = create_backend(init["target"], scene_from_plain(init["scene"]), init["num_envs"], init["sim_dt"],
                             **init["options"])
    info = backend.model_info
    slots: SlotSet | None = None
    hot: dict[str, np.ndarray] = {}  # slot arrays the hot path uses, looked up once at attach
    all_sensors = np.arange(len(info.sensor_names))
    all_bodies = np.arange(len(info.body_names))

    def publish() -> None:
        hot["qpos"][...] = backend.get_qpos()
        hot["qvel"][...] = backend.get_qvel()

    def bodies() -> None:
        pos, quat, lin, ang = backend.get_body_state_w(all_bodies)
        slots["xpos"][...] = pos
        slots["xquat"][...] = quat
        slots["linvel"][...] = lin
        slots["angvel"][...] = ang

    def sensors() -> None:
        slots["sensordata"][...] = backend._read_sensors(all_sensors)

    def describe() -> dict[str, Any]:
        dr = backend.get_dr_capabilities()
        return {"info": info_to_plain(info), "capabilities": sorted(c.value for c in backend.capabilities),
                "init_terms": sorted(dr.init_terms), "interval_terms": sorted(dr.interval_terms),
                "reset_terms": sorted(dr.reset_terms), "np_dtype": np.dtype(backend.np_dtype).str,
                "base_id": int(backend.base_body_id), "max_abs_value": float(backend.MAX_ABS_VALUE),
                "unsupported_scene_features": dict(backend.UNSUPPORTED_SCENE_FEATURES),
                "known_kit_deviations": dict(backend.KNOWN_KIT_DEVIATIONS), "kit_rules": backend.KIT_RULES,
                "snapshot_tier": backend.snapshot_tier}

    def attach(descriptors: dict[str, Any]) -> None:
        nonlocal slots
        slots = SlotSet.attach(descriptors)
        hot.update(ctrl=slots["ctrl"], qpos=slots["qpos"], qvel=slots["qvel"])
        publish()

    def step(nsteps: int) -> list[int] | None:
        """Returns the engine rows whose state diverged (``None``: none)."""
        backend._step(hot["ctrl"], nsteps)
        diverged = backend._diverged_mask()
        publish()
        return None if diverged is None or not diverged.any() else np.flatnonzero(diverged).tolist()

    def set_state(env_ids: list[int]) -> None:
        k = len(env_ids)
        backend._set_state(np.asarray(env_ids, dtype=np.int64), slots["in_qpos"][:k].copy(),
                           slots["in_qvel"][:k].copy())
        publish()

    def apply_body_force(body_ids: list[int], force: dict, torque: dict | None) -> None:
        backend._apply_body_force(np.asarray(body_ids, dtype=np.int64), unpack_array(force),
                                  None if torque is None else unpack_array(torque))

    def clear_body_forces() -> None:
        backend._clear_body_forces()

    def site_jacobian(site_id: int, dof_indices: list[int]) -> list[dict]:
        jp, jr = backend._site_jacobian(site_id, np.asarray(dof_indices, dtype=np.int64))
        return [pack_array(jp), pack_array(jr)]

    def get_physics_state() -> dict:
        return pack_array(backend._get_physics_state())

    def set_physics_state(state: dict) -> None:
        backend._set_physics_state(unpack_array(state))
        publish()

    def write_model_field(term: str, env_ids: list[int], target_ids: list[int] | None, values: dict) -> None:
        targets = None if target_ids is None else np.asarray(target_ids, dtype=np.int64)
        backend._write_model_field(term, np.asarray(env_ids, dtype=np.int64), targets, unpack_array(values))
        publish()

    def read_model_field(term: str) -> dict:
        return pack_array(backend._read_model_field(term))

    def init_renderer(spacing: float, offset_mode: str, headless: bool, capture: bool, width: int, height: int,
                      camera: dict) -> None:
        backend.init_renderer(spacing, offset_mode=offset_mode, headless=headless, capture=capture,
                              width=width, height=height, camera_kwargs=camera)

    def capture_frame() -> dict:
        return pack_array(backend._capture_frame())

    contact_fills: list[tuple[Any, int]] = []

    def bind_contacts(body_ids: list[int], against_ids: list[int] | None) -> int:
        """Bind the inner backend's contact forces once; returns the key ``contacts`` reads."""
        against = None if against_ids is None else np.asarray(against_ids, dtype=np.int64)
        contact_fills.append((backend._bind_contact_forces(np.asarray(body_ids, dtype=np.int64), against),
                              len(body_ids)))
        return len(contact_fills) - 1

    def contacts(key: int) -> dict:
        fill, n = contact_fills[key]
        out = np.zeros((backend.num_envs, n, 3))
        fill(out)
        return pack_array(out)

    def close() -> None:
        backend.close()
        hot.clear()
        if slots is not None:
            slots.close()

    ops = (describe, attach, step, bodies, sensors, set_state, apply_body_force, clear_body_forces, site_jacobian,
           get_physics_state, set_physics_state, write_model_field, read_model_field, init_renderer, capture_frame,
           bind_contacts, contacts, close)
    return {f.__name__: f for f in ops}


factory.safe_errors = SAFE_ERRORS  # type: ignore[attr-defined]  # read by ``server.serve``
