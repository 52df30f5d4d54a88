"""Registers ``sim_backend="unisim-<engine>"`` for UniLab's manager-based tasks (imported by UniLab).

For every UniLab task registered with UniLab's manager-based factory, and every UniSim backend
installed (``unisim_core.list_backends``: names only, no engine imported), the factory
``unisim_unilab.make_env`` is added under ``unisim-<engine>``. UniLab 1.5's ``register_env`` only
takes its built-in backend names, so the entries are added to the same table it writes
(``registry._envs[task].env_factory_dict``); ``registry.make``, ``list_registered_envs`` and the
training scripts read them as their own.
"""

from __future__ import annotations

from unilab.base import registry
from unilab.envs.manager_based_rl_env import make_manager_based_rl_env

from unisim_core import list_backends

from ._env import PREFIX, make_env

ENGINES = tuple(r.name for r in list_backends() if r.name != "fake")


def register(engines=ENGINES) -> list[tuple[str, str]]:
    """Add ``unisim-<engine>`` factories; returns the ``(task, sim_backend)`` pairs added."""
    added = []
    for task, meta in registry._envs.items():
        if make_manager_based_rl_env not in meta.env_factory_dict.values():
            continue  # a task with its own env class: UniLab's factory knows its backends
        for engine in engines:
            name = PREFIX + engine
            if name not in meta.env_factory_dict:
                meta.env_factory_dict[name] = make_env
                added.append((task, name))
    return added


register()
