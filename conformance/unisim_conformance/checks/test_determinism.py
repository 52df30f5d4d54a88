"""Layer 4 - determinism: the same state and controls give the same trajectory, bitwise,
across the envs of one batch, across two backend instances, and after a reset."""

from __future__ import annotations

import numpy as np
import pytest

from unisim_conformance._props import REPLAY_PROPS
from unisim_conformance._support import all_getters, diff_report, home_ctrl

pytestmark = [pytest.mark.determinism, pytest.mark.contract("1.0")]

STEPS = 40


def _ctrl(b, i):
    return home_ctrl(b) + 0.2 * np.sin(0.3 * i)


def _rollout(b, start):
    qpos, qvel = start
    b.set_state(np.arange(b.num_envs), np.tile(qpos, (b.num_envs, 1)), np.tile(qvel, (b.num_envs, 1)))
    traj = []
    for i in range(STEPS):
        b.step(_ctrl(b, i), 1)
        traj.append(b.get_qpos())
    return np.stack(traj), all_getters(b)


def _start(b):
    q = np.asarray(b.get_keyframe_qpos("home"), dtype=np.float64)
    q[2] += 0.05
    v = np.zeros(b.nv)
    v[0:6] = [0.3, -0.1, 0.0, 0.2, 0.1, -0.3]
    return q, v


def _identical_run(kit):
    b = kit.make("quadruped", 3)
    traj, reads = _rollout(b, _start(b))
    return {"qpos_trajectory": [f"env {e} diverged from env 0 by {np.max(np.abs(traj[:, e] - traj[:, 0]))}"
                                for e in (1, 2) if not np.array_equal(traj[:, e], traj[:, 0])],
            "final_reads": [f"{k}: envs differ" for k, v in reads.items()
                            if not np.array_equal(v[1:], np.broadcast_to(v[:1], v[1:].shape))]}


@pytest.mark.parametrize("prop", ["qpos_trajectory", "final_reads"])
def test_identical_envs_stay_identical(kit, prop):
    """Three envs with the same state and controls: their qpos trajectories over 40 steps
    (qpos_trajectory) and every read after them (final_reads) are bitwise equal."""
    bad = kit.shared("determinism.identical", _identical_run)[prop]
    assert not bad, "; ".join(bad)


def _instances_run(kit):
    a, b = kit.make("quadruped", 2), kit.make("quadruped", 2)
    ta, ra = _rollout(a, _start(a))
    tb, rb = _rollout(b, _start(b))
    return {"qpos_trajectory": [] if np.array_equal(ta, tb) else [f"instances diverged by {np.max(np.abs(ta - tb))}"],
            "final_reads": diff_report(ra, rb)}


@pytest.mark.parametrize("prop", ["qpos_trajectory", "final_reads"])
def test_two_instances_agree(kit, prop):
    """Two backends built alike follow bitwise identical qpos trajectories (qpos_trajectory) and
    agree in every read at the end (final_reads)."""
    bad = kit.shared("determinism.instances", _instances_run)[prop]
    assert not bad, "instances differ in: " + ", ".join(bad)


def _reset_run(kit):
    b = kit.make("quadruped", 2)
    t1, r1 = _rollout(b, _start(b))
    t2, r2 = _rollout(b, _start(b))
    for r in (r1, r2):  # the snapshot's time column counts on across set_state
        if "get_physics_state" in r:
            r["get_physics_state"] = r["get_physics_state"][:, 1:]
    return {"qpos_trajectory": [] if np.array_equal(t1, t2) else [f"replay diverged by {np.max(np.abs(t1 - t2))}"],
            "final_reads": diff_report(r1, r2)}


@pytest.mark.parametrize("prop", REPLAY_PROPS)
def test_reset_reproduces_trajectory(kit, prop):
    """Resetting to the same state and replaying the same controls reproduces the qpos trajectory
    (qpos_trajectory) and every read at its end (final_reads; a snapshot without its time column),
    bitwise: no hidden state such as
    solver warm starts or staged forces survives set_state."""
    bad = kit.shared("determinism.reset", _reset_run)[prop]
    assert not bad, "replay after reset differs: " + ", ".join(bad)
