"""Plain data (None, bool, int, float, str, bytes, list, dict) for what a servant describes and for
arrays on transports that carry only plain data (the worker's control frames); the caller side of
``describe`` (``adopt_description``, ``shared_capabilities``) and of ``height_field``."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from unisim_core.contract.capabilities import Capability
from unisim_core.contract.config import SceneCfg, TerrainCfg
from unisim_core.contract.heightfield import HFieldSampler
from unisim_core.contract.model import ModelInfo

__all__ = ["pack_array", "unpack_array", "is_packed_array", "info_to_plain", "info_from_plain", "scene_to_plain",
           "scene_from_plain", "adopt_description", "shared_capabilities", "sampler_to_plain", "sampler_from_plain"]


def pack_array(arr: np.ndarray) -> dict[str, Any]:
    """A numpy array as plain data (cold paths only)."""
    arr = np.ascontiguousarray(arr)
    return {"dtype": arr.dtype.str, "shape": list(arr.shape), "data": arr.tobytes()}


def unpack_array(obj: dict[str, Any]) -> np.ndarray:
    """The (writeable) array of :func:`pack_array`."""
    return np.frombuffer(obj["data"], dtype=np.dtype(obj["dtype"])).reshape(obj["shape"]).copy()


def is_packed_array(obj: Any) -> bool:
    return type(obj) is dict and obj.keys() == {"dtype", "shape", "data"}


def info_to_plain(info: ModelInfo) -> dict[str, Any]:
    out = {}
    for f in attrs.fields(ModelInfo):
        v = getattr(info, f.name)
        if isinstance(v, np.ndarray):
            out[f.name] = pack_array(v)
        elif f.name == "keyframes":
            out[f.name] = {k: pack_array(q) for k, q in v.items()}
        else:
            out[f.name] = list(v) if isinstance(v, tuple) else v
    return out


def info_from_plain(d: dict[str, Any]) -> ModelInfo:
    kw = {}
    for k, v in d.items():
        if k == "keyframes":
            kw[k] = {name: unpack_array(q) for name, q in v.items()}
        elif isinstance(v, dict) and "dtype" in v:
            kw[k] = unpack_array(v)
        else:
            kw[k] = v
    return ModelInfo(**kw)


def scene_to_plain(scene: SceneCfg) -> dict[str, Any]:
    d = attrs.asdict(scene, recurse=True)
    return {k: v for k, v in d.items() if v is not None}


def scene_from_plain(d: dict[str, Any]) -> SceneCfg:
    terrain = d.get("terrain")
    return SceneCfg(d["model_file"], visual_model_file=d.get("visual_model_file"),
                    default_keyframe=d.get("default_keyframe"),
                    terrain=TerrainCfg(**terrain) if terrain else None)


def adopt_description(host: Any, desc: dict[str, Any]) -> tuple[ModelInfo, frozenset[Capability]]:
    """Caller side of the ``describe`` op: set the served backend's declarations on the ``host``
    backend instance (randomization terms, ``MAX_ABS_VALUE``, what it refuses, known kit
    deviations, kit rules, snapshot tier); return its model info and its capabilities within the
    host class's ``CAPABILITIES``. Absent keys keep the host class's values."""
    host.INIT_TERMS = frozenset(desc.get("init_terms", ()))
    host.INTERVAL_TERMS = frozenset(desc.get("interval_terms", ()))
    host.RESET_TERMS = frozenset(desc.get("reset_terms", ()))
    host.REFUSED_TERMS = dict(desc.get("refused_terms", type(host).REFUSED_TERMS))
    if "max_abs_value" in desc:
        host.MAX_ABS_VALUE = float(desc["max_abs_value"])
    host.UNSUPPORTED_SCENE_FEATURES = dict(desc.get("unsupported_scene_features", {}))
    host.KNOWN_KIT_DEVIATIONS = dict(desc.get("known_kit_deviations", {}))
    host.KIT_RULES = desc.get("kit_rules")
    host.SNAPSHOT_TIER = str(desc.get("snapshot_tier", type(host).SNAPSHOT_TIER))
    caps = frozenset(Capability(c) for c in desc["capabilities"]) & type(host).CAPABILITIES
    return info_from_plain(desc["info"]), caps


def shared_capabilities(desc: dict[str, Any]) -> frozenset[Capability]:
    """Caller side of ``describe``: the served backend's capabilities it computes with the core's shared
    code from its model and the contract's state (``Servant.describe``'s ``shared_capabilities``). A host
    holding the same model info and state computes them itself, with the same answers: the site Jacobian
    (``unisim_core.contract.kinematics``), height scans and terrain (``unisim_core.contract.heightfield``,
    from the sampler of the ``height_field`` op), frames (``unisim_core.contract._playback``'s default
    renderer). Empty when the description does not say (a worker of another kind)."""
    return frozenset(Capability(c) for c in desc.get("shared_capabilities", ()))


def sampler_to_plain(sampler: HFieldSampler) -> dict[str, Any]:
    """A height-field sampler as its constructor's inputs (arrays stay numpy: pack them for plain wires)."""
    return {"data": sampler.data, "size": list(sampler.size), "pos": sampler.pos, "quat": sampler.quat,
            "geom_id": sampler.geom_id}


def sampler_from_plain(d: dict[str, Any]) -> HFieldSampler:
    """The sampler of :func:`sampler_to_plain` (arrays numpy or packed), equal bit for bit."""
    arr = {k: unpack_array(v) if is_packed_array(v) else np.asarray(v) for k, v in d.items() if k != "geom_id"}
    return HFieldSampler(arr["data"], arr["size"], arr["pos"], arr["quat"], int(d["geom_id"]))
