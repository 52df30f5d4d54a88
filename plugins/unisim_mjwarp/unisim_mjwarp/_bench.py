"""MuJoCo Warp's own loops for ``unisim bench``: the raw batched baseline and the one-world step cost.

Reached through the plugin's ``unisim_raw_stepper`` / ``unisim_step_cost_probe`` hooks (``_hooks.py``);
warp and MuJoCo Warp are imported only when a loop is built. Each call ends with the host copies of
qpos and qvel, which wait for the device (``wp.array.numpy()`` synchronises).
"""

from __future__ import annotations

import numpy as np

__all__ = ["raw_stepper", "step_cost_probe"]


def _loop(m, d, device: str, nsteps: int, ctrl: np.ndarray):
    import mujoco_warp as mjw
    import warp as wp

    from ._kernels import host_views

    ctrl32 = np.ascontiguousarray(ctrl, dtype=np.float32)
    with wp.ScopedCapture(device=device) as capture:  # the substep replayed as a captured graph, as the backend
        mjw.step(m, d)  # does (a CUDA graph, or warp's recorded launches on its CPU device)
    graph = capture.graph
    views = host_views(d, device)

    if views is not None:  # warp's CPU device: ctrl written and the state read in place, as the backend does
        ctrl_view, qpos_view, qvel_view = views

        def call():
            with wp.ScopedDevice(device):
                ctrl_view[...] = ctrl32
                for _ in range(nsteps):
                    wp.capture_launch(graph)
                return qpos_view.copy(), qvel_view.copy()

        return call

    def call():
        with wp.ScopedDevice(device):
            d.ctrl.assign(ctrl32)
            for _ in range(nsteps):
                wp.capture_launch(graph)
            return d.qpos.numpy(), d.qvel.numpy()

    return call


def raw_stepper(scene: str, n: int, sim_dt: float, nsteps: int, backend, ctrl: np.ndarray):
    """``(call, close)``: ``mjw.step`` x ``nsteps`` on the backend's own ``mjw.Model``/``mjw.Data`` (the
    same worlds, buffers and device, so the difference is the adapter alone), after ``d.ctrl.assign``;
    then ``qpos.numpy()`` and ``qvel.numpy()`` (on warp's CPU device: ctrl written into, and qpos/qvel
    copied from, views of the engine's memory made once)."""
    return _loop(backend.warp_model, backend.warp_data, backend.device, nsteps, ctrl), lambda: None


def step_cost_probe(scene: str, sim_dt: float, nsteps: int, backend, ctrl: np.ndarray):
    """One world (``nworld=1``) of the backend's ``mjModel`` on its device doing the raw loop's work.
    Warp's CPU device runs a launch's worlds one after another on one core: ``threads`` is 1 there."""
    import mujoco
    import mujoco_warp as mjw
    import warp as wp

    m = backend.model
    d = mujoco.MjData(m)
    d.qpos[:] = backend.get_default_qpos()
    mujoco.mj_forward(m, d)
    with wp.ScopedDevice(backend.device):
        wm = mjw.put_model(m)
        wd = mjw.put_data(m, d, nworld=1, nconmax=backend._buffers[0], njmax=backend._buffers[1])
    call = _loop(wm, wd, backend.device, nsteps, ctrl)
    call.threads = 1 if backend.device == "cpu" else None
    return call
