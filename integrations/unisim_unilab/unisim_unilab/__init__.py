"""UniLab's tasks on every UniSim engine.

Installed beside ``unilab``, this registers ``sim_backend="unisim-<engine>"`` for UniLab's
manager-based tasks (through UniLab's ``unilab.tasks`` entry point): a UniLab config switches a task
to a UniSim engine with ``training.sim_backend: unisim-mujoco``. Importing this package imports
neither UniLab nor an engine.
"""

from ._env import PREFIX, create_unilab_backend, engine_of, make_env

__all__ = ["PREFIX", "create_unilab_backend", "engine_of", "make_env"]
