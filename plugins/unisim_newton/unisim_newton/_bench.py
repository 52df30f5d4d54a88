"""Newton's own loops for ``unisim bench``: the raw batched baseline and the one-world step cost.

Reached through the plugin's ``unisim_raw_stepper`` / ``unisim_step_cost_probe`` hooks (``_hooks.py``);
warp and newton are imported only when a loop is built. Each call ends with the host copies of
``joint_q`` and ``joint_qd``, which wait for the device (``wp.array.numpy()`` synchronises).
"""

from __future__ import annotations

import numpy as np

__all__ = ["raw_stepper", "step_cost_probe"]


def _loop(solver, model, states: list, control, sim_dt: float, nsteps: int, ctrl: np.ndarray):
    import warp as wp

    ctrl32 = np.ascontiguousarray(ctrl, dtype=np.float32).reshape(-1)
    has_ctrl = ctrl32.size > 0
    graphs = []  # each direction's substep captured once and replayed, as the backend does
    for a, b in (states, states[::-1]):
        with wp.ScopedDevice(model.device), wp.ScopedCapture(device=model.device) as capture:
            solver.step(a, b, control, None, sim_dt)
        graphs.append(capture.graph)

    def call():
        if has_ctrl:
            control.mujoco.ctrl.assign(ctrl32)
        for _ in range(nsteps):
            wp.capture_launch(graphs[0])
            graphs.reverse()
            states.reverse()
        return states[0].joint_q.numpy(), states[0].joint_qd.numpy()

    return call


def raw_stepper(scene: str, n: int, sim_dt: float, nsteps: int, backend, ctrl: np.ndarray):
    """``(call, close)``: ``SolverMuJoCo.step`` x ``nsteps`` on the backend's own model and solver (the
    same worlds and device: the difference is the adapter alone) with two states of its own, after
    ``control.mujoco.ctrl.assign``; then ``joint_q``/``joint_qd`` as Newton lays them out (its
    ``[v_com, w_world]`` free-joint velocity, not converted)."""
    import newton

    model = backend.newton_model
    states = [model.state(), model.state()]
    newton.eval_fk(model, backend.newton_state.joint_q, backend.newton_state.joint_qd, states[0])
    states[0].joint_q.assign(backend.newton_state.joint_q)
    states[0].joint_qd.assign(backend.newton_state.joint_qd)
    return _loop(backend._solver, model, states, model.control(), sim_dt, nsteps, ctrl), lambda: None


def step_cost_probe(scene: str, sim_dt: float, nsteps: int, backend, ctrl: np.ndarray):
    """One world of the same scene on the backend's device (Newton's importer and ``SolverMuJoCo``, as
    the backend builds them) doing the raw loop's work. Warp's CPU device runs a launch's worlds one
    after another on one core: ``threads`` is 1 there."""
    import newton

    from ._scene import build_model, build_solver

    model, _ = build_model(scene, backend._lite, 1, backend.device)
    solver = build_solver(model, scene, buffers=backend.buffers)
    states = [model.state(), model.state()]
    world0 = backend.newton_state.joint_q.numpy()[:model.joint_q.shape[0]]  # the backend's env 0 (its state)
    model.joint_q.assign(world0)
    newton.eval_fk(model, model.joint_q, model.joint_qd, states[0])
    states[0].joint_q.assign(model.joint_q)
    call = _loop(solver, model, states, model.control(), sim_dt, nsteps, ctrl)
    call.threads = 1 if backend.device == "cpu" else None
    return call
