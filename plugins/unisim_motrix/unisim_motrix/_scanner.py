"""Height-field scanning (``HEIGHT_SCAN``) and terrain spawn data (``TERRAIN``)."""

from __future__ import annotations

import numpy as np

from unisim_core import SimBackend  # the engine's backend (its _backend module imports this one)
from unisim_core.contract import quat as Q
from unisim_core.contract.bindings import BackendHeightScanner
from unisim_core.contract.config import BackendTerrainSpawnData

from ._errors import engine_call

__all__ = ["MotrixHeightScanner", "terrain_spawn_data"]


class MotrixHeightScanner(BackendHeightScanner):
    """Yaw-aligned scans run through ``motrixsim.TerrainScanner`` (one native call); ``full``
    and ``world`` alignment (which it does not offer) project the points in numpy and sample
    with ``GeomHField.sample_height``."""

    def __init__(self, backend: SimBackend, geom_id: int, offsets: np.ndarray, body_id: int,
                 alignment: str, output: str) -> None:
        self._b = backend
        self._geom_id = geom_id
        self._body = body_id
        self._offsets = np.ascontiguousarray(offsets, np.float64)
        self._alignment = alignment
        self._output = output
        self.num_points = len(offsets)
        self._out = np.zeros((backend.num_envs, self.num_points), np.float32)
        self._generation = -1
        self._resolve()

    def _resolve(self) -> None:
        """The engine objects of the backend's current model (a contact filter may rebuild it)."""
        import motrixsim

        b = self._b
        self._geom = b._M.geoms[self._geom_id]
        self._native = None
        if self._alignment == "yaw" and self._body > 0:
            with engine_call("TerrainScanner"):
                self._native = motrixsim.TerrainScanner(
                    terrain=self._geom, frame=b._M.links[self._body - 1],
                    offsets=self._offsets.astype(np.float32), alignment="yaw",
                    output="height" if self._output == "height" else "clearance")
        self._generation = b._generation

    def scan(self) -> np.ndarray:
        b = self._b
        b._check_open()
        if self._generation != b._generation:
            self._resolve()
        b._ensure_fk()
        if self._native is not None:
            with engine_call("TerrainScanner.scan"):
                self._native.scan(b._D, out=self._out)
            return self._out.astype(b.np_dtype, copy=True)
        ids = np.array([self._body])
        pos = b._body_pos_w(ids)[:, 0].astype(np.float64)
        pts = np.zeros((b.num_envs, self.num_points, 3))
        pts[..., :2] = self._offsets
        if self._alignment == "full":
            quat = b._body_quat_w(ids)[:, 0].astype(np.float64)
            pts = Q.quat_apply(np.repeat(quat[:, None], self.num_points, 1), pts)
        xy = (pts[..., :2] + pos[:, None, :2]).astype(np.float32)
        with engine_call("GeomHField.sample_height"):
            h = np.asarray(self._geom.sample_height(b._D, xy), np.float64)
        if self._output == "distance":
            h = pos[:, 2:3] - h
        return h.astype(b.np_dtype)


def terrain_spawn_data(backend: SimBackend) -> BackendTerrainSpawnData:

    cfg = backend.scene.terrain
    gid = backend.get_geom_id(cfg.hfield_geom)
    info = backend.model_info
    if info.geom_types[gid] != "hfield":
        from unisim_core.contract.errors import InvalidInputError

        raise InvalidInputError(f"scene.terrain.hfield_geom: geom {cfg.hfield_geom!r} is a {info.geom_types[gid]}, "
                                "expected an hfield")
    M = backend._M
    geom = M.geoms[gid]
    D1 = backend._nominal_scene_data()  # static terrain: one unbatched world is enough to sample it
    with engine_call("forward_kinematic"):
        M.forward_kinematic(D1)
        centre = np.asarray(geom.get_pose(D1), np.float64).reshape(-1)[:3]

    def sample_height(xy: np.ndarray) -> np.ndarray:
        xy = np.asarray(xy, np.float64)
        if xy.shape[-1:] != (2,):
            from unisim_core.contract.errors import InvalidInputError

            raise InvalidInputError(f"xy: expected shape (..., 2), got {xy.shape}")
        flat = np.ascontiguousarray(xy.reshape(-1, 2), np.float32)
        with engine_call("GeomHField.sample_height"):
            h = np.asarray(geom.sample_height(D1, flat), np.float64)
        return h.reshape(xy.shape[:-1])

    r = (np.arange(cfg.rows) - (cfg.rows - 1) / 2) * cfg.spacing
    c = (np.arange(cfg.cols) - (cfg.cols - 1) / 2) * cfg.spacing
    gx, gy = np.meshgrid(c, r)
    xy = np.stack([gx.ravel() + centre[0], gy.ravel() + centre[1]], axis=1)
    origins = np.concatenate([xy, sample_height(xy)[:, None]], axis=1)
    size = backend._facts.hfield_sizes.get(getattr(geom.hfield, "name", ""), None)
    if size is None:
        g = info.geom_size[gid]
        size = (float(g[0]), float(g[1]), float(g[2]), 0.0)
    return BackendTerrainSpawnData(origins=origins, sample_height=sample_height, hfield_geom_id=gid,
                                   size=tuple(float(s) for s in size))
