"""The conformance kit through Ray shards: the whole kit with MuJoCo inside on the local Ray instance the
plugin starts; the layers where placement matters on a two-node cluster with ``placement='spread'``;
four layers with MotrixSim inside (float32 and declared deviations through the shards).

Cost on the shared 2-core machine, wall / CPU of the whole process tree (Ray's GCS, raylets and
workers included), two runs at load 3-5 (docs/ray.md, "Tests of the plugin"). Before actor reuse the
whole kit ran on the two-node cluster, 425 s / 471 s, and the MotrixSim run took 143 s / 137 s:
568 s / 609 s in all; now 128-190 s / 137-161 s for the three tests.
"""

from __future__ import annotations

import pytest

from unisim_conformance.runner import run_kit

pytest.importorskip("ray", reason="the ray backend needs Ray (pip install ./plugins/unisim_ray)")


def test_kit_passes_on_ray_sharding_mujoco():
    """Every layer of the kit through 2 shards of MuJoCo, with shard recovery on (every state-changing
    reply carries restore rows), on the local Ray instance the first backend starts. The kit's
    backends take the shard actors the previous check's backend parked (``reuse_actors``): a backend
    costs its inner build, not two process starts. 457 checks: 57-90 s / 56-76 s (without reuse the
    same run took 722 s / 478 s)."""
    run_kit("--unisim-backend=ray", "--unisim-option", "inner='mujoco'", "--unisim-option", "shards=2",
            "--unisim-option", "max_shard_restarts=1").assert_green()


def test_kit_state_and_determinism_layers_pass_on_ray_spread_over_a_two_node_cluster():
    """Where placement matters for the contract: shards on two nodes (``placement='spread'``, one
    placement group per backend, no actor reuse), recovery on. The state layer routes set_state and
    subset isolation across the nodes; the determinism layer holds two spread backends at once and
    restores snapshots. Placement itself (spread, pack, pinned), groups released on close, refusal and
    fault, and lost nodes rebuilt bit for bit are test_cluster.py's; everything else of the kit is the
    run above (the rest of the kit does not depend on where shards run). 42 checks: 46-64 s / 49-51 s,
    cluster start included."""
    from unisim_ray.testing import local_cluster

    # determinism holds two backends at once: 8 logical CPUs per node leave room for their bundles
    with local_cluster([{"num_cpus": 8}, {"num_cpus": 8}]) as cluster:
        run_kit("--unisim-backend=ray", "--unisim-option", "inner='mujoco'",
                "--unisim-option", "shards=2", "--unisim-option", f"address={cluster.address!r}",
                "--unisim-option", "placement='spread'", "--unisim-option", "max_shard_restarts=1",
                "-m", "state or determinism").assert_green()


def test_kit_passes_on_ray_sharding_motrix():
    """The whole kit through Ray is the MuJoCo run above; this one proves that a second inner engine's
    float32 state, sensors and declared deviations travel through the shards: the surface, state,
    determinism and reference layers (172 checks; all 485 took 413 s on 2 cores before actor reuse).
    26-37 s / 31-34 s (143 s / 137 s before actor reuse)."""
    outcomes = run_kit("--unisim-backend=ray", "--unisim-option", "inner='motrix'", "--unisim-option", "shards=2",
                       "-m", "surface or state or determinism or reference").assert_green()
    assert outcomes["determinism::reset_reproduces_trajectory[qpos_trajectory]"] == "xfailed"
