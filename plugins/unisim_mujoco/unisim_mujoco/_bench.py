"""MuJoCo's own loops for ``unisim bench``: the raw batched baseline and the one-env step cost.

Reached through the plugin's ``unisim_raw_stepper`` / ``unisim_step_cost_probe`` hooks (``spec.py``);
MuJoCo is imported only when a loop is built.
"""

from __future__ import annotations

import numpy as np

from ._options import INTEGRATORS

__all__ = ["raw_stepper", "step_cost_probe"]


def _model(scene: str, sim_dt: float, options):
    import mujoco

    m = mujoco.MjModel.from_xml_path(scene)
    m.opt.timestep = sim_dt
    if getattr(options, "integrator", None):
        m.opt.integrator = getattr(mujoco.mjtIntegrator, INTEGRATORS[options.integrator])
    for field in ("iterations", "ls_iterations", "noslip_iterations"):
        if getattr(options, field, None):
            setattr(m.opt, field, getattr(options, field))
    return m


def _keyframe(m, backend) -> int:
    key = backend.scene.default_keyframe
    return m.key(key).id if key else -1


def raw_stepper(scene: str, n: int, sim_dt: float, nsteps: int, backend, ctrl):
    """``(call, close)``: ``mujoco.batch.Batch`` of ``n`` envs with the backend's threads and
    persistence: write ctrl, step ``nsteps``, read qpos and qvel."""
    from mujoco.batch import Batch

    from ._backend import needs_persistent

    m = _model(scene, sim_dt, backend.options)
    threads = backend.options.threads
    b = Batch(m, n, 0 if threads is None else threads, persistent=needs_persistent(m))
    b.reset(keyframe=_keyframe(m, backend))
    ctrl_v, qpos_v, qvel_v = b.bind("ctrl"), b.bind("qpos"), b.bind("qvel")
    ctrl = np.asarray(ctrl, dtype=np.float64)

    def call():
        ctrl_v[...] = ctrl
        b.step(None, nsteps, 0)
        return qpos_v.astype(np.float32), qvel_v.astype(np.float32)

    return call, lambda: None


def step_cost_probe(scene: str, sim_dt: float, nsteps: int, backend, ctrl):
    """One ``MjData`` on the calling thread doing the raw loop's work: write ctrl, ``mj_step``
    ``nsteps`` times, read qpos and qvel."""
    import mujoco

    m = _model(scene, sim_dt, backend.options)
    d = mujoco.MjData(m)
    key = _keyframe(m, backend)
    if key >= 0:
        mujoco.mj_resetDataKeyframe(m, d, key)
    ctrl = np.asarray(ctrl, dtype=np.float64).reshape(-1)

    def call():
        d.ctrl[:] = ctrl
        for _ in range(nsteps):
            mujoco.mj_step(m, d)
        return d.qpos.astype(np.float32), d.qvel.astype(np.float32)

    return call
