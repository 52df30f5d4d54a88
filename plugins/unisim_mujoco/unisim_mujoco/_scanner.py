"""Height-field queries: exact heights of MuJoCo's triangulated hfield, in numpy.

MuJoCo splits every hfield cell (rows along y, columns along x) into two
triangles along the diagonal from (c, r) to (c+1, r+1); ``HFieldSampler``
interpolates on those triangles, so its heights equal ``mj_ray`` hits (checked
in the tests) without a ray cast per point. Points outside the field are
clamped to its border.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import mujoco
import numpy as np

from unisim_core import quat as Q
from unisim_core.bindings import BackendHeightScanner
from unisim_core.config import BackendTerrainSpawnData, TerrainCfg
from unisim_core.errors import InvalidInputError

if TYPE_CHECKING:
    from ._backend import MujocoBackend

__all__ = ["HFieldSampler", "MujocoHeightScanner", "terrain_spawn_data"]


class HFieldSampler:
    """World-z terrain height of one hfield geom attached to the world body (any yaw)."""

    def __init__(self, m: mujoco.MjModel, geom_id: int) -> None:
        if m.geom_type[geom_id] != int(mujoco.mjtGeom.mjGEOM_HFIELD):
            raise InvalidInputError(f"geom {geom_id} is not an hfield")
        if m.geom_bodyid[geom_id] != 0:
            raise InvalidInputError(f"hfield geom {geom_id} must belong to the world body to be sampled")
        hf = m.geom_dataid[geom_id]
        self.nrow, self.ncol = int(m.hfield_nrow[hf]), int(m.hfield_ncol[hf])
        self.size = tuple(float(x) for x in m.hfield_size[hf])
        self.heights = m.hfield_data[m.hfield_adr[hf]: m.hfield_adr[hf] + self.nrow * self.ncol] \
            .reshape(self.nrow, self.ncol) * self.size[2]
        d = mujoco.MjData(m)
        mujoco.mj_kinematics(m, d)
        self.pos = d.geom_xpos[geom_id].copy()
        rot = d.geom_xmat[geom_id].reshape(3, 3)
        if not np.allclose(rot[:, 2], [0.0, 0.0, 1.0], atol=1e-9):
            raise InvalidInputError(f"hfield geom {geom_id} is tilted; only z-up height fields are supported")
        self.rot2 = rot[:2, :2].copy()  # geom xy axes in world xy
        self.geom_id = geom_id

    def __call__(self, xy: np.ndarray) -> np.ndarray:
        """Heights (m, world z) at world ``xy`` of shape ``(..., 2)``."""
        xy = np.asarray(xy, dtype=np.float64)
        local = (xy - self.pos[:2]) @ self.rot2  # world -> geom frame
        rx, ry = self.size[0], self.size[1]
        u = np.clip((local[..., 0] + rx) / (2 * rx) * (self.ncol - 1), 0.0, self.ncol - 1)
        v = np.clip((local[..., 1] + ry) / (2 * ry) * (self.nrow - 1), 0.0, self.nrow - 1)
        c = np.minimum(u.astype(np.int64), self.ncol - 2)
        r = np.minimum(v.astype(np.int64), self.nrow - 2)
        fu, fv = u - c, v - r
        H = self.heights
        h00, h11 = H[r, c], H[r + 1, c + 1]
        upper = fu >= fv  # triangle (00, 01, 11) else (00, 10, 11)
        h_side = np.where(upper, H[r, c + 1], H[r + 1, c])
        a, b = np.where(upper, fu, fv), np.where(upper, fv, fu)
        return self.pos[2] + h00 + a * (h_side - h00) + b * (h11 - h_side)


class MujocoHeightScanner(BackendHeightScanner):
    """Heights under body-relative points (see ``BackendHeightScanner``)."""

    def __init__(self, backend: MujocoBackend, sampler: HFieldSampler, offsets: np.ndarray, body_id: int,
                 alignment: str, output: str) -> None:
        self._backend = backend
        self._sampler = sampler
        self._offsets = np.ascontiguousarray(offsets, dtype=np.float64)  # (P, 2)
        self._offsets3 = np.concatenate([self._offsets, np.zeros((len(offsets), 1))], axis=1)
        self._body = body_id
        self._alignment = alignment
        self._output = output
        self.num_points = len(offsets)

    def scan(self) -> np.ndarray:
        be = self._backend
        be._derive()
        pos = be._xpos[:, self._body]  # (N, 3) live view, read only
        if self._alignment == "world":
            xy = pos[:, None, :2] + self._offsets
        else:
            quat = be._xquat[:, self._body]
            if self._alignment == "yaw":
                w, x, y, z = quat.T
                yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
                c, s = np.cos(yaw)[:, None], np.sin(yaw)[:, None]
                ox, oy = self._offsets[:, 0], self._offsets[:, 1]
                xy = np.stack([c * ox - s * oy, s * ox + c * oy], axis=-1) + pos[:, None, :2]
            else:
                n = len(quat)
                q = np.broadcast_to(quat[:, None], (n, self.num_points, 4))
                xy = Q.quat_apply(q, np.broadcast_to(self._offsets3, (n, self.num_points, 3)))[..., :2] \
                    + pos[:, None, :2]
        h = self._sampler(xy)
        if self._output == "distance":
            h = pos[:, 2:3] - h
        return h.astype(be.np_dtype, copy=False)


def terrain_spawn_data(m: mujoco.MjModel, cfg: TerrainCfg) -> BackendTerrainSpawnData:
    """Spawn origins: a ``rows x cols`` grid centred on the hfield geom, on its surface."""
    gid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, cfg.hfield_geom)
    if gid < 0:
        raise InvalidInputError(f"scene.terrain.hfield_geom: unknown geom {cfg.hfield_geom!r}")
    sampler = HFieldSampler(m, gid)
    cols = (np.arange(cfg.cols) - (cfg.cols - 1) / 2) * cfg.spacing
    rows = (np.arange(cfg.rows) - (cfg.rows - 1) / 2) * cfg.spacing
    gx, gy = np.meshgrid(cols, rows)
    xy = np.stack([gx.ravel(), gy.ravel()], axis=1) + sampler.pos[:2]
    origins = np.concatenate([xy, sampler(xy)[:, None]], axis=1)
    return BackendTerrainSpawnData(origins=origins, sample_height=sampler, hfield_geom_id=int(gid),
                                   size=sampler.size)
