"""MJCF height fields as Genesis terrain entities, on MuJoCo's triangulation.

Genesis' MJCF importer drops ``hfield`` geoms (it warns "Unsupported MJCF geom type"), so the backend
adds each colliding one as a ``gs.morphs.Terrain`` built from the same samples (``LiteModel.hfields``,
MuJoCo's ``hfield_data``). Genesis' terrain puts sample ``[i, j]`` at local ``(i, j) * horizontal_scale``
and splits each cell along ``(i + 1, j)-(i, j + 1)``; MuJoCo puts ``data[r, c]`` at
``(-sx + c dx, -sy + r dy)`` and splits along ``(c, r)-(c + 1, r + 1)``. With the columns reversed and
the terrain turned +90 degrees about z (its corner at the field's ``(+sx, -sy)``), Genesis' row ``i`` is
MuJoCo's row ``r`` and its diagonal is MuJoCo's, so both engines collide with the same triangles.
Friction and solver parameters are those Genesis' importer gives the geom (its compile of the file).
"""

from __future__ import annotations

import numpy as np

from unisim_core.contract import quat as Q
from unisim_core.contract.errors import UnsupportedCapabilityError

from ._lazy import genesis as gs

__all__ = ["add_height_fields", "set_solver_params"]

#: +90 degrees about z (wxyz).
_QUARTER_TURN = np.array([np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)])


def _refuse(name: str, path: str, why: str) -> UnsupportedCapabilityError:
    return UnsupportedCapabilityError(name, "hfield", f"{path}: {why}")


def add_height_fields(scene, lite, xml: str, path: str, name: str) -> dict[int, tuple[object, np.ndarray]]:
    """Add a terrain entity for every colliding height-field geom of ``lite`` to ``scene`` (before the build);
    returns ``{geom id: (entity, Genesis' solver parameters of the geom)}``. ``xml`` is the file's text as given
    to Genesis' importer. Refused (``hfield``) where Genesis cannot collide as MuJoCo does: more than one
    colliding field (Genesis' collider holds one terrain per scene), a field on a moving body or tilted, cells
    that are not square."""
    geoms = [g for g, geom in enumerate(lite.geoms)
             if geom["type"] == "hfield" and (geom["contype"] or geom["conaffinity"])]
    if not geoms:
        return {}
    if len(geoms) > 1:
        raise _refuse(name, path, f"{len(geoms)} colliding height-field geoms {geoms}; Genesis' collider holds one "
                                  "terrain per scene")
    from genesis.utils.mjcf import build_model

    mj = build_model(xml, discard_visual=True)  # Genesis' own compile: the friction and solver parameters it imports
    out = {}
    for g in geoms:
        try:
            pos, quat = lite.geom_pose_w(g)
        except ValueError as exc:
            raise _refuse(name, path, f"{exc}; Genesis' terrain is a fixed entity") from None
        if abs(abs(Q.quat_apply(quat, np.array([0.0, 0.0, 1.0]))[2]) - 1.0) > 1e-9:
            raise _refuse(name, path, f"height-field geom {g} is tilted; Genesis' terrain is z-up")
        hf = lite.hfields[lite.geoms[g]["hfield"]]
        sx, sy, sz = (float(v) for v in hf["size"][:3])
        nrow, ncol = hf["data"].shape
        dx, dy = 2.0 * sx / (ncol - 1), 2.0 * sy / (nrow - 1)
        if not np.isclose(dx, dy, rtol=1e-9, atol=0.0):
            raise _refuse(name, path, f"height field {hf['name']!r} has {dx:g} x {dy:g} m cells; Genesis' terrain "
                                      "has one horizontal scale (square cells)")
        corner = pos + Q.quat_apply(quat, np.array([sx, -sy, 0.0]))
        morph = gs.morphs.Terrain(height_field=np.ascontiguousarray(hf["data"][:, ::-1] * sz), horizontal_scale=dx,
                                  vertical_scale=1.0, pos=tuple(corner), quat=tuple(Q.quat_mul(quat, _QUARTER_TURN)))
        ent = scene.add_entity(morph, material=gs.materials.Rigid(friction=float(mj.geom_friction[g, 0])))
        out[g] = ent, np.concatenate((mj.geom_solref[g], mj.geom_solimp[g]))
    return out


def set_solver_params(scene, terrains: dict[int, tuple[object, np.ndarray]]) -> None:
    """After the build: each terrain geom gets the solver parameters Genesis' importer gives its MJCF geom."""
    solver = scene.sim.rigid_solver
    for ent, sol in terrains.values():
        solver.set_sol_params(sol, geoms_idx=[geom.idx for geom in ent.geoms])
