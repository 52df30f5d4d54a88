"""gymnasium ids for the shipped tasks, registered at ``import unisim_gym``: ``UniSim/Ant-v0`` (``Ant-v5``
without its contact terms), ``UniSim/Ant-v1`` (with them), ``UniSim/QuadrupedVelocity-v0``.

``gymnasium.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point", backend="motrix", ...)``
builds one :class:`UniSimVectorEnv` (the ids have no single-env entry point: the envs are rows of
one batch). Keyword arguments are the env's (``backend``, ``seed``, ``backend_options``,
``autoreset_mode``, ``normalize_actions``, ``max_episode_steps``, ``render_mode``,
``render_width``, ``render_height``, ``camera``); any other one is a field of the task's config
(``AntCfg``, ``VelocityTrackingCfg``), where an unknown name is a ``TypeError``.
"""

from __future__ import annotations

from typing import Any

import attrs
import gymnasium

from ._ant import AntCfg, AntTask
from ._locomotion import VelocityTrackingCfg, VelocityTrackingTask
from ._task import Task
from ._vector_env import UniSimVectorEnv

__all__ = ["ANT_ID", "ANT_CONTACT_ID", "QUADRUPED_ID", "make_ant_vec", "make_ant_contact_vec", "make_quadruped_vec"]

ANT_ID = "UniSim/Ant-v0"
ANT_CONTACT_ID = "UniSim/Ant-v1"
QUADRUPED_ID = "UniSim/QuadrupedVelocity-v0"
_ENV_KWARGS = ("backend", "seed", "backend_options", "autoreset_mode", "normalize_actions", "max_episode_steps",
               "render_mode", "render_width", "render_height", "camera")


def _make(task_cls: type[Task], cfg_cls: type, num_envs: int, kwargs: dict[str, Any]) -> UniSimVectorEnv:
    env_kwargs = {k: kwargs.pop(k) for k in _ENV_KWARGS if k in kwargs}
    valid = [f.name for f in attrs.fields(cfg_cls)]
    unknown = sorted(set(kwargs) - set(valid))
    if unknown:
        raise TypeError(f"{cfg_cls.__name__}: unknown argument(s) {unknown}; env arguments: {list(_ENV_KWARGS)}; "
                        f"task arguments: {valid}")
    return UniSimVectorEnv(task_cls(cfg_cls(**kwargs)), num_envs=num_envs, **env_kwargs)


def make_ant_vec(num_envs: int = 1, **kwargs: Any) -> UniSimVectorEnv:
    """``UniSim/Ant-v0``: gymnasium's ``Ant-v5`` (without its contact terms) over any backend."""
    return _make(AntTask, AntCfg, num_envs, kwargs)


def make_ant_contact_vec(num_envs: int = 1, **kwargs: Any) -> UniSimVectorEnv:
    """``UniSim/Ant-v1``: gymnasium's ``Ant-v5`` with its defaults, contact terms included (``cfrc_ext[1:]``
    in the observation, the contact cost): ``AntCfg(contact_forces=True)``, on a backend declaring
    ``contact_torques``."""
    kwargs.setdefault("contact_forces", True)
    return _make(AntTask, AntCfg, num_envs, kwargs)


def make_quadruped_vec(num_envs: int = 1, **kwargs: Any) -> UniSimVectorEnv:
    """``UniSim/QuadrupedVelocity-v0``: the velocity-tracking quadruped over any backend."""
    return _make(VelocityTrackingTask, VelocityTrackingCfg, num_envs, kwargs)


def register() -> None:
    """Register the ids (idempotent)."""
    for env_id, creator, steps in ((ANT_ID, make_ant_vec, 1000), (ANT_CONTACT_ID, make_ant_contact_vec, 1000),
                                   (QUADRUPED_ID, make_quadruped_vec, None)):
        if env_id not in gymnasium.registry:
            gymnasium.register(env_id, vector_entry_point=f"{__name__}:{creator.__name__}", max_episode_steps=steps)
