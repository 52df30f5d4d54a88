"""STUB ``omni.usd``: one in-memory stage (real ``pxr``) behind ``get_context().get_stage()``."""

from __future__ import annotations

from pxr import Usd, UsdGeom, UsdPhysics

from unisim_isaacsim._usd_helpers import _physx_schema

_physx_schema()  # registers the PhysX schemas before the first stage exists


class UsdContext:
    def __init__(self) -> None:
        self.stage = Usd.Stage.CreateInMemory()
        UsdGeom.SetStageUpAxis(self.stage, UsdGeom.Tokens.z)
        UsdPhysics.SetStageKilogramsPerUnit(self.stage, 1.0)
        UsdGeom.SetStageMetersPerUnit(self.stage, 1.0)

    def get_stage(self) -> Usd.Stage:
        return self.stage


_CONTEXT = UsdContext()


def get_context() -> UsdContext:
    return _CONTEXT
