"""``RayOptions``: the Ray-sharded backend's typed options (no Ray import)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from unisim_core.contract.errors import InvalidInputError, InvalidTypeError
from unisim_core.contract.options import BackendOptions, boolean, optional_choice

__all__ = ["RayOptions", "SCENE_TRANSFER_MODES", "FORWARDED_OPTIONS", "PLACEMENTS"]

#: ``scene_transfer`` modes (see :class:`RayOptions`).
SCENE_TRANSFER_MODES = ("auto", "directory", "file", "path")
#: ``placement`` strategies: Ray placement-group strategies for the shards' bundles.
PLACEMENTS = {"spread": "SPREAD", "pack": "PACK"}
#: ``actor_options`` keys that ``placement`` / ``shard_resources`` set themselves.
_PLACED_KEYS = ("resources", "scheduling_strategy", "placement_group")
#: Base options forwarded to the inner backend of every shard.
FORWARDED_OPTIONS = ("np_dtype", "base_name")


def _inner(inst, attribute, value):
    if not isinstance(value, str) or not value:
        raise InvalidTypeError(f"inner: expected a backend name or 'module:Class' (str), got {value!r}")
    if value == "ray" or value.endswith(":RayBackend"):
        raise InvalidInputError("inner: the Ray backend cannot shard itself; name an engine backend such as 'mujoco'")


def _pos_int(inst, attribute, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError(f"{attribute.name}: expected an int >= 1, got {value!r}")


def _pos_float(inst, attribute, value):
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise InvalidInputError(f"{attribute.name}: expected a positive number of seconds, got {value!r}")


def _opt_nonneg_float(inst, attribute, value):
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise InvalidInputError(f"{attribute.name}: expected a number >= 0, got {value!r}")


def _nonneg_int(inst, attribute, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInputError(f"{attribute.name}: expected an int >= 0, got {value!r}")


def _resources(inst, attribute, value):
    for name, amount in value.items():
        if name in ("CPU", "GPU", "memory"):
            raise InvalidInputError(f"shard_resources: {name!r} is not a custom resource; use actor_num_cpus "
                                    f"(CPU) or actor_options (num_gpus, memory), got {dict(value)!r}")
        if (isinstance(amount, bool) or not isinstance(amount, int | float) or not math.isfinite(amount)
                or amount <= 0):
            raise InvalidInputError(f"shard_resources[{name!r}]: expected a positive number, got {amount!r}")


def _str_dict(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidTypeError(f"expected a dict of str keys, got {type(value).__name__} {value!r}")
    for k in value:
        if not isinstance(k, str):
            raise InvalidTypeError(f"expected str keys, got {type(k).__name__} {k!r}")
    return dict(value)


def _inner_options(inst, attribute, value):
    clash = [k for k in FORWARDED_OPTIONS if k in value]
    if clash:
        raise InvalidInputError(
            f"inner_options: {clash} are forwarded from the Ray backend's own options; "
            f"pass them to create_backend('ray', ...) directly"
        )


def _address(inst, attribute, value):
    if value is not None and (not isinstance(value, str) or not value):
        raise InvalidInputError(f"address: expected None, 'auto' or 'ray://host:port' / 'host:port', got {value!r}")


def _transfer(inst, attribute, value):
    if value not in SCENE_TRANSFER_MODES:
        raise InvalidInputError(f"scene_transfer: expected one of {SCENE_TRANSFER_MODES}, got {value!r}")


def _prefetch(inst, attribute, value):
    if not isinstance(value, bool) and value != "auto":
        raise InvalidInputError(f"{attribute.name}: expected True, False or 'auto', got {value!r}")


def _progress(inst, attribute, value):
    if not isinstance(value, bool) and not callable(value):
        raise InvalidTypeError(f"progress: expected a bool or a callable(ShardInfo), got {value!r}")


def _actor_options(inst, attribute, value):
    clash = [k for k in _PLACED_KEYS if k in value]
    if clash and (inst.placement is not None or inst.shard_resources):
        raise InvalidInputError(f"actor_options: {clash} conflict with placement={inst.placement!r} / "
                                f"shard_resources={inst.shard_resources!r}, which set them; use one or the other")


@attrs.frozen(kw_only=True)
class RayOptions(BackendOptions):
    """Options of the Ray-sharded backend (on top of :class:`BackendOptions`).

    - ``inner``: backend run inside each shard (entry-point name or ``"module:Class"``).
    - ``shards``: number of Ray actors; envs are split contiguously, earlier shards
      take the remainder (10 envs over 3 shards: ``[0:4) [4:7) [7:10)``). Fewer envs
      than shards use one shard per env (a shard never holds zero envs).
    - ``inner_options``: options of the inner backend (e.g. ``{"threads": 1}``);
      ``np_dtype`` and ``base_name`` are forwarded from these options instead.
    - ``address``: Ray cluster to join (``None``: the ``RAY_ADDRESS`` cluster if set,
      else a Ray instance already initialized in this process, else a new local one
      started without dashboard and shut down when the last backend using it closes).
    - ``call_timeout_s``: deadline of every steady-state call (all shards together).
    - ``init_timeout_s``: deadline for the shards to start and load the scene.
    - ``actor_num_cpus``: CPUs Ray reserves per shard actor. ``None`` (default): 1 on a
      multi-node cluster (Ray places shards by CPU), 0 on a single-node Ray instance (the
      OS schedules the shards; a reservation would only make a second backend's shards
      wait until the first backend closes).
    - ``actor_options``: extra ``ActorClass.options(...)`` keywords (``runtime_env``, …).
    - ``placement``: where the shards go. ``None`` (default): Ray's default scheduling.
      ``"spread"``: one Ray placement group, shards on as many nodes as possible;
      ``"pack"``: on as few nodes as possible. Each shard's bundle holds ``actor_num_cpus`` CPUs
      (1 when ``None``) and ``shard_resources``; a bundle on a lost node is re-placed by Ray.
    - ``shard_resources``: custom Ray resources each shard needs, e.g. ``{"sim_node": 1}`` to pin
      shards to nodes started with ``--resources='{"sim_node": 4}'``.
    - ``max_shard_restarts``: how many times each shard may be rebuilt after its actor or node
      died (0, default: a death raises :class:`~unisim_ray.ShardDiedError`). When > 0 every
      state-changing reply also carries the shard's restore rows (its full float64 state:
      bit-exact for MuJoCo, the physics snapshot otherwise) and the host records model-field
      writes, staged wrenches and handles, so a rebuilt shard continues where the dead one
      stood and the failed call is retried (a warning is logged).
    - ``ray_init_options``: extra ``ray.init`` keywords when this backend starts Ray.
    - ``scene_transfer``: how the scene reaches the shards. ``"directory"`` sends the
      model file's whole directory (meshes and includes beside it resolve);
      ``"file"`` sends the model file alone; ``"path"`` sends the path as is (shared
      file system); ``"auto"``: the directory when it holds at most
      ``scene_dir_limit_mb`` MB and 2000 files, else the file alone (with a warning).
    - ``prefetch_sensors``: when sensordata travels back. ``True``: with every state
      reply (a step costs the inner's full sensor evaluation even if nobody reads it, e.g.
      MuJoCo's lazily computed acceleration-stage sensors). ``False``: fetched by the
      first sensor read after a change (one extra round trip per shard then).
      ``"auto"`` (default): a step brings sensordata back when sensors were read since the
      previous step, so a loop that reads sensors every step pays one round trip per step
      and a loop that never reads them pays nothing.
    - ``progress``: ``True`` writes a stderr line per shard ready, ``False`` stays
      silent, a callable receives each :class:`~unisim_ray.ShardInfo` (always logged at INFO).
    - ``reuse_actors``: ``True`` (default): a backend that closes normally parks its healthy shard
      actors in a per-process idle pool instead of killing them, and a later backend whose actors
      would be created alike (same Ray session, ``actor_num_cpus``, ``shard_resources``,
      ``actor_options``; no ``placement``) takes them instead of starting new processes (the
      actor's start is most of a backend's construction time). Idle actors are killed at exit, when
      the plugin shuts Ray down, and by :func:`unisim_ray.release_idle_actors`; at most a few per key
      are kept. ``False``: close() kills the shards' actors and no idle actor is taken.
    """

    inner: str = attrs.field(default="mujoco", validator=_inner)
    shards: int = attrs.field(default=2, validator=_pos_int)
    inner_options: dict[str, Any] = attrs.field(factory=dict, converter=_str_dict, validator=_inner_options)
    address: str | None = attrs.field(default=None, validator=_address)
    call_timeout_s: float = attrs.field(default=60.0, validator=_pos_float)
    init_timeout_s: float = attrs.field(default=300.0, validator=_pos_float)
    actor_num_cpus: float | None = attrs.field(default=None, validator=_opt_nonneg_float)
    placement: str | None = attrs.field(default=None, validator=optional_choice(PLACEMENTS))
    shard_resources: dict[str, float] = attrs.field(factory=dict, converter=_str_dict, validator=_resources)
    actor_options: dict[str, Any] = attrs.field(factory=dict, converter=_str_dict, validator=_actor_options)
    max_shard_restarts: int = attrs.field(default=0, validator=_nonneg_int)
    ray_init_options: dict[str, Any] = attrs.field(factory=dict, converter=_str_dict)
    scene_transfer: str = attrs.field(default="auto", validator=_transfer)
    scene_dir_limit_mb: float = attrs.field(default=32.0, validator=_pos_float)
    prefetch_sensors: bool | str = attrs.field(default="auto", validator=_prefetch)
    progress: bool | Callable[..., Any] = attrs.field(default=True, validator=_progress)
    reuse_actors: bool = attrs.field(default=True, validator=boolean)
