"""The scripted scenarios the reference trajectories are recorded from.

A scenario gives, for a kit scene and two envs, the initial state, the ctrl per sample interval
and the velocity kicks; ``record`` runs it on MuJoCo and stores the result. Controls are smooth,
inside ctrlrange, and strong enough to move every actuated joint; kicks hit mid-trajectory.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import numpy as np

__all__ = ["Scenario", "SCENARIOS"]


@attrs.frozen
class Scenario:
    """``setup(model) -> (qpos0 (2, nq), qvel0 (2, nv))``; ``ctrl(t, model, datas) -> (2, nu)``, the
    ctrl of the interval starting at ``t`` s given the two envs' ``MjData`` (so a recording may
    compensate gravity; the replay only sees the stored ctrl); ``kicks``: ``{time s: (2, nv) qvel
    delta}`` applied before the interval starting there."""

    scene: str
    duration: float  # s
    substeps: int  # substeps per sample
    tier: str
    setup: Callable
    ctrl: Callable
    kicks: Callable = lambda model: {}


def _zero_ctrl(t, m, datas):
    return np.zeros((2, m.nu))


def _pendulum(m):
    return np.array([[0.3], [-0.6]]), np.array([[0.0], [0.5]])


def _double_pendulum(m):
    return np.array([[0.1, -0.05], [-0.08, 0.12]]), np.zeros((2, 2))


def _free_body(m):
    qpos = np.array([[0, 0, 1, 1, 0, 0, 0], [0.5, -0.2, 2, np.cos(0.3), 0, np.sin(0.3), 0]], dtype=float)
    qvel = np.array([[1.0, 0.0, 3.0, 0.5, -0.3, 0.2], [-0.5, 0.4, 0.0, 0.1, 0.4, -0.5]])
    return qpos, qvel


def _fixed_arm(m):
    return np.array([[0.0, 0.3, 0.4, 0.2], [0.5, -0.2, 0.6, -0.3]]), np.zeros((2, 4))


def _fixed_arm_ctrl(t, m, datas):
    """Gravity and Coriolis compensation of the recorded state (qfrc_bias) plus a torque wave: the
    arm swings through its workspace without falling over or reaching its limits."""
    wave = np.array([0.3 * np.sin(3 * t), 0.8 * np.sin(2 * t), 0.5 * np.cos(2.5 * t), 0.1 * np.sin(4 * t)])
    return np.stack([d.qfrc_bias[:4] + sign * wave for d, sign in zip(datas, (1.0, -0.5))])


def _hinges(m):
    qvel = np.zeros((2, m.nv))
    qvel[:, 5] = [1.0, -2.0]  # damped_joint
    return np.zeros((2, m.nq)), qvel


def _hinges_ctrl(t, m, datas):
    # motor, armature_motor, position, forcelim, velocity, limited_motor (off: limit impacts are
    # checked by the dynamics layer, their bounce is engine-specific)
    base = np.array([0.3 * np.sin(5 * t), 0.8 * np.cos(3 * t), 0.5 * np.sin(2 * t), 0.6 * np.sin(4 * t),
                     3 * np.sin(3 * t), 0.0])
    return np.stack([base, -base])


def _hinges_kicks(m):
    kick = np.zeros((2, m.nv))
    kick[:, [0, 2]] = [[2.0, 1.0], [-1.0, 3.0]]
    return {0.5: kick}


def _probe(m):
    qpos = np.zeros((2, m.nq))
    qpos[:, 2] = 1.0
    qpos[:, 3] = 1.0
    qpos[1, 3:7] = [np.cos(0.4), np.sin(0.4), 0, 0]
    qpos[:, 7] = [0.4, -0.7]
    qvel = np.zeros((2, m.nv))
    qvel[:, 0:6] = [[0.5, 0.0, 2.0, 0.6, -0.2, 0.4], [0.0, -0.3, 1.0, -0.2, 0.5, 0.1]]
    return qpos, qvel


def _box(m):
    qpos = np.array([[0, 0, 0.1, 1, 0, 0, 0], [0.3, 0.1, 0.1, np.cos(0.2), 0, 0, np.sin(0.2)]], dtype=float)
    qvel = np.zeros((2, 6))
    qvel[:, 0:2] = [[0.3, 0.0], [-0.15, 0.25]]  # slides ~5 mm before static friction holds
    return qpos, qvel


def _hfield(m):
    qpos = np.array([[1.0, 0, 0.55, 1, 0, 0, 0], [0.5, 0.5, 0.6, 1, 0, 0, 0]], dtype=float)
    return qpos, np.zeros((2, 6))  # dropped onto the plateau (h = 0.4): lands and rests at z = 0.5


def _home(m):
    import mujoco

    key = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_KEY, "home")
    qpos = np.tile(m.key_qpos[key], (2, 1))
    qpos[1, 0:2] = [0.5, -0.3]
    return qpos, np.zeros((2, m.nv))


def _home_ctrl(t, m, datas):
    import mujoco

    target = m.key_qpos[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_KEY, "home")][7:]
    return np.stack([target, target + 0.1 * np.sin(2 * np.pi * t) * np.tile([0.0, 1.0, -1.0], 4)])


def _base_kick(m):
    kick = np.zeros((2, m.nv))
    kick[:, 0:2] = [[0.3, 0.0], [0.0, -0.3]]
    return {0.5: kick}


def _friction(m):
    return np.zeros((2, 1)), np.array([[1.0], [-0.6]])


SCENARIOS: dict[str, Scenario] = {
    "pendulum": Scenario("pendulum", 3.0, 10, "tight", _pendulum, _zero_ctrl,
                         lambda m: {1.5: np.array([[0.5], [-0.5]])}),
    "double_pendulum": Scenario("double_pendulum", 2.0, 10, "tight", _double_pendulum, _zero_ctrl),
    "free_body": Scenario("free_body", 1.0, 5, "tight", _free_body, _zero_ctrl),
    "fixed_arm": Scenario("fixed_arm", 1.0, 5, "tight", _fixed_arm, _fixed_arm_ctrl),
    "actuated_hinges": Scenario("actuated_hinges", 1.0, 10, "tight", _hinges, _hinges_ctrl, _hinges_kicks),
    "sensor_probe": Scenario("sensor_probe", 1.0, 5, "tight", _probe, _zero_ctrl),
    "frictionloss_hinge": Scenario("frictionloss_hinge", 0.6, 10, "contact", _friction, _zero_ctrl),
    "box_on_plane": Scenario("box_on_plane", 1.0, 5, "contact", _box, _zero_ctrl),
    "hfield_terrain": Scenario("hfield_terrain", 1.0, 5, "contact", _hfield, _zero_ctrl),
    "quadruped": Scenario("quadruped", 1.0, 5, "contact", _home, _home_ctrl, _base_kick),
}
