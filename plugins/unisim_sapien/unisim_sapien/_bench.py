"""The raw-SAPIEN loop ``unisim bench`` and ``benchmarks/sapien_overhead.py`` compare the contract with.

Reached through the plugin's ``unisim_raw_stepper`` hook (``_hooks.py``); sapien is imported only
by the backend the loop runs on.
"""

from __future__ import annotations

import numpy as np

__all__ = ["raw_stepper"]


def raw_stepper(scene: str, n: int, sim_dt: float, nsteps: int, backend, ctrl: np.ndarray):
    """``(call, close)``: SAPIEN's own API on the backend's scenes (the same engine objects, so the
    difference is the adapter alone): ``PhysxCpuSystem.step()`` of every env ``nsteps`` times, then every
    articulation's ``get_qpos()``/``get_qvel()``. The joint efforts stay what the backend last wrote
    (the contract recomputes them before every substep: that is part of its measured cost)."""
    systems = [s.physx_system for s in backend.sapien_scenes]
    arts = [a for env in backend.sapien_articulations for a in env]

    def call():
        for _ in range(nsteps):
            for system in systems:
                system.step()
        return [a.get_qpos() for a in arts], [a.get_qvel() for a in arts]

    return call, lambda: None
