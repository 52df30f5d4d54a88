"""``FaultyMujoco``: real MuJoCo with faults injected on sentinel inputs (a test double for what
MuJoCo does not do on demand: fail in a chosen env, or lose its process in the middle of a call).

Sentinel 777 is an ``EngineError`` the way MuJoCo reports one (the failing envs unchanged, the
others done): ``ctrl[i, 0]`` in ``step``, ``qvel[i, -1]`` in ``set_state``, a ``body_mass`` value in a
model-field write. Sentinel 666 at the same places ends the process (``os._exit``) in the middle of
the call, once per place: it leaves a marker file in the directory ``UNISIM_TEST_DIE_ONCE`` names
(set only in the shards' runtime env: in-process, 666 is an ordinary value), so the retried call
runs normally.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from unisim_core.contract.errors import EngineError
from unisim_mujoco import MujocoBackend

__all__ = ["FaultyMujoco", "ENGINE_ERROR", "DIE"]

ENGINE_ERROR, DIE = 777.0, 666.0


def _die_once(hit: bool, where: str) -> None:
    folder = os.environ.get("UNISIM_TEST_DIE_ONCE")
    if hit and folder and not (Path(folder) / where).exists():
        (Path(folder) / where).touch()
        os._exit(1)


class FaultyMujoco(MujocoBackend):
    name = "faulty_mujoco"

    def _step(self, ctrl: np.ndarray, nsteps: int) -> None:
        _die_once(bool((ctrl[:, 0] == DIE).any()), "step")
        bad = np.flatnonzero(ctrl[:, 0] == ENGINE_ERROR)
        if not bad.size:
            return super()._step(ctrl, nsteps)
        kept = self.batch.state[bad].copy()
        super()._step(ctrl, nsteps)
        self.batch.state[bad] = kept
        self._forward(bad)
        raise EngineError(f"MuJoCo failed in env(s) {bad.tolist()} (their state is unchanged): injected")

    def _set_state(self, env_ids: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> None:
        _die_once(bool((qvel[:, -1] == DIE).any()), "set_state")
        if (qvel[:, -1] == ENGINE_ERROR).any():
            raise EngineError("engine failed on qvel 777")
        super()._set_state(env_ids, qpos, qvel)

    def _write_model_field(self, term, env_ids, target_ids, values) -> None:
        _die_once(term == "body_mass" and bool((values == DIE).any()), "body_mass")
        if term == "body_mass" and (values == ENGINE_ERROR).any():
            raise EngineError("engine failed on body_mass 777")
        super()._write_model_field(term, env_ids, target_ids, values)
