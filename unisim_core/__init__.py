"""UniSim core: one vectorized contract for robot physics engines.

Three wings (docs/architecture.md): ``contract`` (the backend contract, configs, capabilities,
errors, registry), ``plugin`` (what plugin authors build on: the MJCF reader, the worker layer,
the fake backend) and ``tools`` (the CLI and what it runs). The names below are the public API;
the 0.1 flat module paths (``unisim_core.backend``, ...) still import, with a DeprecationWarning
(``_compat``). Importing this package never imports an engine.
"""

from __future__ import annotations

from unisim_core import _compat
from unisim_core._version import __version__ as __version__
from unisim_core.contract.backend import SimBackend
from unisim_core.contract.bindings import BackendHeightScanner, BackendMocapPoseBinding, SensorDataView
from unisim_core.contract.capabilities import CONTRACT_VERSION, Capability
from unisim_core.contract.config import (
    BackendPlayCapabilities,
    BackendPlayRenderPlan,
    BackendRootStateLayout,
    BackendTerrainSpawnData,
    CameraCfg,
    DomainRandomizationCapabilities,
    SceneCfg,
    TerrainCfg,
)
from unisim_core.contract.contacts import ContactForceBinding
from unisim_core.contract.errors import (
    BackendClosedError,
    BackendLoadError,
    BackendNotFoundError,
    ConcurrentUseError,
    DuplicateBackendError,
    EngineError,
    ForkedBackendError,
    InvalidInputError,
    InvalidTypeError,
    OptionalDependencyError,
    RenderClosedError,
    UniSimError,
    UnknownNameError,
    UnsupportedCapabilityError,
)
from unisim_core.contract.factory import create_backend
from unisim_core.contract.model import ModelInfo
from unisim_core.contract.options import BackendOptions
from unisim_core.contract.randomization import (
    TERM_SPECS,
    InitRandomizationPlan,
    IntervalRandomizationPlan,
    RandomizationOp,
    ResetRandomizationPayload,
)
from unisim_core.contract.registry import BackendRecord, BackendSpec, get_backend_class, list_backends
from unisim_core.plugin.fake import FakeBackend
from unisim_core.plugin.mjcf_lite import LiteModel, MjcfLiteError, load_mjcf

_compat.install()

__all__ = [
    "BackendRecord",
    "BackendSpec",
    "create_backend",
    "get_backend_class",
    "list_backends",
    "load_mjcf",
    "CONTRACT_VERSION",
    "TERM_SPECS",
    "BackendClosedError",
    "BackendHeightScanner",
    "BackendLoadError",
    "BackendMocapPoseBinding",
    "BackendNotFoundError",
    "BackendOptions",
    "BackendPlayCapabilities",
    "BackendPlayRenderPlan",
    "BackendRootStateLayout",
    "BackendTerrainSpawnData",
    "CameraCfg",
    "Capability",
    "ConcurrentUseError",
    "ContactForceBinding",
    "DomainRandomizationCapabilities",
    "DuplicateBackendError",
    "EngineError",
    "FakeBackend",
    "ForkedBackendError",
    "InitRandomizationPlan",
    "IntervalRandomizationPlan",
    "InvalidInputError",
    "InvalidTypeError",
    "LiteModel",
    "MjcfLiteError",
    "ModelInfo",
    "OptionalDependencyError",
    "RandomizationOp",
    "RenderClosedError",
    "ResetRandomizationPayload",
    "SceneCfg",
    "SensorDataView",
    "SimBackend",
    "TerrainCfg",
    "UniSimError",
    "UnknownNameError",
    "UnsupportedCapabilityError",
]
