"""UniSim core: one vectorized contract for robot physics engines.

Importing this package never imports an engine.
"""

from __future__ import annotations

from ._version import __version__ as __version__
from .backend import SimBackend
from .bindings import BackendHeightScanner, BackendMocapPoseBinding, SensorDataView
from .capabilities import CONTRACT_VERSION, Capability
from .config import (
    BackendPlayCapabilities,
    BackendPlayRenderPlan,
    BackendRootStateLayout,
    BackendTerrainSpawnData,
    CameraCfg,
    DomainRandomizationCapabilities,
    SceneCfg,
    TerrainCfg,
)
from .contacts import ContactForceBinding
from .errors import (
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
from .fake import FakeBackend
from .mjcf_lite import LiteModel, MjcfLiteError, load_mjcf
from .model import ModelInfo
from .options import BackendOptions
from .randomization import (
    TERM_SPECS,
    InitRandomizationPlan,
    IntervalRandomizationPlan,
    RandomizationOp,
    ResetRandomizationPayload,
)
from .registry import BackendRecord, BackendSpec, create_backend, get_backend_class, list_backends

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
