"""Contact and constraint buffer sizes per world, derived from the compiled model.

MuJoCo Warp preallocates ``nconmax`` contacts and ``njmax`` constraint rows per world; its
defaults (48 contacts, 64 rows for a model without height fields) overflow on common robots
(google_barkour_v0: 124 rows in 200 steps standing, robot_soccer_kit: 137). The estimate here
counts what the model can produce: the contacts each collidable geom can make with the scene
(MuJoCo's per-pair caps: sphere/ellipsoid 1, capsule 2, box/cylinder/mesh 4, height field 8),
each at the rows its friction cone takes, plus every equality, limit and friction-loss row as
if all were active. It never goes below MuJoCo Warp's own default for the model, nor below twice
what the initial state already uses.

The overflow bits that mean lost contacts or constraints, the option that sizes each buffer and the
``EngineError`` naming both are shared with ``unisim-newton`` (its ``SolverMuJoCo`` is MuJoCo Warp).
"""

from __future__ import annotations

import mujoco
import mujoco_warp as mjw
import numpy as np
from mujoco_warp._src.io import _default_nconmax, _default_njmax

from unisim_core.contract.errors import EngineError

__all__ = ["FATAL_OVERFLOWS", "OVERFLOWS", "buffer_sizes", "overflow_error"]

_O = mjw.OverflowType
#: Overflows that lose contacts or constraints -> (the buffer, the option that sizes it).
OVERFLOWS = {_O.NEFC: ("constraint rows", "njmax"), _O.NJMAX_NNZ: ("constraint Jacobian nonzeros", "njmax"),
             _O.BROADPHASE: ("broadphase pairs", "nconmax"), _O.NARROWPHASE: ("contacts", "nconmax"),
             _O.CCD: ("CCD contacts", "nconmax"),
             _O.HFIELD: ("height field contacts", "nconmax (or a coarser height field)")}
#: Their bits together (``mjw.Data.overflow`` holds them per world).
FATAL_OVERFLOWS = int(sum(OVERFLOWS))

_G = mujoco.mjtGeom
#: Contacts one geom of this type makes with the rest of the scene at most (MuJoCo's colliders).
_CONTACTS_PER_GEOM = {int(_G.mjGEOM_SPHERE): 1, int(_G.mjGEOM_ELLIPSOID): 1, int(_G.mjGEOM_CAPSULE): 2,
                      int(_G.mjGEOM_CYLINDER): 4, int(_G.mjGEOM_BOX): 4, int(_G.mjGEOM_MESH): 4,
                      int(_G.mjGEOM_SDF): 8, int(_G.mjGEOM_HFIELD): 8}
_EQ_ROWS = {int(mujoco.mjtEq.mjEQ_CONNECT): 3, int(mujoco.mjtEq.mjEQ_WELD): 6}
#: Contacts one body makes at most (a body resting on a surface: 4 corners).
_PER_BODY = 4
#: MuJoCo Warp's buffer sizes: 16, 24, 32, 48, ... 8192.
_VALID = (2 + (np.arange(19) % 2)) * (2 ** (np.arange(19) // 2 + 3))


def _round_up(n: int) -> int:
    return int(_VALID[np.searchsorted(_VALID, n)]) if n <= _VALID[-1] else int(n)


def _contact_rows(m: mujoco.MjModel, condim: int) -> int:
    if condim <= 1:
        return 1
    return condim if m.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC else 2 * (condim - 1)


def buffer_sizes(m: mujoco.MjModel, d0: mujoco.MjData) -> tuple[int, int]:
    """``(nconmax, njmax)`` per world for ``m`` from the initial state ``d0`` (not modified)."""
    d = mujoco.MjData(m)
    mujoco.mj_copyData(d, m, d0)
    mujoco.mj_forward(m, d)  # the initial state's contacts and constraint rows
    collides = (m.geom_contype != 0) | (m.geom_conaffinity != 0)
    moving = collides & (m.body_weldid[m.geom_bodyid] != 0)  # geoms welded to the world touch only movers
    per_body = np.zeros(m.nbody, np.int64)
    np.add.at(per_body, m.geom_bodyid[moving], [_CONTACTS_PER_GEOM.get(int(t), 4) for t in m.geom_type[moving]])
    ncon = int(np.minimum(per_body, _PER_BODY).sum()) + 4 * m.npair
    condim = int(m.geom_condim[collides].max()) if collides.any() else 1
    if m.npair:
        condim = max(condim, int(m.pair_dim.max()))
    eq = sum(_EQ_ROWS.get(int(t), 1) for t in m.eq_type)
    limits = int(m.jnt_limited.sum()) + int(m.tendon_limited.sum())
    friction = int((m.dof_frictionloss > 0).sum()) + int((m.tendon_frictionloss > 0).sum())
    nconmax = _round_up(max(ncon, _default_nconmax(m, d), 2 * d.ncon))
    njmax = _round_up(max(eq + limits + friction + nconmax * _contact_rows(m, condim), _default_njmax(m, d),
                          2 * d.nefc))
    return nconmax, njmax


def overflow_error(flags: np.ndarray, nconmax: int, njmax: int) -> EngineError:
    """The error for per-world overflow ``flags (nworld,)`` (``mjw.OverflowType`` bits, some set): the
    overflowing buffers, the envs, and the options to raise with the sizes in use (per world;
    MuJoCo Warp's contact pool ``naconmax`` is ``nconmax`` times the number of worlds)."""
    bad = np.flatnonzero(flags)
    bits = int(np.bitwise_or.reduce(flags[bad]))
    hit = [(b, *OVERFLOWS[b]) for b in OVERFLOWS if bits & int(b)]
    buffers = ", ".join(f"{b.name}: {buffer} dropped" for b, buffer, _ in hit)
    options = ", ".join(sorted({option for _, _, option in hit}))
    return EngineError(f"MuJoCo Warp buffer overflow ({buffers}) in env(s) {bad.tolist()}: contacts or constraints "
                       f"were dropped. Raise the option(s) {options} (now nconmax={nconmax}, njmax={njmax} per "
                       f"env; naconmax={nconmax * len(flags)} contacts for all envs).")
