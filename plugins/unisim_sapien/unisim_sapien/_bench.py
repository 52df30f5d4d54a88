"""SAPIEN's own loops for ``unisim bench``: the raw baseline and the one-env step cost.

Reached through the plugin's ``unisim_raw_stepper`` / ``unisim_step_cost_probe`` hooks (``_hooks.py``);
sapien is imported only by the backends the loops run on.
"""

from __future__ import annotations

import numpy as np

__all__ = ["raw_stepper", "step_cost_probe"]


def _servo_arrays(backend, ctrl: np.ndarray):
    """Per articulation with dofs, in PhysX's dof order: ``(a, u, kp, kv gear, gear, lo, hi, implicit)``,
    the MJCF position servos' terms (``u`` ``(N, dofs)``: ctrl clamped to ctrlrange once); ``None``
    when an actuator is no position servo or two drive one joint (no plain loop for that scene)."""
    d = backend._drives
    if (d.kind != "position").any() or len(set(d.act_joint.tolist())) != len(d.act_joint) or d.explicit_damping.any():
        return None
    u_all = np.clip(np.asarray(ctrl, dtype=np.float64), d.ctrl_range[:, 0], d.ctrl_range[:, 1])
    out = []
    for a, rows, _, _ in backend._dofs:
        width = len(rows)
        u, kp, kvg, g = np.zeros((len(u_all), width)), np.zeros(width), np.zeros(width), np.ones(width)
        lo, hi, imp = np.full(width, -np.inf), np.full(width, np.inf), np.zeros(width)
        for i, j in enumerate(d.act_joint):
            hit = np.flatnonzero(rows == j)
            if hit.size:
                p = hit[0]
                u[:, p], kp[p], kvg[p], g[p] = u_all[:, i], d.kp[i], d.kv[i] * d.gear[i], d.gear[i]
                lo[p], hi[p] = d.force_range[i]
                imp[p] = d.gear[i] ** 2 * d.kv[i] * d.kv_on_drive[i]
        out.append((a, u, kp, kvg, g, lo, hi, imp, backend._ref[rows]))
    return out


def raw_stepper(scene: str, n: int, sim_dt: float, nsteps: int, backend, ctrl: np.ndarray):
    """``(call, close)``: SAPIEN's own API on the backend's scenes (the same engine objects: the difference
    is the adapter alone), doing the contract's work with the least Python: per substep and env, the
    explicit servo efforts from ``get_qpos``/``get_qvel`` (MuJoCo's ``kp (u - gear q) - kv gear qd``,
    clamped to forcerange, the drive's implicit damping compensated), ``set_qf``, then every
    ``PhysxCpuSystem.step()``; after the substeps each articulation's root pose, root link velocities,
    ``get_qpos`` and ``get_qvel``. ``None`` for scenes whose actuators are not one position servo per joint."""
    servos = _servo_arrays(backend, ctrl)
    if servos is None:
        return None
    systems = [s.physx_system for s in backend.sapien_scenes]
    arts = backend.sapien_articulations
    envs = [[(env[a], u[i], kp, kvg, g, lo, hi, imp, ref) for a, u, kp, kvg, g, lo, hi, imp, ref in servos]
            for i, env in enumerate(arts)]
    flat = [a for env in arts for a in env]
    roots = [a.get_links()[0] for a in flat]
    f32 = np.float32

    def call():
        for _ in range(nsteps):
            for env in envs:
                for art, u, kp, kvg, g, lo, hi, imp, ref in env:
                    qd = art.get_qvel()
                    f = kp * (u - g * (art.get_qpos() + ref)) - kvg * qd
                    art.set_qf((g * np.minimum(np.maximum(f, lo), hi) + imp * qd).astype(f32))
            for system in systems:
                system.step()
        return ([(a.get_root_pose(), a.get_qpos()) for a in flat],
                [(r.linear_velocity, r.angular_velocity, a.get_qvel()) for a, r in zip(flat, roots)])

    return call, lambda: None


def step_cost_probe(scene: str, sim_dt: float, nsteps: int, backend, ctrl: np.ndarray):
    """The raw loop on a one-env backend built as ``backend`` (same options). PhysX CPU steps hold the
    GIL and one scene steps on one thread: ``threads`` is 1 (the N envs step one after another)."""
    import attrs

    from unisim_core import SceneCfg, create_backend

    options = attrs.asdict(backend.options, recurse=False)
    one = create_backend("sapien", SceneCfg(scene, default_keyframe=backend.scene.default_keyframe), 1, sim_dt,
                         **options)
    made = raw_stepper(scene, 1, sim_dt, nsteps, one, ctrl)
    if made is None:
        one.close()
        return None
    call = made[0]
    call.backend, call.threads = one, 1  # the backend owns the scene: it lives as long as the loop
    return call
