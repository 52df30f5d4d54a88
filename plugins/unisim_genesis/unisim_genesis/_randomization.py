"""Per-env model fields behind the randomization terms, through Genesis' per-env setters.

The scene is built with ``RigidOptions(batch_links_info=True, batch_dofs_info=True)``, so link
inertials (mass, COM, inertia) and dof parameters (damping, armature, frictionloss, actuator
gain and bias) hold one value per env; gravity is per env in Genesis' solver; friction is a
per-env ratio on each geom's own value (``set_geoms_friction_ratio``). Values mean what they mean
on MuJoCo (``unisim_mujoco``): the same tables, set/scale/add resolved by the core, masses without
rescaling the inertia, a body's principal inertia in its inertial frame, kp/kd of affine
(position/velocity) actuators only.

What the engine holds is read back from it (``read``); entries it does not hold (the world body,
static bodies, whose inertials move nothing, and friction coefficients MuJoCo itself ignores at a
geom's ``condim``) keep the value written, as MuJoCo's tables do.
"""

from __future__ import annotations

import numpy as np

from unisim_core.contract.errors import InvalidInputError

__all__ = ["GenesisModelFields", "REFUSED_TERMS"]

#: Model terms Genesis cannot randomize per env, with the engine's reason (refused by name at the call).
REFUSED_TERMS = {
    "geom_size": "Genesis builds each geom's collision shape (and its SDF and bounds) once for every env; its "
                 "geometry has no per-env size",
    "geom_solref": "Genesis holds a geom's constraint parameters (set_sol_params) once for every env; they are "
                   "not batched per env",
    "geom_solimp": "Genesis holds a geom's constraint parameters (set_sol_params) once for every env; they are "
                   "not batched per env",
}


class GenesisModelFields:
    """Reads and writes the per-env model fields of one scene: its Genesis ``scene`` and ``entity``, the
    file's tables ``lite``, and the backend's index maps (contract body -> entity-local link, ``-1`` for the
    world; MuJoCo dof column -> Genesis dof; actuator -> Genesis dof and its joint's ``ref``; height-field geom
    -> the solver's geoms of its terrain entity)."""

    def __init__(self, scene, ent, lite, num_envs: int, link_of: np.ndarray, v_cols: np.ndarray,
                 act_dofs: np.ndarray, act_ref: np.ndarray, terrain_geoms: dict[int, list[int]]) -> None:
        self._scene, self._ent, self._lite = scene, ent, lite
        self._link_of, self._v_cols, self._act_dofs, self._act_ref = link_of, v_cols, act_dofs, act_ref
        n = num_envs
        info = lite.model_info()
        self._written = {  # every value written, the engine's own read over it where it holds the field
            "body_mass": np.tile(np.asarray(info.body_mass, np.float64), (n, 1)),
            "body_inertia": np.tile(info.body_inertia, (n, 1, 1)),
            "body_com_offset": np.tile(info.body_ipos, (n, 1, 1)),
            "geom_friction": np.tile(info.geom_friction, (n, 1, 1)),
        }
        fixed = {link.idx_local for link in ent.links if link.is_fixed}
        #: bodies whose inertials Genesis simulates: a link that moves (the world and static bodies move nothing)
        self._moving = np.array([b for b in range(len(link_of)) if link_of[b] >= 0 and link_of[b] not in fixed],
                                dtype=np.int64)
        self._desc_mass = {link.idx_local: float(link.desc.mass) for link in ent.links}
        self._geoms = {**self._map_geoms(), **terrain_geoms}
        gs_fric = np.zeros((len(lite.geoms), 3))
        for g, gids in self._geoms.items():
            geom = ent.solver.geoms[gids[0]]
            gs_fric[g] = (float(geom.get_friction()), float(geom.get_friction_torsional()),
                          float(geom.get_friction_rolling()))
        self._gs_friction = gs_fric  # Genesis' own coefficients per contract geom (0: inert at its condim)
        self._affine = np.array([a["kind"] != "motor" for a in lite.actuators], dtype=bool)

    def _map_geoms(self) -> dict[int, list[int]]:
        """Contract geom -> the solver's Genesis geoms it became (collision geoms only; Genesis keeps a
        body's collision geoms in the file's order, one each)."""
        lite, ent = self._lite, self._ent
        links = [ent.links[k] if k >= 0 else None for k in self._link_of]
        if len(ent.links) == len(lite.body_names):  # the world body's geoms are on Genesis' world link
            links[0] = ent.links[0]
        out: dict[int, list[int]] = {}
        for b, link in enumerate(links):
            mine = [g for g, geom in enumerate(lite.geoms) if geom["body"] == b and geom["type"] != "hfield"
                    and (geom["contype"] or geom["conaffinity"])]  # height fields are terrain entities
            if link is None or not mine:
                continue
            gids = [geom.idx for geom in link.geoms]
            if len(gids) == len(mine):
                out.update({g: [k] for g, k in zip(mine, gids)})
        return out

    # ------------------------------------------------------------------ checks (before any write)
    def check(self, term: str, target_ids: np.ndarray | None, values: np.ndarray) -> None:
        """Reject what Genesis cannot honour as MuJoCo would (``InvalidInputError``), before any op is written."""
        lite = self._lite
        if term in ("actuator_kp", "actuator_kd"):
            bad = [lite.actuators[a]["name"] for a in target_ids if not self._affine[a]]
            if bad:
                raise InvalidInputError(f"{term}.target_ids: actuators {bad} have no PD bias "
                                        "(only position/velocity-type actuators have kp/kd)")
        if term == "geom_friction":
            for col, g in enumerate(target_ids):
                g = int(g)
                nominal = np.asarray(lite.geoms[g]["friction"], np.float64)
                if g not in self._geoms:
                    if lite.geoms[g]["contype"] or lite.geoms[g]["conaffinity"]:
                        raise InvalidInputError(f"geom_friction.target_ids: geom {g} became several Genesis geoms "
                                                "(a split mesh); its friction cannot be set per env")
                    continue  # collides with nothing: its friction acts nowhere, on MuJoCo too
                if nominal[0] <= 0.0:
                    raise InvalidInputError(f"geom_friction.target_ids: geom {g} has sliding friction 0 in the file; "
                                            "Genesis randomizes friction as a per-env ratio of the file's value")
                ratio = values[:, col, 0] / nominal[0]
                for k, what in ((1, "torsional"), (2, "rolling")):
                    own = self._gs_friction[g, k]
                    if own and not np.allclose(values[:, col, k], own * ratio, rtol=1e-9, atol=0.0):
                        raise InvalidInputError(
                            f"geom_friction.values: geom {g} has {what} friction at its condim; Genesis scales it "
                            f"with the sliding friction by one per-env ratio, so it must be {own:g} x "
                            f"(sliding / {nominal[0]:g})")

    # ------------------------------------------------------------------ writes
    def write(self, term: str, env_ids: np.ndarray, target_ids: np.ndarray | None, values: np.ndarray) -> None:
        """Write absolute per-env values (validated by the core and :meth:`check`)."""
        ent, link_of = self._ent, self._link_of
        envs = np.asarray(env_ids, dtype=np.int64)
        if term == "gravity":
            self._scene.sim.set_gravity(values, envs_idx=envs)
            return
        if term in self._written:
            self._written[term][np.ix_(envs, target_ids)] = values
        if term in ("body_mass", "body_inertia", "body_com_offset"):
            cols = np.flatnonzero(np.isin(target_ids, self._moving))
            if not len(cols):
                return
            links = link_of[target_ids[cols]]
            vals = values[:, cols]
            if term == "body_mass":
                if sum(self._desc_mass[int(k)] for k in links) <= 0.0:  # Genesis needs some mass among the links
                    heavy = next(int(link_of[m]) for m in self._moving if self._desc_mass[int(link_of[m])] > 0)
                    links = np.append(links, heavy)
                    current = ent.get_links_mass(links_idx_local=[heavy], envs_idx=envs).cpu().numpy()
                    vals = np.concatenate([vals, current.reshape(len(envs), 1)], axis=1)
                ent.set_links_mass(vals, links_idx_local=links, envs_idx=envs)
            elif term == "body_inertia":
                ent.set_links_inertia(vals[..., None] * np.eye(3), links_idx_local=links, envs_idx=envs)
            else:
                ent.set_links_COM(vals, links_idx_local=links, envs_idx=envs)
        elif term == "geom_friction":
            nominal = np.asarray([g["friction"][0] for g in self._lite.geoms], np.float64)
            cols = [c for c, g in enumerate(target_ids) if int(g) in self._geoms]
            if cols:
                gids = [self._geoms[int(target_ids[c])][0] for c in cols]
                ratio = values[:, cols, 0] / nominal[target_ids[cols]]
                ent.solver.set_geoms_friction_ratio(ratio, geoms_idx=gids, envs_idx=envs)
        elif term in ("dof_damping", "dof_armature", "dof_frictionloss"):
            setter = getattr(ent, f"set_dofs_{term[4:]}")
            setter(values, dofs_idx_local=self._v_cols[target_ids], envs_idx=envs)
        elif term == "actuator_kp":
            dofs = self._act_dofs[target_ids]
            ent.set_dofs_kp(values, dofs_idx_local=dofs, envs_idx=envs)  # gain kp, bias (0, -kp, kept)
            ref = self._act_ref[target_ids]
            if ref.any():  # a joint measured from its ref (the backend's _apply_joint_refs): bias0 = bias1 * ref
                b2 = ent.get_dofs_act_bias(dofs_idx_local=dofs, envs_idx=envs)[2]
                ent.set_dofs_act_bias(-values * ref, -values, b2, dofs_idx_local=dofs, envs_idx=envs)
        else:  # actuator_kd
            ent.set_dofs_kv(values, dofs_idx_local=self._act_dofs[target_ids], envs_idx=envs)

    # ------------------------------------------------------------------ reads
    def read(self, term: str) -> np.ndarray:
        """``(num_envs, count, *value_shape)`` (``(num_envs, 3)`` for gravity), float64."""
        ent = self._ent
        np_ = lambda t: t.detach().cpu().numpy().astype(np.float64)  # noqa: E731
        if term == "gravity":
            return np_(self._scene.sim.rigid_solver.get_gravity())
        if term in ("dof_damping", "dof_armature", "dof_frictionloss"):
            return np_(getattr(ent, f"get_dofs_{term[4:]}")())[:, self._v_cols]
        if term in ("actuator_kp", "actuator_kd"):
            bias = np_(ent.get_dofs_act_bias()[1 if term == "actuator_kp" else 2])[:, self._act_dofs]
            return np.where(self._affine, -bias, 0.0)
        out = self._written[term].copy()
        if term == "geom_friction":
            ratio = np_(ent.solver.get_geoms_friction_ratio())
            nominal = np.asarray([g["friction"][0] for g in self._lite.geoms], np.float64)
            for g, gids in self._geoms.items():
                out[:, g, 0] = nominal[g] * ratio[:, gids[0]]
                for k in (1, 2):
                    if self._gs_friction[g, k]:
                        out[:, g, k] = self._gs_friction[g, k] * ratio[:, gids[0]]
            return out
        links = self._link_of[self._moving]
        if term == "body_mass":
            out[:, self._moving] = np_(ent.get_links_mass())[:, links]
        elif term == "body_inertia":
            out[:, self._moving] = np.diagonal(np_(ent.get_links_inertia())[:, links], axis1=-2, axis2=-1)
        else:
            out[:, self._moving] = np_(ent.get_links_COM())[:, links]
        return out
