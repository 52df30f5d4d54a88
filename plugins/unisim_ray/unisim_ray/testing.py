"""A multi-node Ray cluster on one machine (``ray.cluster_utils.Cluster``), for tests and for trying
placement and fault recovery before a real cluster.

>>> with local_cluster([{"num_cpus": 2}, {"num_cpus": 2}]) as cluster:
...     env = create_backend("ray", scene, 512, 0.005, address=cluster.address, placement="spread")
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["local_cluster", "FAST_NODE_DEATH"]

#: GCS health checks that declare a silent node dead in about 1.5 s (Ray's default: ~30 s).
FAST_NODE_DEATH = {"health_check_period_ms": 500, "health_check_timeout_ms": 500,
                   "health_check_failure_threshold": 3}


@contextlib.contextmanager
def local_cluster(workers: Sequence[dict[str, Any]], system_config: dict[str, Any] | None = None) -> Iterator[Any]:
    """A head node with no CPUs (nothing is scheduled beside the GCS) and one worker node per
    ``workers`` entry (``Cluster.add_node`` keywords: ``num_cpus``, ``resources``, …); the GCS
    takes a free port. Yields the ``Cluster`` (``.address`` to connect, ``add_node``/``remove_node``);
    on exit this process kills its idle shard actors and leaves the cluster (``ray.shutdown``) if it
    joined it, and every node stops."""
    import ray
    from ray.cluster_utils import Cluster

    from ._backend import LOCAL_RAY_SYSTEM_CONFIG
    from ._pool import release_idle_actors

    config = {**LOCAL_RAY_SYSTEM_CONFIG, **(system_config or {})}
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 0, "include_dashboard": False, "_system_config": config})
    try:
        for node in workers:
            cluster.add_node(**node)
        yield cluster
    finally:
        if ray.is_initialized() and ray.get_runtime_context().gcs_address == cluster.address:
            release_idle_actors()
            ray.shutdown()
        cluster.shutdown()
