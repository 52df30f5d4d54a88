"""Genesis' own loops for ``unisim bench``: the raw batched baseline and the one-env step cost.

Reached through the plugin's ``unisim_raw_stepper`` / ``unisim_step_cost_probe`` hooks (``_hooks.py``);
Genesis is imported only by the backends the loops run on. Each call ends with the host copies of
qpos and qvel (``tensor.cpu()`` waits for the device).
"""

from __future__ import annotations

import numpy as np

__all__ = ["raw_stepper", "step_cost_probe"]


def raw_stepper(scene: str, n: int, sim_dt: float, nsteps: int, backend, ctrl: np.ndarray):
    """``(call, close)``: Genesis' own API on the backend's scene (the same engine instance, so the
    difference is the adapter alone): ``control_dofs_position``, ``scene.step()`` x ``nsteps``,
    ``get_qpos()`` and ``get_dofs_velocity()`` as numpy. ``ctrl`` is clamped once, as the backend does."""
    scene_gs, ent = backend.genesis_scene, backend.genesis_entity
    dofs = backend._act_dofs
    target = np.clip(ctrl, backend._ctrl_lo, backend._ctrl_hi)

    def call():
        ent.control_dofs_position(target, dofs)
        for _ in range(nsteps):
            scene_gs.step()
        return ent.get_qpos().cpu().numpy(), ent.get_dofs_velocity().cpu().numpy()

    return call, lambda: None


def step_cost_probe(scene: str, sim_dt: float, nsteps: int, backend, ctrl: np.ndarray):
    """The raw loop on a one-env Genesis scene built as the backend builds its own (same options)."""
    import attrs

    from unisim_core import SceneCfg, create_backend

    options = attrs.asdict(backend.options, recurse=False)
    one = create_backend("genesis", SceneCfg(scene, default_keyframe=backend.scene.default_keyframe), 1, sim_dt,
                         **options)
    call, _ = raw_stepper(scene, 1, sim_dt, nsteps, one, ctrl)
    call.backend = one  # owns the scene: lives as long as the loop
    return call
