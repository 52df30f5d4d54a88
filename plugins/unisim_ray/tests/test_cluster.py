"""unisim-ray on a real multi-node Ray cluster on this machine (``unisim_ray.testing.local_cluster``:
a head node with no CPUs and two worker nodes, started once for the module).

Placement: ``spread`` puts the two shards on two nodes, ``pack`` on one, ``shard_resources`` on the
node that has the resource; a backend's placement group is removed on close, on a construction
refusal and on a fault. Node loss: the node hosting a shard is removed (its raylet and every
process on it killed, as when a machine goes down) before a step, a set_state and a randomization;
the shard is rebuilt on a live node and the trajectory stays bit-identical to in-process MuJoCo.
"""

from __future__ import annotations

import logging
import os
import signal
import time

import numpy as np
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("unisim_mujoco")

from recovery_scenario import SCENE, make_pair, run  # noqa: E402

from unisim_core import UnsupportedCapabilityError, create_backend  # noqa: E402
from unisim_ray import ShardDiedError, ShardRecoveredWarning  # noqa: E402
from unisim_ray.testing import FAST_NODE_DEATH, local_cluster  # noqa: E402

WORKER = {"num_cpus": 4}
BIG = {"num_cpus": 4, "resources": {"big": 4}}  # the one node shard_resources={"big": 1} may use


@pytest.fixture(scope="module")
def cluster():
    with local_cluster([WORKER, BIG], FAST_NODE_DEATH) as c:
        ray.init(address=c.address, log_to_driver=False, logging_level=logging.WARNING)
        yield c


def _nodes(b) -> list[str]:
    return [s.node_id for s in b.describe_shards()]


def _gone(pids: list[int], within_s: float = 10.0) -> bool:
    """Whether every process in ``pids`` has exited (polled up to ``within_s``: exit is asynchronous)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        alive = []
        for pid in pids:
            try:
                os.kill(pid, 0)
                alive.append(pid)
            except ProcessLookupError:
                pass
        if not alive:
            return True
        time.sleep(0.05)
    return False


def test_placement_spreads_packs_and_pins_shards_to_nodes(cluster, made):
    big = next(n["NodeID"] for n in ray.nodes() if n["Alive"] and "big" in n["Resources"])
    layouts = {}
    for name, opts in {"spread": {"placement": "spread"}, "pack": {"placement": "pack"},
                       "pinned": {"shard_resources": {"big": 1}}}.items():
        b = create_backend("ray", SCENE, 4, 0.005, inner="fake", shards=2, progress=False, **opts)
        layouts[name] = _nodes(b)
        b.close()
    assert len(set(layouts["spread"])) == 2
    assert len(set(layouts["pack"])) == 1
    assert layouts["pinned"] == [big, big]


def test_placement_groups_are_released_on_close_refusal_and_fault(cluster, made):
    """Each ``placement`` backend reserves one group; it is removed when the backend closes, when the
    inner backend refuses the scene at construction, and when a fault poisons the backend (a leaked
    group would hold its bundles' CPUs until later backends time out waiting for them)."""
    from unisim_conformance import scene_cfg

    def live_groups() -> int:
        return sum(1 for g in ray.util.placement_group_table().values() if g["state"] != "REMOVED")

    before = live_groups()
    opts = dict(inner="fake", shards=2, progress=False, placement="spread")
    b = create_backend("ray", SCENE, 4, 0.005, **opts)
    made.append(b)
    assert live_groups() == before + 1 and len(set(_nodes(b))) == 2
    b.close()
    assert live_groups() == before
    with pytest.raises(UnsupportedCapabilityError) as refused:  # the fake engine refuses frictionloss
        create_backend("ray", scene_cfg("frictionloss_hinge"), 2, 0.001, **opts)
    assert refused.value.capability == "frictionloss" and live_groups() == before
    b = create_backend("ray", SCENE, 4, 0.005, **opts)
    made.append(b)
    pids = [s.pid for s in b.describe_shards()]
    os.kill(pids[1], signal.SIGKILL)
    with pytest.raises(ShardDiedError):
        b.step(np.zeros((4, b.num_actuators), np.float32))
    assert live_groups() == before and _gone(pids)


def test_lost_nodes_are_recovered_and_the_trajectory_matches_in_process(cluster, made):
    b, ref = make_pair(made, placement="spread", max_shard_restarts=3, call_timeout_s=120)
    assert len(set(_nodes(b))) == 2
    removed: list[str] = []

    def lose_node(call: str, k: int) -> dict:
        victim = next(n for n in cluster.worker_nodes if n.node_id == b.describe_shards()[k].node_id)
        cluster.add_node(**WORKER)  # room for the rebuilt shard(s)
        cluster.remove_node(victim, allow_graceful=False)
        for shard in b.describe_shards():  # a lost machine takes every process on it
            if shard.node_id == victim.node_id:
                os.kill(shard.pid, signal.SIGKILL)
        removed.append(victim.node_id)
        return {}

    with pytest.warns(ShardRecoveredWarning) as caught:
        run(b, ref, lose_node)
    assert len(caught) >= 3 and all("rebuilt in" in str(w.message) for w in caught)
    assert not set(_nodes(b)) & set(removed)
    live = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    assert set(_nodes(b)) <= live
    pids = [s.pid for s in b.describe_shards()]
    b.close()
    assert _gone(pids)
