"""Height fields, computed once for every engine: the sampler, the scanner and terrain spawn data.

- :class:`HFieldSampler`: exact world-z heights of MuJoCo's triangulated height field at world ``xy``
  (each cell, rows along y and columns along x, is split into two triangles along the diagonal from
  (c, r) to (c+1, r+1); its heights equal ``mj_ray`` hits, checked in the tests). Points outside the
  field are clamped to its border. Built from plain arrays: :meth:`~HFieldSampler.from_lite` (a
  :class:`~unisim_core.plugin.mjcf_lite.LiteModel`) or :meth:`~HFieldSampler.from_mjmodel` (any object with
  ``mjModel``'s arrays: ``mujoco.MjModel``, MuJoCo Warp's host model); the core imports no engine.
- :class:`HeightScanner`: the contract's ``BackendHeightScanner`` over any backend, from its body pose
  primitives (``_body_pos_w``/``_body_quat_w``), vectorized over envs x points.
- :func:`terrain_spawn_data`: ``scene.terrain``'s grid of spawn origins on the surface.

A backend declares ``HEIGHT_SCAN`` and ``TERRAIN`` and implements ``_height_field(geom_id)``, returning
the sampler; ``SimBackend`` builds the scanner and the spawn data from it (docs/backend-authors.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from unisim_core.contract import quat as Q
from unisim_core.contract._typing import Backend
from unisim_core.contract.bindings import BackendHeightScanner
from unisim_core.contract.config import BackendTerrainSpawnData, TerrainCfg
from unisim_core.contract.errors import InvalidInputError

__all__ = ["HFieldSampler", "HeightScanner", "terrain_spawn_data"]

_MJ_GEOM_HFIELD = 1  # mjtGeom.mjGEOM_HFIELD


class HFieldSampler:
    """World-z height (m) of one height-field geom fixed to the world, rotated about z only.

    ``data``: ``(nrow, ncol)`` samples in [0, 1] in MuJoCo's order (row 0 at ``y = -size[1]``);
    ``size``: ``(x half, y half, max z, base depth)`` m; ``pos``/``quat``: the geom's world pose (m,
    wxyz). Attributes: ``nrow``, ``ncol``, ``size`` (tuple), ``heights`` ``(nrow, ncol)`` m above the
    geom, ``pos`` (3,), ``geom_id``, and the inputs ``data`` (float64) and ``quat`` (4,) (a host rebuilds
    the same sampler from them: ``unisim_core.plugin.servant.plain.sampler_from_plain``).
    """

    def __init__(self, data: np.ndarray, size: Any, pos: Any, quat: Any, geom_id: int) -> None:
        self.data = data = np.asarray(data, dtype=np.float64)
        if data.ndim != 2 or min(data.shape) < 2:
            raise InvalidInputError(f"data: expected (nrow, ncol) samples with nrow, ncol >= 2, got {data.shape}")
        self.nrow, self.ncol = data.shape
        self.size = tuple(float(x) for x in np.asarray(size, dtype=np.float64).reshape(4))
        self.heights = data * self.size[2]
        self.pos = np.asarray(pos, dtype=np.float64).reshape(3).copy()
        self.quat = np.asarray(quat, dtype=np.float64).reshape(4).copy()
        rot = Q.matrix_from_quat(Q.quat_normalize(self.quat))
        if not np.allclose(rot[:, 2], [0.0, 0.0, 1.0], atol=1e-9):
            raise InvalidInputError(f"hfield geom {geom_id} is tilted; only z-up height fields are sampled")
        self.rot2 = rot[:2, :2].copy()  # geom xy axes in world xy
        self.geom_id = int(geom_id)
        self._flat = self.heights.ravel()
        self._su, self._sv = (self.ncol - 1) / (2 * self.size[0]), (self.nrow - 1) / (2 * self.size[1])
        self._u0, self._v0 = (self.ncol - 1) / 2, (self.nrow - 1) / 2

    @classmethod
    def from_lite(cls, lite: Any, geom_id: int) -> HFieldSampler:
        """The sampler of height-field geom ``geom_id`` of a ``LiteModel`` read with ``accept={"hfield"}``."""
        g = lite.geoms[geom_id]
        if g["type"] != "hfield":
            raise InvalidInputError(f"hfield_geom_id: geom {geom_id} is a {g['type']}, expected an hfield")
        try:
            pos, quat = lite.geom_pose_w(geom_id)
        except ValueError as exc:
            raise InvalidInputError(f"hfield_geom_id: {exc}") from None
        hf = lite.hfields[g["hfield"]]
        return cls(hf["data"], hf["size"], pos, quat, geom_id)

    @classmethod
    def from_mjmodel(cls, m: Any, geom_id: int) -> HFieldSampler:
        """The sampler of height-field geom ``geom_id`` of a compiled ``mjModel`` (read from its arrays:
        ``geom_*``, ``body_*``, ``hfield_*``; the geom's bodies must be welded to the world)."""
        if int(m.geom_type[geom_id]) != _MJ_GEOM_HFIELD:
            raise InvalidInputError(f"hfield_geom_id: geom {geom_id} is not an hfield")
        pos, quat = np.array(m.geom_pos[geom_id], dtype=np.float64), np.array(m.geom_quat[geom_id], dtype=np.float64)
        b = int(m.geom_bodyid[geom_id])
        if int(m.body_weldid[b]) != 0 or int(m.body_mocapid[b]) >= 0:
            raise InvalidInputError(f"hfield_geom_id: hfield geom {geom_id} is on a moving body; only height fields "
                                    "fixed to the world are sampled")
        while b != 0:
            pos = m.body_pos[b] + Q.quat_apply(np.asarray(m.body_quat[b], dtype=np.float64), pos)
            quat = Q.quat_mul(np.asarray(m.body_quat[b], dtype=np.float64), quat)
            b = int(m.body_parentid[b])
        hf = int(m.geom_dataid[geom_id])
        nrow, ncol, adr = int(m.hfield_nrow[hf]), int(m.hfield_ncol[hf]), int(m.hfield_adr[hf])
        return cls(m.hfield_data[adr:adr + nrow * ncol].reshape(nrow, ncol), m.hfield_size[hf], pos, quat, geom_id)

    def __call__(self, xy: np.ndarray) -> np.ndarray:
        """Heights (m, world z) at world ``xy`` of shape ``(..., 2)``; float64, shape ``(...)``."""
        xy = np.asarray(xy, dtype=np.float64)
        if xy.shape[-1:] != (2,):
            raise InvalidInputError(f"xy: expected shape (..., 2), got {xy.shape}")
        return self.at(xy[..., 0], xy[..., 1])

    def at(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Heights (m, world z) at world ``x``, ``y`` (float64 arrays of one shape)."""
        dx, dy = x - self.pos[0], y - self.pos[1]
        (r00, r01), (r10, r11) = self.rot2
        # grid coordinates (u along x over columns, v along y over rows), clamped to the field
        u = np.clip((dx * r00 + dy * r10) * self._su + self._u0, 0.0, self.ncol - 1)
        v = np.clip((dx * r01 + dy * r11) * self._sv + self._v0, 0.0, self.nrow - 1)
        c = np.minimum(u.astype(np.int64), self.ncol - 2)
        r = np.minimum(v.astype(np.int64), self.nrow - 2)
        fu, fv = u - c, v - r
        i00 = r * self.ncol + c
        upper = fu >= fv  # triangle (00, 01, 11), else (00, 10, 11)
        H = self._flat
        h00, h11 = H[i00], H[i00 + (self.ncol + 1)]
        h_side = H[i00 + np.where(upper, 1, self.ncol)]
        a, b = np.maximum(fu, fv), np.minimum(fu, fv)
        return self.pos[2] + h00 + a * (h_side - h00) + b * (h11 - h_side)


class HeightScanner(BackendHeightScanner):
    """Heights under ``offsets`` around a body, from the backend's body pose primitives (see
    ``BackendHeightScanner``): ``scan()`` is ``(num_envs, P)`` in the backend's ``np_dtype``."""

    def __init__(self, backend: Backend, sampler: HFieldSampler, offsets: np.ndarray, body_id: int,
                 alignment: str, output: str) -> None:
        self._backend = backend
        self._sampler = sampler
        off = np.ascontiguousarray(offsets, dtype=np.float64)[:, :2]
        self._ox, self._oy = off[:, 0].copy(), off[:, 1].copy()  # (P,)
        self._ids = np.array([body_id], dtype=np.int64)
        self._alignment = alignment
        self._output = output
        self.num_points = len(off)

    def points_xy(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(x, y, z)``: world x and y ``(num_envs, P)`` of the scan points at the current state and the
        frame body's z ``(num_envs, 1)``, m."""
        b = self._backend
        pos = np.asarray(b._body_pos_w(self._ids)[:, 0], dtype=np.float64)
        px, py, pz = pos[:, 0:1], pos[:, 1:2], pos[:, 2:3]
        if self._alignment == "world":
            return px + self._ox, py + self._oy, pz
        w, x, y, z = (q[:, None] for q in np.asarray(b._body_quat_w(self._ids)[:, 0], dtype=np.float64).T)
        if self._alignment == "yaw":  # the body x axis projected on the ground, normalized (yaw = atan2(s, c))
            c, s = 1 - 2 * (y * y + z * z), 2 * (w * z + x * y)
            norm = np.hypot(c, s)
            flat = norm == 0.0  # x axis vertical: yaw 0, as atan2(0, 0)
            norm[flat], c[flat], s[flat] = 1.0, 1.0, 0.0
            xx, xy, yx, yy = c / norm, s / norm, -s / norm, c / norm  # body x and y axes on the ground
        else:  # full: the body x and y axes (first two columns of R), their xy parts
            xx, xy = 1 - 2 * (y * y + z * z), 2 * (x * y + w * z)
            yx, yy = 2 * (x * y - w * z), 1 - 2 * (x * x + z * z)
        return px + self._ox * xx + self._oy * yx, py + self._ox * xy + self._oy * yy, pz

    def scan(self) -> np.ndarray:
        b = self._backend
        b._check_open()
        x, y, z = self.points_xy()
        h = self._sampler.at(x, y)
        if self._output == "distance":
            h = z - h
        return h.astype(b.np_dtype)


def terrain_spawn_data(backend: Backend, cfg: TerrainCfg) -> BackendTerrainSpawnData:
    """Spawn origins of ``cfg``: a ``rows x cols`` grid ``spacing`` m apart centred on the height-field
    geom ``cfg.hfield_geom`` (world axes), on its surface; sampled with ``backend._height_field``."""
    info = backend.model_info  # resolves the name tables
    gid = backend._lookup(backend._geom_index, cfg.hfield_geom, "geom", "scene.terrain.hfield_geom")
    kind = info.geom_types[gid]
    if kind != "hfield":
        raise InvalidInputError(f"scene.terrain.hfield_geom: geom {cfg.hfield_geom!r} is a {kind}, expected an hfield")
    sampler = backend._height_field(gid)
    cols = (np.arange(cfg.cols) - (cfg.cols - 1) / 2) * cfg.spacing
    rows = (np.arange(cfg.rows) - (cfg.rows - 1) / 2) * cfg.spacing
    gx, gy = np.meshgrid(cols, rows)
    xy = np.stack([gx.ravel(), gy.ravel()], axis=1) + sampler.pos[:2]
    origins = np.concatenate([xy, sampler(xy)[:, None]], axis=1)
    return BackendTerrainSpawnData(origins=origins, sample_height=sampler, hfield_geom_id=int(gid),
                                   size=sampler.size)
