"""Worker side of a worker-hosted backend: build any registered backend and serve it through a
:class:`~unisim_core.plugin.servant.Servant`; this module holds only the worker transport.

Started by :class:`~unisim_core.plugin.worker.backend.WorkerBackend` as
``python -m unisim_core.plugin.worker unisim_core.plugin.worker.hosted:factory``. Hot-path arrays live in
host-allocated shared memory slots: ``ctrl``, ``in_qpos``/``in_qvel`` (inputs); ``qpos``/``qvel``
are published after every op that changes the state (no further round trip for state reads),
body tables (``xpos``, ``xquat``, ``linvel``, ``angvel``) and ``sensordata`` on the first
read after a change (``bodies``/``sensors`` ops). Other arrays cross the control frames as plain
data (``pack_array``), converted at this boundary. Handles (contact fills, scanners, mocap bindings)
stay in the worker under keys it hands out.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from unisim_core.contract.errors import UniSimError
from unisim_core.plugin.servant import Servant
from unisim_core.plugin.servant.plain import (  # noqa: F401 - the worker protocol's plain forms (other hosts import them here)
    info_from_plain,
    info_to_plain,
    is_packed_array,
    pack_array,
    scene_from_plain,
    scene_to_plain,
    unpack_array,
)
from unisim_core.plugin.worker.shm import SlotSet

#: UniSim errors (bad input, engine errors): the inner backend raised them on purpose and stays
#: usable, so the worker does too (``serve`` reports them with ``poisoned: False``).
SAFE_ERRORS: tuple[type[BaseException], ...] = (UniSimError,)


class WorkerServant(Servant):
    """The servant over the worker's shared-memory slots: hot-path inputs are read from them and
    the state is published into them after every change; ops that make a handle return its key."""

    OPS = (Servant.OPS - {"cleanup_scene_assets"}) | {"attach", "bodies", "sensors"}

    def __init__(self, backend: Any) -> None:
        super().__init__(backend)
        info = backend.model_info
        self._slots: SlotSet | None = None
        self._hot: dict[str, np.ndarray] = {}  # slot arrays the hot path uses, looked up once at attach
        self._all_sensors = np.arange(len(info.sensor_names))
        self._all_bodies = np.arange(len(info.body_names))
        self._keys = itertools.count()  # handle keys (the base keeps terrain's sampler under -1)

    def _changed(self, env_ids: np.ndarray | None) -> None:
        self._hot["qpos"][...] = self.backend.get_qpos()
        self._hot["qvel"][...] = self.backend.get_qvel()

    def attach(self, descriptors: dict[str, Any]) -> None:
        self._slots = SlotSet.attach(descriptors)
        self._hot.update(ctrl=self._slots["ctrl"], qpos=self._slots["qpos"], qvel=self._slots["qvel"])
        self._changed(None)

    def bodies(self) -> None:
        s, ids, b = self._slots, self._all_bodies, self.backend
        s["xpos"][...], s["xquat"][...] = b._body_pos_w(ids), b._body_quat_w(ids)
        s["linvel"][...], s["angvel"][...] = b._body_lin_vel_w(ids), b._body_ang_vel_w(ids)

    def sensors(self) -> None:
        self._slots["sensordata"][...] = self.backend._read_sensors(self._all_sensors)

    def step(self, nsteps: int) -> list[int] | None:  # type: ignore[override]  # ctrl is in its slot
        """Returns the engine rows whose state diverged (``None``: none)."""
        rows = super().step(self._hot["ctrl"], nsteps)
        self._changed(None)
        return None if rows is None else rows.tolist()

    def set_state(self, env_ids: list[int]) -> None:  # type: ignore[override]  # values are in their slots
        k = len(env_ids)
        super().set_state(env_ids, self._slots["in_qpos"][:k].copy(), self._slots["in_qvel"][:k].copy())

    def bind_contacts(self, body_ids: list[int], against_ids: list[int] | None,  # type: ignore[override]
                      width: int = 3) -> int:
        """Returns the key ``contacts`` reads."""
        key = next(self._keys)
        super().bind_contacts(key, body_ids, against_ids, width)
        return key

    def create_scanner(self, hfield_geom_id: int, offsets: np.ndarray, frame_body_id: int,  # type: ignore[override]
                       alignment: str, output: str) -> list[int]:
        """Returns ``[key ``scan`` reads, number of points]``."""
        key = next(self._keys)
        return [key, super().create_scanner(key, hfield_geom_id, offsets, frame_body_id, alignment, output)]

    def bind_mocap(self, body_id: int) -> int:  # type: ignore[override]
        """Returns the key ``mocap_get``/``mocap_write`` use."""
        key = next(self._keys)
        super().bind_mocap(key, body_id)
        return key

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._hot.clear()
            if self._slots is not None:
                self._slots.close()


def _plain_result(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return pack_array(value)
    if isinstance(value, tuple | list):
        return [_plain_result(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain_result(v) for k, v in value.items()}
    return value


def _wire_op(servant: WorkerServant, op: str):
    """Handler of op ``op``: packed arrays in the arguments and arrays in the reply converted."""
    def handler(*pos: Any, **args: Any) -> Any:
        for k, v in args.items():
            if is_packed_array(v):
                args[k] = unpack_array(v)
        return _plain_result(servant.call(op, *pos, **args))
    handler.__name__ = op
    return handler


def factory(init: dict[str, Any], progress) -> dict[str, Any]:
    """INIT: create the inner backend and return one handler per servant op."""
    from unisim_core.contract.factory import create_backend

    progress(f"creating backend {init['target']!r} with {init['num_envs']} envs")
    backend = create_backend(init["target"], scene_from_plain(init["scene"]), init["num_envs"], init["sim_dt"],
                             **init["options"])
    servant = WorkerServant(backend)
    return {op: _wire_op(servant, op) for op in sorted(servant.OPS)}


factory.safe_errors = SAFE_ERRORS  # type: ignore[attr-defined]  # read by ``server.serve``
factory.reusable = True  # type: ignore[attr-defined]  # one worker serves backends in turn (worker pool)
