"""Backends and factories for the WorkerBackend tests (imported inside worker processes)."""

from __future__ import annotations

from collections import Counter

from unisim_core.contract.errors import EngineError, InvalidInputError
from unisim_core.contract.heightfield import HeightScanner, terrain_spawn_data
from unisim_core.contract.kinematics import site_jacobian
from unisim_core.plugin.fake import FakeBackend
from unisim_core.plugin.worker import hosted


class PickyFake(FakeBackend):
    """Rejects some states inside the engine: qvel[0, -1] == 123 is bad input, 777 an engine
    error (state unchanged), 666 breaks it (an unexpected exception)."""

    name = "picky"

    def _set_state(self, env_ids, qpos, qvel):
        if qvel[0, -1] == 123.0:
            raise InvalidInputError("engine rejects qvel[-1] == 123")
        if qvel[0, -1] == 777.0:
            raise EngineError("engine failed on qvel 777")
        if qvel[0, -1] == 666.0:
            raise RuntimeError("engine exploded")
        super()._set_state(env_ids, qpos, qvel)


def counting(init, progress):
    """The hosted factory, counting the ops it serves (op 'counts')."""
    handlers = dict(hosted.factory(init, progress))
    counts: Counter = Counter()

    def wrap(name, fn):
        def op(**kw):
            counts[name] += 1
            return fn(**kw)
        return op

    out = {name: wrap(name, fn) for name, fn in handlers.items()}
    out["counts"] = lambda: dict(counts)
    return out


def bad_rows(init, progress):
    """Reports engine rows that are not a permutation."""
    handlers = dict(hosted.factory(init, progress))
    describe = handlers["describe"]
    handlers["describe"] = lambda: {**describe(), "env_rows": [0] * init["num_envs"]}
    return handlers


class NativeFake(FakeBackend):
    """The fake with its own site Jacobian, scanner and terrain (the core's computations behind other
    functions, as an engine's native ones would be): a host forwards them instead of computing them."""

    name = "native-fake"

    def _site_jacobian(self, site_id, dof_indices):
        return site_jacobian(self, site_id, dof_indices)

    def _create_hfield_scanner(self, hfield_geom_id, offsets, frame_body_id, alignment, output):
        return HeightScanner(self, self._height_field(hfield_geom_id), offsets, frame_body_id, alignment, output)

    def _terrain_spawn_data(self):
        return terrain_spawn_data(self, self.scene.terrain)

