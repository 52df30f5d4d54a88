"""Per-env model fields behind the randomization terms, written onto each env's PhysX objects.

Every env is its own PhysX scene, so every value below is per env, with MuJoCo's meaning:

- ``body_mass``, ``body_inertia`` (principal, in the inertial frame ``body_iquat``), ``body_com_offset``
  (``body_ipos``): the link's ``set_mass`` / ``set_inertia`` / ``set_cmass_local_pose``; the backend's
  COM table (origin velocities) follows. Bodies welded to the world or to a mocap body are posed, not
  simulated, in both engines: their values are kept in the table only.
- ``geom_friction``: the sliding coefficient (column 0) on each shape's material, solved per env so
  that PhysX's average of a pair's materials is MuJoCo's ``max`` (:mod:`._friction`); columns 1-2
  (torsional, rolling) are kept in the table: MuJoCo reads them only for ``condim`` 4/6 contacts, which
  PhysX has none of.
- ``dof_damping``, ``dof_armature``, ``dof_frictionloss``, ``actuator_kp``, ``actuator_kd``: each env's
  :func:`unisim_physx.physx_drives` rebuilt from its values (the drive damping and force limit,
  armature, on the env's joints; the explicit servo law per env, :func:`unisim_physx.stack_drives`).
  ``actuator_kp`` writes MuJoCo's ``gainprm[0]`` and ``-biasprm[1]`` together, ``actuator_kd``
  ``-biasprm[2]`` only, as the MuJoCo backend does.
- ``gravity``: a PhysX scene's gravity is fixed when it is made, so the difference to the model's is a
  force ``m (g_env - g)`` at each moving link's COM before every substep (exact: PhysX's gravity is
  ``m g`` there), together with MuJoCo's ``gravcomp`` force ``-gravcomp m g_env``.

Refused by name at the call (``_hooks.REFUSED_TERMS``): geom sizes and MuJoCo's soft-contact parameters.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import sapien
from sapien import physx

from unisim_core import SimBackend  # the engine's backend (its _backend module imports this one)
from unisim_core.contract.errors import InvalidInputError
from unisim_physx import physx_drives, stack_drives

from ._build import friction_ranks
from ._friction import physx_frictions, physx_materials
from ._hooks import REFUSED_TERMS

__all__ = ["REFUSED_TERMS", "ModelFields"]

_FLOAT32_MAX = float(np.finfo(np.float32).max)
_DRIVE_TERMS = frozenset({"dof_damping", "dof_armature", "dof_frictionloss", "actuator_kp", "actuator_kd"})
_BODY_TERMS = frozenset({"body_mass", "body_inertia", "body_com_offset"})


class ModelFields:
    """The per-env tables (float64, ``(n, count, *shape)``; gravity ``(n, 3)``) and their engine writes."""

    def __init__(self, backend: SimBackend, fixed: list[bool], implicit_kv: bool) -> None:
        self._b = backend
        lite, info, n = backend._lite, backend.model_info, backend.num_envs
        self._lite, self._fixed, self._implicit_kv = lite, fixed, implicit_kv
        nominal = {"body_mass": info.body_mass, "body_inertia": info.body_inertia, "body_com_offset": info.body_ipos,
                   "geom_friction": info.geom_friction, "dof_damping": info.dof_damping,
                   "dof_armature": info.dof_armature, "dof_frictionloss": info.dof_frictionloss,
                   "actuator_kp": info.actuator_kp, "actuator_kd": info.actuator_kd, "gravity": info.gravity}
        self.tables = {t: np.repeat(np.asarray(v, dtype=np.float64)[None], n, axis=0) for t, v in nominal.items()}
        drives = backend._drives
        self._acts = [a for a, act in enumerate(lite.actuators) if act["site"] < 0]  # those of the drives
        gain = np.ones(len(lite.actuators))  # MuJoCo's gainprm[0] per actuator (a site motor's: 1)
        gain[self._acts] = drives._default_gain if drives.gain is None else drives.gain
        self._gain = np.repeat(gain[None], n, axis=0)
        self._driven = [j for j, row in enumerate(lite.joints) if row["type"] in ("hinge", "slide")]
        self._dof_col = np.full(info.nv, -1, dtype=np.int64)  # dof -> hinge/slide column, -1: a free joint's
        for c, j in enumerate(self._driven):
            self._dof_col[lite.joints[j]["dofadr"]] = c
        self._pairs, self._rank = lite.collision_pairs(), friction_ranks(lite)
        self._geom_names = [g["name"] for g in lite.geoms]
        self.rows = [drives] * n  #: each env's PhysxDrives
        self._joints: list | None = None  # per env, per hinge/slide column: its PhysX joint (made on first write)

    # ------------------------------------------------------------------ reads
    def read(self, term: str) -> np.ndarray:
        return self.tables[term].copy()

    def frictions(self, env: int) -> np.ndarray:
        """Env ``env``'s PhysX material friction per geom (:func:`._friction.physx_materials`)."""
        return physx_materials(self.tables["geom_friction"][env, :, 0], self._pairs, self._rank, self._geom_names,
                               f"geom_friction randomization, env {env}")

    def gravity(self) -> np.ndarray:
        """``(n, 3)`` gravity per env, m/s²."""
        return self.tables["gravity"]

    def body_forces(self) -> list[tuple[int, np.ndarray]]:
        """``(body, forces (n, 3) float32)``, world frame, N, at the COM before every substep, for each moving
        body that needs one in some env: MuJoCo's ``gravcomp`` force ``-gravcomp m g_env`` (``gravcomp`` 1
        is the link's gravity switched off instead) and the gravity difference ``m (g_env - g)`` (links
        whose gravity PhysX applies)."""
        lite, mass, g = self._lite, self.tables["body_mass"], self.tables["gravity"]
        dg = g - np.asarray(lite.gravity, dtype=np.float64)
        out = []
        for b in range(1, len(lite.body_names)):
            if self._fixed[b]:
                continue
            c = float(lite.body_gravcomp[b])
            force = np.zeros_like(g) if c == 1.0 else mass[:, b, None] * dg
            if c not in (0.0, 1.0):
                force = force - c * mass[:, b, None] * g
            if force.any():
                out.append((b, force.astype(np.float32)))
        return out

    # ------------------------------------------------------------------ checks
    def check(self, term: str, env_ids: np.ndarray, target_ids: np.ndarray | None, values: np.ndarray) -> None:
        """Refuse values this mapping cannot honour (``InvalidInputError``), before anything is written."""
        info = self._b.model_info
        if term in ("dof_damping", "dof_armature", "dof_frictionloss"):
            free = [int(d) for d in target_ids if self._dof_col[d] < 0]
            if free:
                raise InvalidInputError(f"{term}.target_ids: dofs {free} belong to a free joint; a PhysX floating root "
                                        "has no joint to carry them (its link damping is not MuJoCo's per-dof term)")
        if term in ("actuator_kp", "actuator_kd"):
            bad = [info.actuator_names[a] for a in target_ids if self._lite.actuators[a]["kind"] == "motor"]
            if bad:
                raise InvalidInputError(f"{term}.target_ids: actuators {bad} have no PD bias "
                                        "(only position/velocity-type actuators have kp/kd)")
        if term == "geom_friction":
            table = self.tables["geom_friction"][env_ids].copy()
            table[:, target_ids] = values
            for k, i in enumerate(env_ids):
                try:
                    physx_frictions(table[k, :, 0], self._pairs, self._rank, self._geom_names)
                except ValueError as exc:
                    raise InvalidInputError(f"geom_friction: env {int(i)}: {exc}") from None

    # ------------------------------------------------------------------ writes
    def write(self, term: str, env_ids: np.ndarray, target_ids: np.ndarray | None, values: np.ndarray) -> None:
        table = self.tables[term]
        if target_ids is None:
            table[env_ids] = values
        else:
            table[env_ids[:, None], target_ids] = values
        if term == "actuator_kp":  # MuJoCo's gainprm[0] and -biasprm[1] together
            self._gain[env_ids[:, None], target_ids] = values
        if term in _BODY_TERMS:
            self._write_bodies(env_ids, target_ids)
        elif term == "geom_friction":
            for i in env_ids:
                x = self.frictions(int(i))
                for g, shape in self._b._shapes[i].items():
                    if np.float32(shape.physical_material.static_friction) != np.float32(x[g]):
                        shape.set_physical_material(physx.PhysxMaterial(float(x[g]), float(x[g]), 0.0))
        elif term in _DRIVE_TERMS:
            self._write_drives(env_ids)
        if term in ("body_mass", "gravity"):
            self._b._set_body_forces(self.body_forces())

    def _write_bodies(self, env_ids: np.ndarray, target_ids: np.ndarray) -> None:
        mass, inertia, com = (self.tables[t] for t in ("body_mass", "body_inertia", "body_com_offset"))
        iquat = self._lite.body_iquat
        for i in env_ids:
            links = self._b._links[i]
            for b in target_ids:
                if b == 0 or self._fixed[b]:  # posed, not simulated, in both engines
                    continue
                link = links[b]
                link.set_mass(float(mass[i, b]))
                link.set_inertia(inertia[i, b].astype(np.float32))
                link.set_cmass_local_pose(sapien.Pose(com[i, b].astype(np.float32),
                                                      np.asarray(iquat[b], dtype=np.float32)))
                self._b._set_com(int(i), int(b), com[i, b])

    def _drives_of(self, tables: dict[str, np.ndarray], env: int):
        """Env ``env``'s PhysxDrives from its rows of ``tables`` (dof and actuator terms)."""
        lite = self._lite
        joints = [dict(row) for row in lite.joints]
        for j in self._driven:
            d = lite.joints[j]["dofadr"]
            joints[j].update(damping=tables["dof_damping"][d], armature=tables["dof_armature"][d],
                             frictionloss=tables["dof_frictionloss"][d])
        acts = [dict(lite.actuators[a], kv=float(tables["actuator_kd"][a])) for a in self._acts]
        drives = physx_drives(joints, acts, implicit_kv=self._implicit_kv, dt=self._b.sim_dt, tendons=lite.tendons)
        return dataclasses.replace(drives, kp=np.array(tables["actuator_kp"], dtype=np.float64)[self._acts],
                                   gain=self._gain[env, self._acts].copy())

    def _write_drives(self, env_ids: np.ndarray) -> None:
        if self._joints is None:
            lay = self._b._layout
            self._joints = [[arts[a].get_active_joints()[k] for a, k in lay.dof_src[:, :2]] for arts in self._b._arts]
        for i in env_ids:
            drives = self._drives_of({t: self.tables[t][i] for t in _DRIVE_TERMS}, int(i))
            self.rows[i] = drives
            for joint, armature, damping, limit in zip(self._joints[i], drives.armature, drives.damping,
                                                       drives.force_limit):
                joint.set_armature(np.array([armature], dtype=np.float32))
                joint.set_drive_properties(0.0, float(damping), min(float(limit), _FLOAT32_MAX))
        first = self.rows[0]
        self._b._set_drives(first if all(r is first for r in self.rows) else stack_drives(self.rows))
