"""Rebuilding the engine model with more contact sensors (a new contact filter, :mod:`._contacts`).

A MotrixSim model cannot gain sensors once loaded, so the file is loaded again with them
(:meth:`~unisim_motrix._engine_mjcf.EngineMjcf.file`) and a new batched ``SceneData`` takes over
every env's state from the old one: ``dof_pos``/``dof_vel`` (float32, bit for bit), controls, mocap
poses and every per-env override the backend writes (gravity; link mass, centre of mass and
inertia; geom friction; joint armature and frictionloss; position-actuator kp and kd). The contact
solver's warm start is the engine's and is not carried over (README, difference 5): a contact
trajectory continues within solver tolerance, not bit for bit, as after ``set_physics_state``.
"""

from __future__ import annotations

import numpy as np

from unisim_core import SimBackend  # the engine's backend (its _backend module imports this one)

from ._errors import engine_call

__all__ = ["rebuild"]


def _transfer(backend: SimBackend, M2, D2) -> None:
    M, D = backend._M, backend._D
    if M.num_dof_pos:
        D2.set_dof_pos(np.asarray(D.dof_pos), M2)
        D2.set_dof_vel(np.asarray(D.dof_vel))
    if M.num_actuators:
        D2.actuator_ctrls = np.asarray(D.actuator_ctrls)
    M2.set_gravity_override(D2, M.get_gravity_override(D))
    for i, (old, new) in enumerate(zip(M.links, M2.links)):
        if backend._moving[i + 1]:
            new.set_mass_override(D2, old.get_mass_override(D))
            new.set_center_of_mass_override(D2, old.get_center_of_mass_override(D))
            new.set_inertia_override(D2, old.get_inertia_override(D))
        if old.body.is_mocap and old.body.base_link.index == old.index:
            new.body.mocap.set_pose(D2, old.get_pose(D))
    for old, new in zip(M.geoms, M2.geoms):
        new.set_friction_override(D2, old.get_friction_override(D))
    for old, new in zip(M.joints, M2.joints):
        if int(old.num_dof_pos) == 1:
            new.set_armature_override(D2, old.get_armature_override(D))
            new.set_frictionloss_override(D2, old.get_frictionloss_override(D))
    for old, new in zip(M.actuators, M2.actuators):
        if type(old).__name__ == "PositionActuator":
            new.set_kp_override(D2, old.get_kp_override(D))
            new.set_damping_override(D2, old.get_kd_override(D))
    M2.forward_kinematic(D2)


def rebuild(backend: SimBackend, pairs: list[tuple[int, int]]) -> None:
    """Load the scene again with one contact sensor per body pair of ``pairs`` (MuJoCo body ids, in
    sensor order) and move every env over (see the module docstring)."""
    names = backend._source.body_names()
    M2 = backend._load_model(tuple((names[a], names[b]) for a, b in pairs))
    D2 = backend._new_data(M2)
    with engine_call("rebuild: state transfer to the model with contact sensors"):
        _transfer(backend, M2, D2)
    backend._install(M2, D2)
