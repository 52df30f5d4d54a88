"""UniLab env factory for ``sim_backend="unisim-<engine>"``: UniLab's own manager-based env
(``ManagerBasedRlEnv``) with a UniSim engine under it, built as ``make_manager_based_rl_env`` builds it."""

from __future__ import annotations

import os
from typing import Any

import attrs

from ._options import unisim_options

__all__ = ["PREFIX", "engine_of", "make_env", "create_unilab_backend"]

#: ``sim_backend`` names this integration registers: ``PREFIX + <UniSim backend name>``.
PREFIX = "unisim-"


def engine_of(sim_backend: str) -> str:
    """``"unisim-mujoco"`` -> ``"mujoco"``; ``ValueError`` naming the argument otherwise."""
    if not isinstance(sim_backend, str) or not sim_backend.startswith(PREFIX) or len(sim_backend) == len(PREFIX):
        raise ValueError(f"sim_backend: expected '{PREFIX}<UniSim backend>', e.g. 'unisim-mujoco', got {sim_backend!r}")
    return sim_backend[len(PREFIX):]


def _scene(scene) -> Any:
    """UniLab's ``SceneCfg`` as UniSim's; what UniSim cannot honour is refused by name."""
    from unisim_core import SceneCfg

    for field in ("fragment_files", "entity_assets"):
        if getattr(scene, field, None):
            raise NotImplementedError(f"scene.{field}: UniLab scene composition is not supported on UniSim engines")
    if getattr(scene, "entity_variant", None) is not None or getattr(scene, "fixed_variant_plan", None) is not None:
        raise NotImplementedError("scene variants: UniLab fixed model variants are not supported on UniSim engines")
    if getattr(scene, "terrain", None) is not None:
        raise NotImplementedError("scene.terrain: UniLab terrain generation is not supported on UniSim engines")
    return SceneCfg(scene.model_file, visual_model_file=scene.visual_model_file,
                    default_keyframe=getattr(scene, "default_keyframe_name", None))


def create_unilab_backend(engine: str, scene, num_envs: int, sim_dt: float, unilab_kwargs: dict,
                          sensor_timing: str = "last_substep"):
    """A ``UniLabBackend`` over UniSim's ``engine`` for UniLab's ``scene`` (robot assets resolved as
    UniLab resolves them)."""
    from unilab.assets.hub import ensure_robot_assets_for_paths

    from unisim_core import UnsupportedCapabilityError, create_backend
    from unisim_core.plugin.derived_sensors import DERIVABLE, derive_scene

    from ._backend import UniLabBackend

    ensure_robot_assets_for_paths([scene.model_file, scene.visual_model_file])
    ours, options = _scene(scene), unisim_options(engine, unilab_kwargs)
    derived, copy, specs = set(), None, ()
    while True:  # sensors the engine refuses and the core can derive: served from a rewritten copy
        try:
            sim = create_backend(engine, ours if copy is None else attrs.evolve(ours, model_file=copy),
                                 num_envs, sim_dt, **options)
            break
        except UnsupportedCapabilityError as exc:
            if copy is not None:
                os.unlink(copy)
            feature = str(getattr(exc.capability, "value", exc.capability))
            if feature not in DERIVABLE or feature in derived:
                raise
            derived.add(feature)
            copy, specs = derive_scene(ours.model_file, derived)
    try:
        return UniLabBackend(sim, sensor_timing=sensor_timing, derived=specs, scene_copy=copy)
    except BaseException:
        sim.close()
        if copy is not None:
            os.unlink(copy)
        raise


def make_env(cfg, num_envs: int = 1, backend_type: str = "unisim-mujoco", env_cls=None):
    """UniLab ``EnvFactory``: ``make_manager_based_rl_env`` with UniSim's engine ``backend_type``
    (``env_cls``: the env class, default UniLab's ``ManagerBasedRlEnv``)."""
    from unilab.base.backend_factory import env_backend_kwargs
    from unilab.base.cpu_runtime import apply_cpu_confinement
    from unilab.envs.manager_based_rl_env import (
        ManagerBasedRlEnv,
        ManagerBasedRlEnvCfg,
        _resolve_backend_entity_contract,
    )

    engine = engine_of(backend_type)
    if not isinstance(cfg, ManagerBasedRlEnvCfg):
        raise TypeError(f"cfg: expected ManagerBasedRlEnvCfg, got {type(cfg).__name__}")
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs <= 0:
        raise ValueError(f"num_envs: expected a positive int, got {num_envs!r}")
    cfg.validate()
    if cfg.fixed_model_variants is not None:
        raise NotImplementedError("fixed_model_variants: UniLab fixed model variants are not supported on "
                                  "UniSim engines")
    apply_cpu_confinement(cfg.cpu_ids)
    base_name, _, _ = _resolve_backend_entity_contract(cfg)
    kwargs = {**env_backend_kwargs(cfg), "base_name": base_name}
    backend = create_unilab_backend(engine, cfg.scene, num_envs, cfg.sim_dt, kwargs)
    try:
        return (env_cls or ManagerBasedRlEnv)(cfg, backend, num_envs)
    except BaseException:
        backend.close()
        raise
