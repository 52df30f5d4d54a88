"""Registers ``sim_backend="unisim-<engine>"`` for UniLab's manager-based tasks (imported by UniLab).

For every UniLab task registered with one of UniLab's factories of :data:`FACTORIES` (its
manager-based env, G1's walking env), and every UniSim backend installed
(``unisim_core.list_backends``: names only, no engine imported), ``unisim_unilab.make_env`` for the
same env class is added under ``unisim-<engine>``. UniLab 1.5's ``register_env`` only
takes its built-in backend names, so the entries are added to the same table it writes
(``registry._envs[task].env_factory_dict``); ``registry.make``, ``list_registered_envs`` and the
training scripts read them as their own.
"""

from __future__ import annotations

from functools import partial

from unilab.base import registry
from unilab.envs.manager_based_rl_env import ManagerBasedRlEnv, make_manager_based_rl_env
from unilab.tasks.locomotion.g1.manager_terms import G1WalkManagerBasedEnv, make_g1_walk_env

from unisim_core import list_backends

from ._env import PREFIX, make_env

ENGINES = tuple(r.name for r in list_backends() if r.name != "fake")
#: UniLab factory -> the env class it builds (each builds its backend the same way, then the class).
FACTORIES = {make_manager_based_rl_env: ManagerBasedRlEnv, make_g1_walk_env: G1WalkManagerBasedEnv}


def register(engines=ENGINES) -> list[tuple[str, str]]:
    """Add ``unisim-<engine>`` factories; returns the ``(task, sim_backend)`` pairs added."""
    added = []
    for task, meta in registry._envs.items():
        env_cls = next((FACTORIES[f] for f in meta.env_factory_dict.values() if f in FACTORIES), None)
        if env_cls is None:
            continue  # a task with an env factory of its own kind
        factory = make_env if env_cls is ManagerBasedRlEnv else partial(make_env, env_cls=env_cls)
        for engine in engines:
            name = PREFIX + engine
            if name not in meta.env_factory_dict:
                meta.env_factory_dict[name] = factory
                added.append((task, name))
    return added


register()
