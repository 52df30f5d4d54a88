"""Per-env model fields behind the randomization terms, written through Isaac Lab / PhysX per env (worker).

Every value has MuJoCo's meaning; the tables are ``(num_envs, count, *shape)`` float64 in engine
row order, in MuJoCo's ids (bodies, dofs, actuators):

- ``body_mass``, ``body_com_offset`` (``body_ipos``), ``body_inertia`` (principal moments about the
  inertial frame ``body_iquat``): the articulation links' PhysX mass properties per env — Isaac Lab
  2.3 through ``root_physx_view.set_masses`` / ``set_coms`` / ``set_inertias`` (CPU tensors, the
  views' rule: Isaac Lab's ``randomize_rigid_body_mass`` moves them to the CPU), Isaac Lab 3.0
  through ``Articulation.set_masses_index`` / ``set_coms_index`` / ``set_inertias_index``. PhysX
  keeps the COM frame (``get_coms``: position and principal-axes quaternion in the link frame) and
  the inertia in it, so a MuJoCo principal moment is the diagonal there. The world body and bodies
  that are not links of the articulation (none in the models the backend accepts) are refused.
- ``dof_damping``, ``dof_armature``, ``actuator_kp``, ``actuator_kd``: each env's
  :func:`unisim_physx.physx_drives` rebuilt from its values; the implicit drive damping
  (joint damping + gear² kv) and the armature go to the env's joints
  (``write_joint_damping_to_sim`` / ``write_joint_armature_to_sim``, ``*_index`` in 3.0), the
  explicit servo law per env (:func:`unisim_physx.stack_drives`). ``actuator_kp`` of a
  position servo writes MuJoCo's ``gainprm[0]`` and ``-biasprm[1]`` together (the servo's kp),
  ``actuator_kd`` its ``-biasprm[2]`` (kv); a motor has neither, a velocity servo no kp: refused.
- ``gravity``: PhysX's gravity is one per scene, so each env's difference ``m (g_env - g)`` acts at
  every link's COM before every substep (:meth:`ModelFields.gravity_wrenches`, with the staged
  wrenches).

Not declared (``REFUSED_TERMS``): geom friction (PhysX combines two shapes' materials by their
combine mode, the average by default, MuJoCo takes the larger; the importer's per-geom materials are
not mapped per env yet), geom size and MuJoCo's soft-contact parameters, dof frictionloss (the host
refuses frictionloss scenes).
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from unisim_core.contract.errors import InvalidInputError
from unisim_physx import physx_drives, stack_drives

__all__ = ["MODEL_TERMS", "REFUSED_TERMS", "ModelFields"]

MODEL_TERMS = ("body_mass", "body_inertia", "body_com_offset", "dof_damping", "dof_armature", "actuator_kp",
               "actuator_kd", "gravity")
REFUSED_TERMS = {
    "geom_friction": "PhysX combines the two shapes' friction by the materials' combine mode (the average by "
                     "default) where MuJoCo takes the larger, and the MJCF importer's per-geom materials are not "
                     "mapped per env",
    "geom_size": "a PhysX shape keeps the geometry it was cooked with",
    "geom_solref": "PhysX contacts are rigid constraints: MuJoCo's soft-contact reference has no PhysX counterpart",
    "geom_solimp": "PhysX contacts are rigid constraints: MuJoCo's soft-contact impedance has no PhysX counterpart",
    "dof_frictionloss": "the backend refuses frictionloss scenes (PhysX joint friction is not MuJoCo's law)",
}
_BODY = ("body_mass", "body_inertia", "body_com_offset")
_DRIVE = ("dof_damping", "dof_armature", "actuator_kp", "actuator_kd")


class ModelFields:
    """The per-env tables and their writes; ``drives`` is the stacked per-env servo law."""

    def __init__(self, session: Any) -> None:
        s = self._s = session
        lite, info, n = s.lite, s.info, s.n
        nominal = {"body_mass": info.body_mass, "body_inertia": info.body_inertia, "body_com_offset": info.body_ipos,
                   "dof_damping": info.dof_damping, "dof_armature": info.dof_armature,
                   "actuator_kp": info.actuator_kp, "actuator_kd": info.actuator_kd, "gravity": info.gravity}
        self.tables = {t: np.repeat(np.asarray(v, dtype=np.float64)[None], n, axis=0) for t, v in nominal.items()}
        self._iquat = np.asarray(lite.body_iquat, dtype=np.float64)
        self._kinds = [a["kind"] for a in lite.actuators]
        self.drives = s.drives
        self.gravity_changed = False

    # ------------------------------------------------------------------ reads
    def read(self, term: str) -> np.ndarray:
        return self.tables[term].copy()

    # ------------------------------------------------------------------ checks
    def check(self, term: str, target_ids: np.ndarray | None) -> None:
        """Refuse targets Isaac Sim cannot hold per env (before anything is written)."""
        if term in _BODY:
            bad = [int(b) for b in target_ids if self._s.body_ids[int(b)] < 0]
            if bad:
                raise InvalidInputError(f"{term}.target_ids: body {bad[0]} ({self._s.info.body_names[bad[0]]!r}) is "
                                        "not a link of the articulation; its mass properties are not simulated")
        elif term == "actuator_kp":
            bad = [int(a) for a in target_ids if self._kinds[int(a)] != "position"]
            if bad:
                raise InvalidInputError(f"actuator_kp.target_ids: actuator {self._s.info.actuator_names[bad[0]]!r} "
                                        f"is a {self._kinds[bad[0]]}; kp exists for position servos only")
        elif term == "actuator_kd":
            bad = [int(a) for a in target_ids if self._kinds[int(a)] == "motor"]
            if bad:
                raise InvalidInputError(f"actuator_kd.target_ids: actuator {self._s.info.actuator_names[bad[0]]!r} "
                                        "is a motor; kd exists for position and velocity servos only")
        elif term in ("dof_damping", "dof_armature"):
            driven = {int(self._s.lite.joints[j]["dofadr"]) for j, row in enumerate(self._s.lite.joints)
                      if row["type"] in ("hinge", "slide")}
            bad = [int(d) for d in target_ids if int(d) not in driven]
            if bad:
                raise InvalidInputError(f"{term}.target_ids: dof {bad[0]} is a free joint's; PhysX holds damping and "
                                        "armature per articulation joint (hinge/slide) only")

    # ------------------------------------------------------------------ writes
    def write(self, term: str, rows: np.ndarray, target_ids: np.ndarray | None, values: np.ndarray) -> None:
        """Absolute ``values`` for engine ``rows`` (validated by the host and :meth:`check`)."""
        self.check(term, target_ids)
        table = self.tables[term]
        if target_ids is None:
            table[rows] = values
        else:
            table[np.ix_(rows, target_ids)] = values
        if term in _BODY:
            self._write_bodies(rows)
        elif term in _DRIVE:
            self._write_drives(rows)
        else:
            self.gravity_changed = bool(np.any(self.tables["gravity"] != self._s.info.gravity))

    def _write_bodies(self, rows: np.ndarray) -> None:
        s, T = self._s, self.tables
        mujoco_ids = np.flatnonzero(s.body_ids >= 0)
        links = s.body_ids[mujoco_ids]
        L = s.num_links
        mass, com, inertia = s.lab.body_mass_properties(s.robot)  # (n, L), (n, L, 7) xyzw, (n, L, 9)
        mass, com, inertia = mass[rows], com[rows], inertia[rows]
        mass[:, links] = T["body_mass"][np.ix_(rows, mujoco_ids)]
        com[:, links, :3] = T["body_com_offset"][np.ix_(rows, mujoco_ids)]
        com[:, links, 3:] = self._iquat[mujoco_ids][:, [1, 2, 3, 0]]  # the principal axes, xyzw
        diag = np.zeros((len(rows), len(links), 3, 3))
        idx = np.arange(3)
        diag[..., idx, idx] = T["body_inertia"][np.ix_(rows, mujoco_ids)]
        inertia[:, links] = diag.reshape(len(rows), len(links), 9)
        s.lab.write_body_mass_properties(s.robot, rows, mass.reshape(len(rows), L), com, inertia)

    def _write_drives(self, rows: np.ndarray) -> None:
        s, T = self._s, self.tables
        lite = s.lite
        per_env = []
        for e in range(s.n):
            joints, acts = copy.deepcopy(lite.joints), copy.deepcopy(lite.actuators)
            for j in joints:
                if j["type"] in ("hinge", "slide"):
                    j["damping"], j["armature"] = T["dof_damping"][e, j["dofadr"]], T["dof_armature"][e, j["dofadr"]]
            for a, kp, kv in zip(acts, T["actuator_kp"][e], T["actuator_kd"][e]):
                a["kp"], a["kv"] = kp, kv
            per_env.append(physx_drives(joints, acts, implicit_kv=s.implicit_kv))
        self.drives = stack_drives(per_env)
        s.lab.write_joint_drives(s.robot, rows, s.effort_joint_ids, self.drives.damping[rows],
                                 self.drives.armature[rows])

    # ------------------------------------------------------------------ gravity
    def gravity_wrenches(self) -> np.ndarray:
        """``(n, L, 3)`` world force at each link's COM making its gravity the env's: ``m (g_env - g)``."""
        s = self._s
        mass = np.zeros((s.n, s.num_links))
        mujoco_ids = np.flatnonzero(s.body_ids >= 0)
        mass[:, s.body_ids[mujoco_ids]] = self.tables["body_mass"][:, mujoco_ids]
        return mass[..., None] * (self.tables["gravity"] - s.info.gravity)[:, None, :]
