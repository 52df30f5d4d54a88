"""MotrixSim's own loops for ``unisim bench``: the raw batched baseline and the one-env step cost.

Reached through the plugin's ``unisim_raw_stepper`` / ``unisim_step_cost_probe`` hooks (``_hooks.py``);
MotrixSim is imported only when a loop is built.
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["raw_stepper", "step_cost_probe"]


def _scene(scene: str, n: int | None, sim_dt: float, backend):
    import motrixsim

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        M = motrixsim.load_model(scene)
    M.options.timestep = sim_dt
    if getattr(backend.options, "max_iterations", None) is not None:
        M.options.max_iterations = backend.options.max_iterations
    D = motrixsim.SceneData(M) if n is None else motrixsim.SceneData(M, batch=[n])
    for key in M.keyframes:
        if key.name == backend.scene.default_keyframe:
            key.apply(D)
    M.forward_kinematic(D)
    return M, D


def _stepper(M, D, nsteps: int):
    return (lambda: M.step(D)) if nsteps == 1 else (lambda: M.step_n(D, nsteps))


def raw_stepper(scene: str, n: int, sim_dt: float, nsteps: int, backend, ctrl):
    """``(call, close)``: a batched ``SceneData`` of ``n`` envs: write ctrl, step ``nsteps``, read
    dof_pos and dof_vel."""
    M, D = _scene(scene, n, sim_dt, backend)
    step = _stepper(M, D, nsteps)
    ctrl = np.ascontiguousarray(ctrl, dtype=np.float32)

    def call():
        D.actuator_ctrls = ctrl
        step()
        return D.dof_pos, D.dof_vel

    return call, lambda: None


def step_cost_probe(scene: str, sim_dt: float, nsteps: int, backend, ctrl):
    """One unbatched ``SceneData`` doing the raw loop's work: write ctrl, step ``nsteps``, read dof_pos
    and dof_vel (MotrixSim's pool runs one env on one thread). The writes and reads belong in it: a
    ctrl write makes the next step dearer and a dof read after a step costs as much as a substep
    (ant, N=1: 80 µs stepping alone, 265 µs with both)."""
    M, D = _scene(scene, None, sim_dt, backend)
    step = _stepper(M, D, nsteps)
    ctrl = np.ascontiguousarray(np.asarray(ctrl).reshape(-1), dtype=np.float32)

    def call():
        D.actuator_ctrls = ctrl
        step()
        return D.dof_pos, D.dof_vel

    return call
