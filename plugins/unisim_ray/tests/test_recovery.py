"""Shard recovery on a real local Ray instance with real MuJoCo inside (``max_shard_restarts``).

Each test runs one trajectory on the Ray backend (2 shards of ``FaultyMujoco``: MuJoCo plus
sentinel-triggered faults) and on the same backend in-process, breaks a shard before a step, a
set_state and a randomization, and compares bit for bit after every call (see recovery_scenario).
Node loss is tested on a multi-node cluster in test_cluster.py.
"""

from __future__ import annotations

import numpy as np
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("unisim_mujoco")

from recovery_scenario import N, assert_same, kill_and_confirm, make_pair, run, runtime_env  # noqa: E402

import unisim_core  # noqa: E402
from unisim_core import InitRandomizationPlan, RandomizationOp  # noqa: E402
from unisim_ray import ShardDiedError, ShardFaultedError, ShardRecoveredWarning  # noqa: E402

pytestmark = pytest.mark.usefixtures("local_ray")




def test_killed_shard_actors_are_rebuilt_and_the_trajectory_matches_in_process(made):
    b, ref = make_pair(made, max_shard_restarts=2)
    killed = []

    def kill(call: str, k: int) -> dict:
        killed.append((call, b.describe_shards()[k].pid))
        kill_and_confirm(b._actors[k])
        return {}

    with pytest.warns(ShardRecoveredWarning) as caught:
        run(b, ref, kill)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 3
    assert "shard 1 (envs [3:6)) died during step" in messages[0] and "retrying the step" in messages[0]
    assert "shard 0 (envs [0:3)) died during set_state" in messages[1]
    assert "shard 1 (envs [3:6)) died during write of model field 'body_mass'" in messages[2]
    shards = b.describe_shards()
    assert [s.restarts for s in shards] == [1, 2]
    assert {s.pid for s in shards}.isdisjoint(pid for _, pid in killed)  # fresh actors
    assert len(b.recovery_seconds) == 3
    # shard 1 has used its restarts: the next death is raised as before and poisons the backend
    kill_and_confirm(b._actors[1])
    with pytest.raises(ShardDiedError, match=r"shard 1 \(envs \[3:6\)\) died during step .*already rebuilt "
                                             r"max_shard_restarts=2 time\(s\); the backend is now unusable"):
        b.step(np.zeros((N, b.num_actuators)), 1)
    with pytest.raises(ShardFaultedError):
        b.get_qpos()


def test_shard_processes_dying_mid_call_are_rebuilt_and_the_trajectory_matches_in_process(made, tmp_path):
    """The shard's process exits inside the inner call (not between calls): the call is retried
    on a rebuilt shard from the state before it, once per place (step, set_state, model write)."""
    b, ref = make_pair(made, max_shard_restarts=2, actor_options={"runtime_env": runtime_env(tmp_path)})
    sentinels = {"step": {"ctrl": 666.0}, "set_state": {"qvel": 666.0}, "randomization": {"body_mass": 666.0}}
    with pytest.warns(ShardRecoveredWarning) as caught:
        run(b, ref, lambda call, k: sentinels[call])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["body_mass", "set_state", "step"]  # each died once
    assert len(caught) == 3 and [s.restarts for s in b.describe_shards()] == [1, 2]


def test_engine_errors_keep_their_class_name_the_shard_and_do_not_fault(made):
    """An EngineError inside a shard is the inner backend's, raised as in-process (same class,
    naming the shard); it is not a fault (no rebuild), and a later rebuild still restores the
    state the error left (the host re-read its restore rows)."""
    b, ref = make_pair(made, max_shard_restarts=1)
    ctrl = np.tile(ref.get_default_qpos()[7:], (N, 1))
    ctrl[4, 0] = 777.0  # env 4: shard 1 fails it, every other env steps
    qvel = np.zeros((1, ref.nv))
    qvel[0, -1] = 777.0
    plan = InitRandomizationPlan([RandomizationOp(term="body_mass", values=np.array([[777.0]]), env_ids=[5],
                                                  target_ids=[1], operation="set")])
    # (in_process message, sharded message): the inner names shard-local env ids, the context the shard
    calls = {"step": (lambda x: x.step(ctrl, 2), (r"MuJoCo failed in env\(s\) \[4\]",
                                                  r"shard 1 \(envs \[3:6\)\): MuJoCo failed in env\(s\) \[1\]")),
             "set_state": (lambda x: x.set_state(np.array([3]), ref.get_qpos()[[3]], qvel),
                           ("qvel 777", r"shard 1 \(envs \[3:6\)\): engine failed on qvel 777")),
             "randomization": (lambda x: x.apply_init_randomization(plan),
                               ("body_mass 777", r"shard 1 \(envs \[3:6\)\): engine failed on body_mass 777"))}
    for what, (call, (local, sharded_msg)) in calls.items():
        with pytest.raises(unisim_core.EngineError, match=local) as in_process:
            call(ref)
        with pytest.raises(unisim_core.EngineError, match=sharded_msg) as sharded:
            call(b)
        assert type(sharded.value) is type(in_process.value) is unisim_core.EngineError
        assert_same(b, ref, f"after an engine error in {what}")
    assert b.recovery_seconds == ()
    kill_and_confirm(b._actors[1])
    with pytest.warns(ShardRecoveredWarning):
        b.step(np.tile(ref.get_default_qpos()[7:], (N, 1)), 2)
    ref.step(np.tile(ref.get_default_qpos()[7:], (N, 1)), 2)
    assert_same(b, ref, "after a rebuild following engine errors")
