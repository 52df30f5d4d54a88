"""The contract's model terms (``unisim_core.contract.randomization``) on Newton's per-world model arrays.

Every term is written where Newton keeps it, per world, and ``SolverMuJoCo.notify_model_changed``
carries it into MuJoCo Warp's per-world model (recomputing MuJoCo's derived constants), so the
values mean what they mean on MuJoCo:

- ``body_mass`` -> ``body_mass`` (and ``body_inv_mass``); ``body_com_offset`` (MuJoCo's ``body_ipos``,
  the COM in the body frame) -> ``body_com``; ``body_inertia`` (MuJoCo's principal moments in the
  body's inertial frame ``body_iquat``, which randomization keeps) -> Newton's tensor about the COM in
  the body frame, ``R diag(I) R^T`` with ``R`` the file's ``body_iquat`` (read back as the diagonal of
  ``R^T I R``; SolverMuJoCo diagonalizes the tensor again for MuJoCo Warp);
- ``geom_friction`` -> ``shape_material_mu``/``_mu_torsional``/``_mu_rolling``; ``geom_size`` ->
  ``shape_scale`` (primitives); ``geom_solref`` -> ``mujoco.solref`` with ``mujoco.solref_mode`` RAW
  (MuJoCo's values as given, not Newton's stiffness/damping round trip); ``geom_solimp`` ->
  ``mujoco.geom_solimp``; read back from MuJoCo Warp's per-world geom arrays;
- ``dof_damping``/``dof_armature``/``dof_frictionloss`` -> ``joint_damping``/``joint_armature``/``joint_friction``;
- ``actuator_kp``/``actuator_kd`` -> ``mujoco.actuator_gainprm``/``_biasprm`` (MuJoCo's affine PD:
  kp = gainprm[0] = -biasprm[1], kd = -biasprm[2]);
- ``gravity`` -> ``gravity`` (one row per world).

Targets Newton does not hold (the world body; geoms its importer does not simulate, those without
contacts) keep their values in a host table: they have no physical effect on MuJoCo either.
"""

from __future__ import annotations

import newton
import numpy as np
import warp as wp

from unisim_core.contract import quat as Q
from unisim_core.contract.errors import InvalidInputError

from ._scene import geom_maps

__all__ = ["NewtonModelTerms"]

_F = newton.ModelFlags
#: term -> what SolverMuJoCo must re-read
NOTIFY = {"body_mass": _F.BODY_INERTIAL_PROPERTIES, "body_inertia": _F.BODY_INERTIAL_PROPERTIES,
          "body_com_offset": _F.BODY_INERTIAL_PROPERTIES, "geom_friction": _F.SHAPE_PROPERTIES,
          "geom_size": _F.SHAPE_PROPERTIES, "geom_solref": _F.SHAPE_PROPERTIES, "geom_solimp": _F.SHAPE_PROPERTIES,
          "dof_damping": _F.JOINT_DOF_FORCE_PROPERTIES, "dof_frictionloss": _F.JOINT_DOF_FORCE_PROPERTIES,
          "dof_armature": _F.JOINT_DOF_INERTIAL_PROPERTIES, "actuator_kp": _F.ACTUATOR_PROPERTIES,
          "actuator_kd": _F.ACTUATOR_PROPERTIES, "gravity": _F.MODEL_PROPERTIES}
#: geom types whose size randomization is meaningful (as on MuJoCo)
_PRIMITIVES = frozenset({"sphere", "capsule", "ellipsoid", "cylinder", "box"})
_SOLREF_RAW = 1  # newton's SOLREF_MODE_RAW: MuJoCo's solref as given


def _scatter(array: wp.array, index: tuple, values: np.ndarray) -> None:
    """``array[index] = values`` through the host (in place on warp's CPU device)."""
    host = array.numpy()
    host[index] = values
    array.assign(host)


class NewtonModelTerms:
    """Reads and writes the model terms of ``backend`` (see the module docstring)."""

    def __init__(self, backend) -> None:
        self._be = backend
        lay, lite, n = backend._layout, backend._lite, backend.num_envs
        self._n = n
        worlds = np.arange(n)[:, None]
        # body rows: world w's contract body b at w * bodies + body_src[b] (-1: the world body, not in Newton)
        self._body = np.where(lay.body_src[None, :] >= 0, worlds * lay.bodies + lay.body_src[None, :], -1)
        self._dof = worlds * lay.dofs + lay.qd_src[None, :]
        nu = len(lite.actuators)
        self._actuator = worlds * nu + np.arange(nu)[None, :]
        self._kind = [a["kind"] for a in lite.actuators]
        self._iquat = np.reshape(lite.body_iquat, (-1, 4))
        self._geom_types = [g["type"] for g in lite.geoms]
        self._shape, self._mjgeom = geom_maps(backend._model, backend._solver, lite, lay.body_src, n)
        info = backend.model_info
        # host tables of the targets Newton does not hold (world body, geoms it does not simulate)
        self._host = {term: np.repeat(np.asarray(nominal, dtype=np.float64)[None], n, axis=0) for term, nominal in (
            ("body_mass", info.body_mass), ("body_inertia", info.body_inertia), ("body_com_offset", info.body_ipos),
            ("geom_friction", info.geom_friction), ("geom_size", info.geom_size), ("geom_solref", info.geom_solref),
            ("geom_solimp", info.geom_solimp))}

    # ------------------------------------------------------------------ checks
    def check(self, term: str, target_ids: np.ndarray | None) -> None:
        """Reject targets the term cannot change (as on MuJoCo): kp/kd of actuators without a PD
        bias (motors), sizes of geoms that are not primitives."""
        names = self._be.model_info
        if term in ("actuator_kp", "actuator_kd"):
            bad = [names.actuator_names[a] for a in target_ids if self._kind[a] == "motor"]
            if bad:
                raise InvalidInputError(f"{term}.target_ids: actuators {bad} have no PD bias "
                                        "(only position/velocity-type actuators have kp/kd)")
        if term == "geom_size":
            bad = [int(g) for g in target_ids if self._geom_types[g] not in _PRIMITIVES]
            if bad:
                raise InvalidInputError(f"geom_size.target_ids: geoms {bad} are not primitives "
                                        "(sphere, capsule, ellipsoid, cylinder, box); their size cannot change")

    # ------------------------------------------------------------------ reads
    def read(self, term: str) -> np.ndarray:
        """Per-env table of ``term``: ``(num_envs, count, *value_shape)`` (``(num_envs, 3)`` for gravity)."""
        model, solver = self._be._model, self._be._solver
        if term == "gravity":
            return model.gravity.numpy()[:self._n].astype(np.float64)
        if term.startswith("dof_"):
            table = {"dof_damping": model.joint_damping, "dof_armature": model.joint_armature,
                     "dof_frictionloss": model.joint_friction}[term]
            return table.numpy()[self._dof].astype(np.float64)
        if term.startswith("actuator_"):
            bias = model.mujoco.actuator_biasprm.numpy()[self._actuator].astype(np.float64)
            pd = np.array([k != "motor" for k in self._kind])
            return np.where(pd, -bias[..., 1 if term == "actuator_kp" else 2], 0.0)
        out = self._host[term].copy()
        if term.startswith("body_"):
            rows = self._body
            held = rows[0] >= 0
            if term == "body_mass":
                out[:, held] = model.body_mass.numpy()[rows[:, held]]
            elif term == "body_com_offset":
                out[:, held] = model.body_com.numpy()[rows[:, held]]
            else:
                tensor = model.body_inertia.numpy()[rows[:, held]].astype(np.float64)
                rot = Q.matrix_from_quat(self._iquat[held])
                out[:, held] = np.einsum("bji,ebjk,bki->ebi", rot, tensor, rot)
            return out
        held = self._mjgeom[0] >= 0
        field = {"geom_friction": solver.mjw_model.geom_friction, "geom_size": solver.mjw_model.geom_size,
                 "geom_solref": solver.mjw_model.geom_solref, "geom_solimp": solver.mjw_model.geom_solimp}[term]
        out[:, held] = field.numpy()[np.arange(self._n)[:, None], self._mjgeom[:, held]]
        return out

    # ------------------------------------------------------------------ writes
    def write(self, term: str, env_ids: np.ndarray, target_ids: np.ndarray | None, values: np.ndarray):
        """Write absolute ``values`` of ``term`` for ``env_ids`` (and ``target_ids``) into Newton's
        model; returns the ``notify_model_changed`` flag that carries them into MuJoCo Warp."""
        model = self._be._model
        rows = env_ids[:, None]
        if term == "gravity":
            _scatter(model.gravity, (env_ids,), values)
        elif term.startswith("dof_"):
            table = {"dof_damping": model.joint_damping, "dof_armature": model.joint_armature,
                     "dof_frictionloss": model.joint_friction}[term]
            _scatter(table, (self._dof[rows, target_ids],), values)
        elif term == "actuator_kp":
            index = self._actuator[rows, target_ids]
            _scatter(model.mujoco.actuator_gainprm, (index, 0), values)
            _scatter(model.mujoco.actuator_biasprm, (index, 1), -values)
        elif term == "actuator_kd":
            _scatter(model.mujoco.actuator_biasprm, (self._actuator[rows, target_ids], 2), -values)
        elif term.startswith("body_"):
            self._write_bodies(term, env_ids, target_ids, values)
        else:
            self._write_geoms(term, env_ids, target_ids, values)
        return NOTIFY[term]

    def _split(self, table: np.ndarray, env_ids, target_ids, values, term) -> tuple:
        """Record the values of targets Newton does not hold in the host table; return the held
        targets' ``(index into table's rows (envs, targets), values, held columns)``."""
        held = table[0, target_ids] >= 0
        self._host[term][np.ix_(env_ids, target_ids[~held])] = values[:, ~held]
        return table[np.ix_(env_ids, target_ids[held])], values[:, held], target_ids[held]

    def _write_bodies(self, term, env_ids, target_ids, values) -> None:
        model = self._be._model
        index, values, bodies = self._split(self._body, env_ids, target_ids, values, term)
        if term == "body_mass":
            _scatter(model.body_mass, (index,), values)
            _scatter(model.body_inv_mass, (index,), 1.0 / values)
        elif term == "body_com_offset":
            _scatter(model.body_com, (index,), values)
        else:
            rot = Q.matrix_from_quat(self._iquat[bodies])
            tensor = np.einsum("bij,ebj,bkj->ebik", rot, values, rot)
            _scatter(model.body_inertia, (index,), tensor)
            _scatter(model.body_inv_inertia, (index,), np.linalg.inv(tensor))

    def _write_geoms(self, term, env_ids, target_ids, values) -> None:
        model = self._be._model
        index, values, _ = self._split(self._shape, env_ids, target_ids, values, term)
        if term == "geom_friction":
            for col, table in enumerate((model.shape_material_mu, model.shape_material_mu_torsional,
                                         model.shape_material_mu_rolling)):
                _scatter(table, (index,), values[..., col])
        elif term == "geom_size":
            _scatter(model.shape_scale, (index,), values)
        elif term == "geom_solref":
            _scatter(model.mujoco.solref, (index,), values)
            _scatter(model.mujoco.solref_mode, (index,), _SOLREF_RAW)
        else:
            _scatter(model.mujoco.geom_solimp, (index,), values)
