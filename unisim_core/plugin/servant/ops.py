"""``Servant``: one hosted backend's primitives served by op name, free of any transport.

A transport (the worker's pipes and shared memory, a Ray actor) builds a :class:`Servant` (or a
subclass that shapes replies, e.g. publishes state after a change), calls ``servant.call(op,
*args, **kwargs)`` for each request, and turns a raised exception into an
:class:`~unisim_core.plugin.servant.records.ErrorRecord` for the caller, who rebuilds it with
``record.rebuild()``. The caller has already validated every input with the contract's checks, so
ops call the backend's *primitives* directly (results are bit-identical to the backend run
in-process). Shapes: ``env_ids`` are the served backend's env rows; arrays are as its primitives
take them (``(len(env_ids), ...)`` for per-env values).
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

import numpy as np

from unisim_core.contract._playback import Playback
from unisim_core.contract.backend import SimBackend
from unisim_core.contract.capabilities import Capability
from unisim_core.contract.errors import InvalidInputError
from unisim_core.contract.kinematics import site_jacobian

__all__ = ["Servant", "shared_capabilities_of"]


def _ids(ids: Any) -> np.ndarray:
    """int64 ids (lists from plain-data transports, arrays from Ray)."""
    return np.asarray(ids, dtype=np.int64)


def _w(arr: Any) -> Any:
    """A writeable array (arrays arriving through Ray's object store are read-only)."""
    if isinstance(arr, np.ndarray) and not arr.flags.writeable:
        return arr.copy()
    return arr


def shared_capabilities_of(backend: SimBackend) -> frozenset[Capability]:
    """The capabilities ``backend`` declares and computes with the core's shared code from its model and
    the contract's state (its class keeps the core's ``site_jacobian``, the default scanner and terrain
    over its ``_height_field``, the default renderer): a host with the same state gets the same answers."""
    cls, base, C = type(backend), SimBackend, Capability
    shared = set()
    if cls._site_jacobian is site_jacobian:
        shared.add(C.SITE_JACOBIAN)
    if cls._height_field is not base._height_field:
        if cls._create_hfield_scanner is base._create_hfield_scanner:
            shared.add(C.HEIGHT_SCAN)
        if cls._terrain_spawn_data is base._terrain_spawn_data:
            shared.add(C.TERRAIN)
    if cls._init_renderer is Playback._init_renderer and cls._capture_frame is Playback._capture_frame:
        shared |= {C.VIDEO_CAPTURE, C.PLAYBACK}
    return frozenset(shared) & backend.capabilities


class Servant:
    """Serves ``backend``'s primitives; ``OPS`` names the ops a caller may call."""

    OPS: ClassVar[frozenset[str]] = frozenset({
        "describe", "step", "set_state", "apply_body_force", "clear_body_forces", "site_jacobian",
        "get_physics_state", "set_physics_state", "write_model_field", "read_model_field", "bind_contacts",
        "contacts", "terrain_spawn_data", "sample_height", "create_scanner", "scan", "height_field", "bind_mocap",
        "mocap_get", "mocap_write", "init_renderer", "capture_frame", "cleanup_scene_assets", "close"})

    def __init__(self, backend: Any = None) -> None:
        self.backend = backend
        self._handles: dict[int, Any] = {}  # caller-chosen key -> scanner, mocap binding, contact fill

    # ------------------------------------------------------------------ dispatch
    def call(self, op: str, /, *args: Any, **kwargs: Any) -> Any:
        """Run op ``op``; an unknown op or arguments that do not fit its signature raise
        :class:`InvalidInputError` naming them (nothing ran)."""
        if op not in self.OPS:
            raise InvalidInputError(f"unknown op {op!r}: expected one of {sorted(self.OPS)}")
        fn = getattr(self, op)
        try:
            return fn(*args, **kwargs)
        except TypeError as exc:
            sig = inspect.signature(fn)
            try:
                sig.bind(*args, **kwargs)
            except TypeError:
                raise InvalidInputError(f"op {op!r}: {exc}; expected arguments ({', '.join(sig.parameters)})"
                                        ) from None
            raise

    def _changed(self, env_ids: np.ndarray | None) -> Any:
        """Hook after an op changed the state of ``env_ids`` (``None``: all); its result is the op's
        reply (a transport publishes or returns the new state here)."""
        return None

    # ------------------------------------------------------------------ description
    def describe(self) -> dict[str, Any]:
        """Plain-data description: model info, capabilities, those of them computed by the core's shared
        code (``shared_capabilities``: see ``shared_capabilities_of``), declarations (see ``adopt_description``)."""
        from unisim_core.plugin.servant.plain import info_to_plain

        b = self.backend
        cls, dr = type(b), b.get_dr_capabilities()
        return {"info": info_to_plain(b.model_info), "capabilities": sorted(c.value for c in b.capabilities),
                "shared_capabilities": sorted(c.value for c in shared_capabilities_of(b)),
                "init_terms": sorted(dr.init_terms), "interval_terms": sorted(dr.interval_terms),
                "reset_terms": sorted(dr.reset_terms), "refused_terms": dict(b.REFUSED_TERMS),
                "np_dtype": np.dtype(b.np_dtype).str,
                "max_abs_value": float(b.MAX_ABS_VALUE),
                "unsupported_scene_features": dict(b.UNSUPPORTED_SCENE_FEATURES),
                "known_kit_deviations": dict(b.KNOWN_KIT_DEVIATIONS), "kit_rules": b.KIT_RULES,
                "snapshot_tier": b.snapshot_tier, "inner_class": f"{cls.__module__}:{cls.__qualname__}",
                "inner_name": cls.name or cls.__name__, "inner_version": cls.version}

    # ------------------------------------------------------------------ stepping and state
    def step(self, ctrl: np.ndarray, nsteps: int, clear_before: bool = False,
             clear_after: bool = False) -> np.ndarray | None:
        """``_step``; staged wrenches cleared before and/or after (where the in-process base would
        clear them). Returns the rows whose state diverged (``None``: none)."""
        b = self.backend
        if clear_before:
            b._clear_body_forces()
        try:
            b._step(_w(ctrl), nsteps)
        finally:
            if clear_after:
                b._clear_body_forces()
        diverged = b._diverged_mask()
        return None if diverged is None or not diverged.any() else np.flatnonzero(diverged)

    def set_state(self, env_ids: Any, qpos: np.ndarray, qvel: np.ndarray) -> Any:
        ids = _ids(env_ids)
        self.backend._set_state(ids, _w(qpos), _w(qvel))
        return self._changed(ids)

    def apply_body_force(self, body_ids: Any, force: np.ndarray, torque: np.ndarray | None,
                         clear_first: bool = False) -> None:
        """Stage world wrenches ``(num_envs, len(body_ids), 3)`` (after clearing staged ones)."""
        if clear_first:
            self.backend._clear_body_forces()
        self.backend._apply_body_force(_ids(body_ids), _w(force), _w(torque))

    def clear_body_forces(self) -> None:
        self.backend._clear_body_forces()

    # ------------------------------------------------------------------ kinematics, snapshots, model fields
    def site_jacobian(self, site_id: int, dof_indices: Any) -> tuple[np.ndarray, np.ndarray]:
        return self.backend._site_jacobian(int(site_id), _ids(dof_indices))

    def get_physics_state(self) -> np.ndarray:
        return self.backend._get_physics_state()

    def set_physics_state(self, state: np.ndarray) -> Any:
        self.backend._set_physics_state(_w(state))
        return self._changed(None)

    def write_model_field(self, term: str, env_ids: Any, target_ids: Any, values: np.ndarray) -> Any:
        ids = _ids(env_ids)
        self.backend._write_model_field(term, ids, None if target_ids is None else _ids(target_ids), _w(values))
        return self._changed(ids)

    def read_model_field(self, term: str) -> np.ndarray:
        return self.backend._read_model_field(term)

    # ------------------------------------------------------------------ handles: contacts, terrain, scanners, mocap
    def bind_contacts(self, key: int, body_ids: Any, against_ids: Any, width: int = 3) -> None:
        """Bind the backend's contact-force fill once, under the caller's ``key``; ``width`` 6 for a
        binding with torques (forces, then moments about the world origin)."""
        if width not in (3, 6):
            raise InvalidInputError(f"width: expected 3 (forces) or 6 (forces and moments), got {width!r}")
        ids = _ids(body_ids)
        fill = self.backend._bind_contact_fill(ids, None if against_ids is None else _ids(against_ids), width)
        self._handles[key] = (fill, len(ids), width)

    def contacts(self, key: int) -> np.ndarray:
        """``(num_envs, n, width)`` contact forces (and moments) of the bodies bound under ``key``."""
        fill, n, width = self._handles[key]
        out = np.zeros((self.backend.num_envs, n, width))
        fill(out)
        return out

    def terrain_spawn_data(self) -> dict[str, Any]:
        data = self.backend._terrain_spawn_data()
        self._handles[-1] = data.sample_height
        return {"origins": np.asarray(data.origins), "hfield_geom_id": int(data.hfield_geom_id),
                "size": tuple(float(x) for x in data.size)}

    def sample_height(self, xy: np.ndarray) -> np.ndarray:
        return np.asarray(self._handles[-1](xy))

    def create_scanner(self, key: int, hfield_geom_id: int, offsets: np.ndarray, frame_body_id: int,
                       alignment: str, output: str) -> int:
        scanner = self.backend._create_hfield_scanner(hfield_geom_id, _w(offsets), frame_body_id, alignment, output)
        self._handles[key] = scanner
        return int(scanner.num_points)

    def scan(self, key: int) -> np.ndarray:
        return self._handles[key].scan()

    def height_field(self, geom_id: int) -> dict[str, Any]:
        """The sampler of height-field geom ``geom_id`` as its inputs (``plain.sampler_from_plain`` rebuilds it)."""
        from unisim_core.plugin.servant.plain import sampler_to_plain

        return sampler_to_plain(self.backend._height_field(int(geom_id)))

    def bind_mocap(self, key: int, body_id: int) -> None:
        self._handles[key] = self.backend._bind_mocap_pose(body_id)

    def mocap_get(self, key: int) -> tuple[np.ndarray, np.ndarray]:
        return self._handles[key].get()

    def mocap_write(self, key: int, env_ids: Any, pos: np.ndarray, quat: np.ndarray) -> Any:
        ids = _ids(env_ids)
        self._handles[key]._write(ids, _w(pos), _w(quat))
        return self._changed(ids)

    # ------------------------------------------------------------------ rendering, assets, teardown
    def init_renderer(self, spacing: float, offset_mode: str, headless: bool, capture: bool, width: int,
                      height: int, camera: dict) -> None:
        self.backend.init_renderer(spacing, offset_mode=offset_mode, headless=headless, capture=capture,
                                   width=width, height=height, camera_kwargs=camera)

    def capture_frame(self) -> np.ndarray:
        return self.backend._capture_frame()

    def cleanup_scene_assets(self) -> None:
        self.backend.cleanup_scene_assets()

    def close(self) -> None:
        try:
            if self.backend is not None:
                self.backend.close()
        finally:
            self.backend = None
            self._handles.clear()
