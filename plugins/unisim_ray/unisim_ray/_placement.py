"""Where shards run: ``placement`` (a Ray placement group, spread or packed) and ``shard_resources``."""

from __future__ import annotations

import time
from typing import Any

from unisim_core.contract.errors import InvalidInputError

from ._errors import ShardStartupError
from ._options import PLACEMENTS, RayOptions

__all__ = ["Placement"]


class Placement:
    """Ray keywords of each shard's actor; owns the placement group when ``placement`` is set.

    A bundle per shard holds ``cpus`` CPUs and ``shard_resources``. Ray re-places a bundle whose
    node died once the group's resources fit on the live nodes, so a rebuilt shard goes into the
    same bundle index and lands on a live node.
    """

    def __init__(self, ray: Any, opts: RayOptions, ranges: list[tuple[int, int]], cpus: float) -> None:
        self._ray, self.group = ray, None
        base: dict[str, Any] = {"num_cpus": cpus, "max_restarts": 0, "max_task_retries": 0, **opts.actor_options}
        if opts.shard_resources:
            base["resources"] = dict(opts.shard_resources)
        self._base = base
        if opts.placement is None:
            return
        bundle = {**({"CPU": cpus} if cpus > 0 else {}), **opts.shard_resources}
        if not bundle:
            raise InvalidInputError(f"placement={opts.placement!r}: a shard's bundle would be empty "
                                    f"(actor_num_cpus=0 and no shard_resources); give it CPUs or a resource")
        from ray.util.placement_group import placement_group

        shards = len(ranges)
        self.group = placement_group([bundle] * shards, strategy=PLACEMENTS[opts.placement])
        deadline = time.monotonic() + opts.init_timeout_s
        ready, _ = ray.wait([self.group.ready()], timeout=max(0.0, deadline - time.monotonic()))
        if not ready:
            self.release()
            raise ShardStartupError(
                f"backend 'ray': placement={opts.placement!r} could not reserve {shards} bundles of {bundle} "
                f"within init_timeout_s={opts.init_timeout_s:g} s (available Ray resources: "
                f"{ray.available_resources()})", tuple((k, a, b) for k, (a, b) in enumerate(ranges)))

    def options(self, k: int) -> dict[str, Any]:
        """``ActorClass.options(...)`` keywords of shard ``k``."""
        if self.group is None:
            return dict(self._base)
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        strategy = PlacementGroupSchedulingStrategy(placement_group=self.group, placement_group_bundle_index=k)
        return {**self._base, "scheduling_strategy": strategy}

    def release(self) -> None:
        """Remove the placement group (idempotent)."""
        group, self.group = self.group, None
        if group is not None:
            try:
                self._ray.util.remove_placement_group(group)
            except Exception:  # noqa: S110 - Ray already gone at exit
                pass
