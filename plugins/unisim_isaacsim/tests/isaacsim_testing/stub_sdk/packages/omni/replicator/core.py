"""STUB ``omni.replicator.core``: a render product on an existing camera prim and an ``rgb`` annotator
that returns no data for its first two renders (RTX warm-up, as the worker's comments describe), then
a mid-grey ``(height, width, 4)`` uint8 frame. No rendering happens."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from pxr import UsdGeom

import omni.usd

RENDERS = [0]  # SimulationContext.render() counts here


class _RenderProduct:
    def __init__(self, camera: str, resolution: tuple[int, int]) -> None:
        prim = omni.usd.get_context().get_stage().GetPrimAtPath(camera)
        if not prim or not prim.IsA(UsdGeom.Camera):
            raise ValueError(f"render_product: {camera!r} is not a camera prim")
        self.resolution = (int(resolution[0]), int(resolution[1]))


class _Annotator:
    WARMUP = 2

    def __init__(self, name: str, device: str) -> None:
        if name != "rgb" or device != "cpu":
            raise ValueError(f"stub annotator: only 'rgb' on 'cpu', got {name!r} on {device!r}")
        self.product = None

    def attach(self, products: list) -> None:
        self.product, self.start = products[0], RENDERS[0]

    def detach(self) -> None:
        self.product = None

    def get_data(self) -> np.ndarray:
        if self.product is None:
            raise RuntimeError("annotator is not attached")
        if RENDERS[0] - self.start < self.WARMUP:
            return np.zeros((0,), dtype=np.uint8)
        w, h = self.product.resolution
        return np.full((h, w, 4), 128, dtype=np.uint8)


create = SimpleNamespace(render_product=_RenderProduct)
AnnotatorRegistry = SimpleNamespace(get_annotator=_Annotator)
