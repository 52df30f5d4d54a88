"""A terrain generator writing MJCF height fields: a grid of sub-terrains by difficulty and type.

``generate_terrain(TerrainGeneratorCfg(...))`` returns a :class:`GeneratedTerrain`: one height map
(m, world z) made of ``num_rows x num_cols`` sub-terrains of ``size`` m each, surrounded by a flat
border. Row ``r`` (along world x) holds difficulty level ``r`` (with ``curriculum``: difficulty
``(r + U(0, 1)) / num_rows``, else uniform in ``difficulty_range``); columns (along world y) are
the sub-terrain types, in proportion to their ``proportion``. Sub-terrains (as Isaac Lab's):

- :class:`FlatCfg`: height 0.
- :class:`RandomRoughCfg`: uniform noise on a ``noise_cell`` m grid, interpolated bilinearly; its
  amplitude goes from ``noise_range[0]`` (difficulty 0) to ``noise_range[1]`` m (difficulty 1).
- :class:`SlopeCfg`: a pyramid rising (``inverted``: falling) to a flat centre platform, slope
  ``slope_range`` (rise over run) by difficulty.
- :class:`StairsCfg`: pyramid stairs of ``step_width`` m treads, ``step_height_range`` m risers.
- :class:`SteppingStonesCfg`: square stones on a pit ``pit_depth`` m deep, stone width shrinking
  and gaps growing with difficulty, around a flat centre platform.

``GeneratedTerrain.mjcf_asset()``/``mjcf_geom()`` write the ``<hfield>`` (inline ``elevation``,
normalized to [0, 1] as MuJoCo normalizes it; ``size[2]`` holds the height span) and the geom that
places it; every engine that accepts MJCF height fields loads it. ``height_at(xy)`` samples the map
in numpy (bilinear), engine-independently. :class:`TerrainCurriculum` keeps each env's level and
type and moves levels up or down from the distance walked (the curriculum hook).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import numpy as np

from unisim_core import InvalidInputError

__all__ = ["SubTerrainCfg", "FlatCfg", "RandomRoughCfg", "SlopeCfg", "StairsCfg", "SteppingStonesCfg",
           "TerrainGeneratorCfg", "GeneratedTerrain", "generate_terrain", "TerrainCurriculum", "ROUGH_TERRAINS"]


def _pair(value) -> tuple[float, float]:
    return tuple(float(v) for v in value)


def _range(inst, attribute, value) -> None:
    if len(value) != 2 or not (np.isfinite(value).all() and 0 <= value[0] <= value[1]):
        raise InvalidInputError(f"{type(inst).__name__}.{attribute.name}: expected a finite (low, high) with "
                                f"0 <= low <= high, got {value!r}")


def _positive(inst, attribute, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value) or value <= 0:
        raise InvalidInputError(f"{type(inst).__name__}.{attribute.name}: expected a positive number, got {value!r}")


def _non_negative(inst, attribute, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value) or value < 0:
        raise InvalidInputError(f"{type(inst).__name__}.{attribute.name}: expected a number >= 0, got {value!r}")


def _count(inst, attribute, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError(f"{type(inst).__name__}.{attribute.name}: expected an int >= 1, got {value!r}")


@attrs.frozen(kw_only=True)
class SubTerrainCfg:
    """A sub-terrain type; ``proportion`` is its share of the columns."""

    proportion: float = attrs.field(default=1.0, validator=_positive)

    def heights(self, x: np.ndarray, y: np.ndarray, difficulty: float, rng: np.random.Generator) -> np.ndarray:
        """Heights (m) at local points ``x``, ``y`` (m, ``(ny, nx)`` grids centred on 0)."""
        raise NotImplementedError


@attrs.frozen(kw_only=True)
class FlatCfg(SubTerrainCfg):
    """Flat ground."""

    def heights(self, x, y, difficulty, rng):
        return np.zeros_like(x)


@attrs.frozen(kw_only=True)
class RandomRoughCfg(SubTerrainCfg):
    """Uniform noise of amplitude ``noise_range`` (m, by difficulty) on a ``noise_cell`` m grid."""

    noise_range: tuple[float, float] = attrs.field(default=(0.01, 0.06), converter=_pair, validator=_range)
    noise_cell: float = attrs.field(default=0.2, validator=_positive)

    def heights(self, x, y, difficulty, rng):
        amp = self.noise_range[0] + difficulty * (self.noise_range[1] - self.noise_range[0])
        x0, y0 = x[0], y[:, 0]
        gx = np.arange(x0[0], x0[-1] + self.noise_cell, self.noise_cell)
        gy = np.arange(y0[0], y0[-1] + self.noise_cell, self.noise_cell)
        coarse = rng.uniform(-amp, amp, (len(gy), len(gx)))
        rows = np.stack([np.interp(x0, gx, r) for r in coarse])  # along x, then y
        return np.stack([np.interp(y0, gy, rows[:, j]) for j in range(len(x0))], axis=1)


@attrs.frozen(kw_only=True)
class SlopeCfg(SubTerrainCfg):
    """A pyramid slope (``inverted``: a pit) to a ``platform_width`` m centre platform."""

    slope_range: tuple[float, float] = attrs.field(default=(0.0, 0.4), converter=_pair, validator=_range)
    platform_width: float = attrs.field(default=1.5, validator=_positive)
    inverted: bool = False

    def heights(self, x, y, difficulty, rng):
        slope = self.slope_range[0] + difficulty * (self.slope_range[1] - self.slope_range[0])
        half = min(x.max(), y.max())
        dist = np.maximum(np.abs(x), np.abs(y))  # Chebyshev distance from the centre
        h = slope * (half - np.clip(dist, self.platform_width / 2, half))
        return -h if self.inverted else h


@attrs.frozen(kw_only=True)
class StairsCfg(SubTerrainCfg):
    """Pyramid stairs up (``inverted``: down) to a ``platform_width`` m centre platform."""

    step_height_range: tuple[float, float] = attrs.field(default=(0.02, 0.12), converter=_pair, validator=_range)
    step_width: float = attrs.field(default=0.3, validator=_positive)
    platform_width: float = attrs.field(default=1.5, validator=_positive)
    inverted: bool = False

    def heights(self, x, y, difficulty, rng):
        step = self.step_height_range[0] + difficulty * (self.step_height_range[1] - self.step_height_range[0])
        half = min(x.max(), y.max())
        dist = np.clip(np.maximum(np.abs(x), np.abs(y)), self.platform_width / 2, half)
        h = step * np.floor((half - dist) / self.step_width)
        return -h if self.inverted else h


@attrs.frozen(kw_only=True)
class SteppingStonesCfg(SubTerrainCfg):
    """Square stones over a pit: width from ``stone_width_range[1]`` (difficulty 0) down to
    ``stone_width_range[0]`` m, gaps from ``gap_range[0]`` up to ``gap_range[1]`` m."""

    stone_width_range: tuple[float, float] = attrs.field(default=(0.4, 1.0), converter=_pair, validator=_range)
    gap_range: tuple[float, float] = attrs.field(default=(0.05, 0.25), converter=_pair, validator=_range)
    pit_depth: float = attrs.field(default=0.4, validator=_positive)
    platform_width: float = attrs.field(default=1.5, validator=_positive)

    def heights(self, x, y, difficulty, rng):
        w_lo, w_hi = self.stone_width_range
        width = w_hi - difficulty * (w_hi - w_lo)
        gap = self.gap_range[0] + difficulty * (self.gap_range[1] - self.gap_range[0])
        pitch = width + gap
        on_x = np.mod(x + width / 2, pitch) < width
        on_y = np.mod(y + width / 2, pitch) < width
        h = np.where(on_x & on_y, 0.0, -self.pit_depth)
        platform = np.maximum(np.abs(x), np.abs(y)) <= self.platform_width / 2
        return np.where(platform, 0.0, h)


#: A mixed rough terrain: flat, random rough, slopes up and down, stairs up and down, stepping stones.
ROUGH_TERRAINS: dict[str, SubTerrainCfg] = {
    "flat": FlatCfg(proportion=0.1), "random_rough": RandomRoughCfg(proportion=0.3),
    "slope_up": SlopeCfg(proportion=0.15), "slope_down": SlopeCfg(proportion=0.15, inverted=True),
    "stairs_up": StairsCfg(proportion=0.1), "stairs_down": StairsCfg(proportion=0.1, inverted=True),
    "stepping_stones": SteppingStonesCfg(proportion=0.1),
}


def _sub_terrains(inst, attribute, value) -> None:
    if not isinstance(value, Mapping) or not value or not all(
            isinstance(k, str) and isinstance(v, SubTerrainCfg) for k, v in value.items()):
        raise InvalidInputError(f"TerrainGeneratorCfg.{attribute.name}: expected a non-empty {{name: SubTerrainCfg}}, "
                                f"got {value!r}")


@attrs.frozen(kw_only=True)
class TerrainGeneratorCfg:
    """A ``num_rows`` (difficulty levels, along x) by ``num_cols`` (types, along y) grid of
    ``size`` m sub-terrains sampled every ``horizontal_scale`` m, with a flat ``border_width`` m
    border; ``seed`` makes it reproducible."""

    sub_terrains: Mapping[str, SubTerrainCfg] = attrs.field(factory=lambda: dict(ROUGH_TERRAINS),
                                                            validator=_sub_terrains)
    size: tuple[float, float] = attrs.field(default=(6.0, 6.0), converter=_pair)
    num_rows: int = attrs.field(default=5, validator=_count)
    num_cols: int = attrs.field(default=7, validator=_count)
    horizontal_scale: float = attrs.field(default=0.1, validator=_positive)
    border_width: float = attrs.field(default=2.0, validator=_non_negative)
    curriculum: bool = True
    difficulty_range: tuple[float, float] = attrs.field(default=(0.0, 1.0), converter=_pair, validator=_range)
    seed: int = 0

    def __attrs_post_init__(self) -> None:
        if len(self.size) != 2 or min(self.size) < 2 * self.horizontal_scale:
            raise InvalidInputError(f"TerrainGeneratorCfg.size: expected (x, y) m of at least two samples "
                                    f"({2 * self.horizontal_scale} m), got {self.size!r}")
        if self.difficulty_range[1] > 1:
            raise InvalidInputError(f"TerrainGeneratorCfg.difficulty_range: expected within [0, 1], got "
                                    f"{self.difficulty_range!r}")


@attrs.frozen(kw_only=True, eq=False)
class GeneratedTerrain:
    """A generated height map and where its sub-terrains are.

    - ``heights``: ``(ny, nx)`` m; sample ``[i, j]`` lies at world ``x = -half_x + j hs``,
      ``y = -half_y + i hs`` (``hs`` = ``horizontal_scale``), the map centred on the origin.
    - ``origins``: ``(num_rows, num_cols, 3)`` world centre of each sub-terrain, on its surface.
    - ``types``: the type name of each column; ``difficulty``: ``(num_rows, num_cols)`` in [0, 1].
    """

    cfg: TerrainGeneratorCfg
    heights: np.ndarray
    origins: np.ndarray
    types: tuple[str, ...]
    difficulty: np.ndarray

    @property
    def half_extent(self) -> tuple[float, float]:
        """``(half_x, half_y)`` m of the whole map."""
        ny, nx = self.heights.shape
        hs = self.cfg.horizontal_scale
        return (nx - 1) * hs / 2, (ny - 1) * hs / 2

    def height_at(self, xy: np.ndarray) -> np.ndarray:
        """Heights (m) at world ``xy (..., 2)``, bilinear between samples, clamped at the edges."""
        hx, hy = self.half_extent
        hs = self.cfg.horizontal_scale
        ny, nx = self.heights.shape
        fx = np.clip((xy[..., 0] + hx) / hs, 0, nx - 1)
        fy = np.clip((xy[..., 1] + hy) / hs, 0, ny - 1)
        j0, i0 = np.minimum(fx.astype(np.int64), nx - 2), np.minimum(fy.astype(np.int64), ny - 2)
        tx, ty = fx - j0, fy - i0
        h = self.heights
        return ((1 - ty) * ((1 - tx) * h[i0, j0] + tx * h[i0, j0 + 1])
                + ty * ((1 - tx) * h[i0 + 1, j0] + tx * h[i0 + 1, j0 + 1]))

    def max_height_near(self, xy: np.ndarray, radius: float) -> np.ndarray:
        """Highest sample (m) within the square of half-width ``radius`` m around each ``xy (k, 2)``."""
        hx, hy = self.half_extent
        hs = self.cfg.horizontal_scale
        ny, nx = self.heights.shape
        r = int(np.ceil(radius / hs))
        out = np.empty(len(xy))
        for k, (x, y) in enumerate(xy):
            j, i = int(round((x + hx) / hs)), int(round((y + hy) / hs))
            out[k] = self.heights[max(0, i - r):min(ny, i + r + 1), max(0, j - r):min(nx, j + r + 1)].max()
        return out

    def mjcf_asset(self, name: str = "terrain") -> str:
        """The ``<hfield>`` element: elevation rows from +y to -y (MuJoCo's text order), normalized."""
        lo, span = float(self.heights.min()), float(np.ptp(self.heights))
        unit = (self.heights - lo) / span if span > 0 else np.zeros_like(self.heights)
        ny, nx = unit.shape
        hx, hy = self.half_extent
        text = " ".join(f"{v:.5g}" for v in unit[::-1].ravel())
        return (f'<hfield name="{name}" nrow="{ny}" ncol="{nx}" size="{hx:.6g} {hy:.6g} {max(span, 1e-3):.6g} 1" '
                f'elevation="{text}"/>')

    def mjcf_geom(self, name: str = "terrain", rgba: str = "0.45 0.5 0.55 1") -> str:
        """The world geom placing the height field: centred on the origin, its lowest sample at the
        map's lowest height."""
        return (f'<geom name="{name}" type="hfield" hfield="{name}" pos="0 0 {float(self.heights.min()):.6g}" '
                f'rgba="{rgba}"/>')


def generate_terrain(cfg: TerrainGeneratorCfg) -> GeneratedTerrain:
    """Build the height map of ``cfg`` (deterministic for its ``seed``)."""
    rng = np.random.default_rng(cfg.seed)
    hs = cfg.horizontal_scale
    px, py = round(cfg.size[0] / hs), round(cfg.size[1] / hs)
    border = round(cfg.border_width / hs)
    nx, ny = cfg.num_rows * px + 2 * border + 1, cfg.num_cols * py + 2 * border + 1
    heights = np.zeros((ny, nx))
    names = list(cfg.sub_terrains)
    share = np.array([cfg.sub_terrains[n].proportion for n in names])
    cuts = np.cumsum(share / share.sum())
    types = tuple(names[int(np.searchsorted(cuts, (c + 0.5) / cfg.num_cols))] for c in range(cfg.num_cols))
    lx = (np.arange(px + 1) - px / 2) * hs
    ly = (np.arange(py + 1) - py / 2) * hs
    x, y = np.meshgrid(lx, ly)
    difficulty = np.zeros((cfg.num_rows, cfg.num_cols))
    origins = np.zeros((cfg.num_rows, cfg.num_cols, 3))
    lo, hi = cfg.difficulty_range
    half_x, half_y = (nx - 1) * hs / 2, (ny - 1) * hs / 2
    for r in range(cfg.num_rows):
        for c in range(cfg.num_cols):
            d = (r + rng.uniform()) / cfg.num_rows if cfg.curriculum else rng.uniform()
            d = lo + d * (hi - lo)
            difficulty[r, c] = d
            i0, j0 = border + c * py, border + r * px
            heights[i0:i0 + py + 1, j0:j0 + px + 1] = cfg.sub_terrains[types[c]].heights(x, y, d, rng)
            cx, cy = -half_x + (j0 + px / 2) * hs, -half_y + (i0 + py / 2) * hs
            origins[r, c] = cx, cy, heights[i0 + py // 2, j0 + px // 2]
    return GeneratedTerrain(cfg=cfg, heights=heights, origins=origins, types=types, difficulty=difficulty)


class TerrainCurriculum:
    """Each env's terrain level (row) and type (column), and the curriculum hook that moves them.

    Envs start on a random column at a level below ``max_init_level``. :meth:`update` (call it at
    an episode's end, before :meth:`origins`) moves an env up a level when it walked farther than
    half a sub-terrain, and down when it walked less than half its commanded distance (Isaac Lab's
    ``terrain_levels_vel``); an env that passes the top level goes to a random level.
    """

    def __init__(self, terrain: GeneratedTerrain, num_envs: int, rng: np.random.Generator,
                 max_init_level: int | None = None) -> None:
        self.terrain = terrain
        rows, cols = terrain.origins.shape[:2]
        top = rows if max_init_level is None else min(rows, max_init_level + 1)
        self.levels = rng.integers(0, top, num_envs)
        self.types = rng.integers(0, cols, num_envs)
        self.rng = rng

    def update(self, env_ids: np.ndarray, distance: np.ndarray, command_distance: np.ndarray) -> None:
        """Move ``env_ids``' levels from the ``distance`` (m) walked and the ``command_distance`` (m)
        their commands asked for in the episode that ended."""
        rows = self.terrain.origins.shape[0]
        up = distance > self.terrain.cfg.size[0] / 2
        down = (distance < 0.5 * command_distance) & ~up
        lv = self.levels[env_ids] + up - down
        wrapped = lv >= rows
        lv[wrapped] = self.rng.integers(0, rows, int(wrapped.sum()))
        self.levels[env_ids] = np.clip(lv, 0, rows - 1)

    def origins(self, env_ids: np.ndarray) -> np.ndarray:
        """``(k, 3)`` world centres of ``env_ids``' current sub-terrains."""
        return self.terrain.origins[self.levels[env_ids], self.types[env_ids]]

    @property
    def mean_level(self) -> float:
        return float(self.levels.mean())
