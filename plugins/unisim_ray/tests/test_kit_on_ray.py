"""The conformance kit on Ray shards of MuJoCo (the whole kit, on a two-node Ray cluster on this machine,
with spread placement and shard recovery on) and of MotrixSim (four layers, on a local Ray instance)."""

from __future__ import annotations

import pytest

from unisim_conformance.runner import run_kit

pytest.importorskip("ray", reason="the ray backend needs Ray (pip install ./plugins/unisim_ray)")

def test_kit_passes_on_ray_sharding_mujoco_over_a_two_node_cluster():
    from unisim_ray.testing import local_cluster

    # the kit holds a few backends at once: 8 logical CPUs per node leave room for their shards
    with local_cluster([{"num_cpus": 8}, {"num_cpus": 8}]) as cluster:
        run_kit("--unisim-backend=ray", "--unisim-option", "inner='mujoco'",
                "--unisim-option", "shards=2", "--unisim-option", f"address={cluster.address!r}",
                "--unisim-option", "placement='spread'", "--unisim-option", "max_shard_restarts=1").assert_green()


def test_kit_passes_on_ray_sharding_motrix():
    """The whole kit through Ray is the MuJoCo run above; this one proves that a second inner engine's
    float32 state, sensors and declared deviations travel through the shards: the surface, state,
    determinism and reference layers (172 checks; 95 s instead of 413 s for all 485 on 2 cores)."""
    outcomes = run_kit("--unisim-backend=ray", "--unisim-option", "inner='motrix'", "--unisim-option", "shards=2",
                       "-m", "surface or state or determinism or reference").assert_green()
    assert outcomes["determinism::reset_reproduces_trajectory[qpos_trajectory]"] == "xfailed"
