"""``MotrixBackend``: MotrixSim 0.10 behind the UniSim ``SimBackend`` contract.

One batched ``SceneData`` holds ``num_envs`` worlds. Reads go through compiled query
programs into persistent buffers (refreshed lazily, once per step); conventions
(xyzw -> wxyz, MotrixSim dof order -> MuJoCo qpos/qvel layout, float32 -> np_dtype)
are converted here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from unisim_core.contract import quat as Q
from unisim_core.contract.backend import SimBackend, diverged_rows
from unisim_core.contract.capabilities import Capability
from unisim_core.contract.config import BackendTerrainSpawnData, SceneCfg
from unisim_core.contract.errors import EngineError, InvalidInputError
from unisim_core.contract.model import ModelInfo
from unisim_core.plugin.plugin_support import SnapshotMemory

from . import _model
from ._contacts import (
    MotrixContactFill,
    collidable_bodies,
    enable_contact_report,
    pair_forces,
    pair_sensor_name,
)
from ._derived_sensors import DERIVED, DerivedSensors
from ._engine_mjcf import CONTACT_DATA, EngineMjcf
from ._errors import engine_call, engine_error
from ._features import (
    check_layout,
    check_model_features,
    load_error,
    warn_inertia,
    warn_stiff_contacts,
)
from ._mjcf import read_mjcf, warn_ignored_options
from ._mocap import MotrixMocapPoseBinding, write_mocap_poses
from ._options import MotrixOptions
from ._rebuild import rebuild
from ._scanner import MotrixHeightScanner, terrain_spawn_data
from ._site_actuators import SiteActuators
from ._threads import ensure_thread_pool

__all__ = ["MotrixBackend"]

_SUPPORTED_MODEL_TERMS = frozenset({
    "body_mass", "body_inertia", "body_com_offset", "geom_friction", "dof_armature", "dof_frictionloss",
    "actuator_kp", "actuator_kd", "gravity",
})
_STATE_AND_FORCE_TERMS = frozenset({"root_lin_vel_delta", "root_ang_vel_delta", "body_force", "body_torque"})
_QUAT_SENSORS = frozenset({"framequat", "ballquat"})
_WXYZ = np.array([3, 0, 1, 2])
_WXYZ_FROM_XYZW = np.array([1, 2, 3, 0])  # where an xyzw quaternion's components go in a wxyz row


def _gather(src: np.ndarray, cols: np.ndarray, out: np.ndarray) -> None:
    """``out[:] = src[:, cols]`` without a temporary when dtypes agree."""
    if src.dtype == out.dtype:
        np.take(src, cols, axis=1, out=out)
    else:
        out[:] = src[:, cols]


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("unisim-motrix")
    except Exception:  # noqa: BLE001
        return "0.1.0"


class MotrixBackend(SimBackend):
    """MotrixSim backend (``motrixsim`` 0.10.x); see the package README for differences from MuJoCo."""

    name = "motrix"
    version = _version()
    options_cls = MotrixOptions
    CAPABILITIES = frozenset({
        Capability.CONTACTS, Capability.SENSORS, Capability.BODY_FORCE, Capability.BODY_TORQUE, Capability.PUSH,
        Capability.SITE_JACOBIAN, Capability.HEIGHT_SCAN, Capability.TERRAIN, Capability.PRE_STEP_CONTROL,
        Capability.INIT_RANDOMIZATION, Capability.INTERVAL_RANDOMIZATION,
        Capability.RESET_RANDOMIZATION, Capability.CONTACT_FORCES, Capability.CONTACT_TORQUES,
        Capability.MOCAP, Capability.PHYSICS_SNAPSHOT, Capability.CONTACT_FILTERS,
        Capability.VIDEO_CAPTURE, Capability.PLAYBACK,
    })
    INIT_TERMS = _SUPPORTED_MODEL_TERMS
    INTERVAL_TERMS = _SUPPORTED_MODEL_TERMS | _STATE_AND_FORCE_TERMS
    RESET_TERMS = _SUPPORTED_MODEL_TERMS | _STATE_AND_FORCE_TERMS
    MAX_ABS_VALUE = float(np.finfo(np.float32).max)  # the engine's state and inputs are float32
    SNAPSHOT_TIER = "state"  # the contact solver's warm start is kept by the engine and not exposed (README)
    KIT_RULES = 4  # conformance kit rules this backend passes (unisim_conformance CHANGELOG)
    KNOWN_KIT_DEVIATIONS = {  # measured, README "Solver warm start" and "Sensors"
        "determinism::reset_reproduces_trajectory[qpos_trajectory]": "MotrixSim keeps its contact-solver warm start "
        "across state writes (not exposed), so a replay with contacts differs at float32 rounding level",
        "determinism::reset_reproduces_trajectory[final_reads]": "the same warm start: every read at the end of the "
        "replay differs at float32 rounding level",
        "reference::trajectory[sensor_probe-sensors]": "accelerometers read 0 after set_state until the next step "
        "(MotrixSim computes them inside step only)",
    }

    options: MotrixOptions

    # ------------------------------------------------------------------ construction
    def __init__(self, scene: SceneCfg, num_envs: int, sim_dt: float, **options: Any) -> None:
        super().__init__(scene, num_envs, sim_dt, **options)
        ensure_thread_pool(self.options.threads)
        from motrixsim import query as mq

        path = scene.model_file
        self._facts = read_mjcf(path)
        check_model_features(self.name, path, self._facts.uses)
        warn_ignored_options(path, self._facts.ignored)
        self._source = EngineMjcf(self.name, path)  # the file MotrixSim loads (MuJoCo's compiled values)
        M = self._load_model()
        # measured ~14 KB per env on the quadruped (nq 19, nv 18, nu 12, 13 links); refused before
        # the engine is asked (an allocation it cannot make aborts the process)
        self._check_env_memory(48 * (M.num_dof_pos + M.num_dof_vel + M.num_actuators + 13 * (len(M.links) + 1)),
                               "MotrixSim scene data and query buffers")
        # sensors: MuJoCo (document) order, dims from the engine (from MuJoCo for those computed here)
        self._sensor_decl = [s for s in self._facts.sensors if s.name]
        self._engine_sensors = [s for s in self._sensor_decl if s.kind not in DERIVED]
        self._derived = DerivedSensors(self.name, self._source.compiled(),
                                       [s for s in self._sensor_decl if s.kind in DERIVED])
        self._site_acts = SiteActuators(self.name, self._source.compiled())  # MotrixSim drops them
        self._pair_sensors: dict[tuple[int, int], int] = {}  # contact-filter sensors: (body, body) -> column
        self._generation = 0  # engine models built so far (a contact filter may rebuild it, _contacts.py)
        self._install(M, self._new_data(M))
        N, nb = self._num_envs, len(self._links) + 1
        dims: dict[str, int] = dict(self._derived.dims)
        for s in self._engine_sensors:
            with engine_call(f"compile_query(sensor {s.name!r})"):
                dims[s.name] = int(np.prod(M.compile_query({"s": mq.SensorValues([s.name])}).fields[0].shape))
        self._body_sensors: list[tuple[str, int]] = []
        if self.options.add_body_sensors:
            taken = set(dims)
            for ln in self._links:
                for suffix, d in (("pos", 3), ("quat", 4), ("linvel", 3), ("angvel", 3)):
                    n = f"{_model.link_name(ln)}_body_{suffix}"
                    if n in taken:
                        raise InvalidInputError(
                            f"add_body_sensors: derived sensor name {n!r} clashes with a model sensor")
                    self._body_sensors.append((n, d))
        self._sensor_dims_by_name = dims
        mj = check_layout(self.name, path, {"nq": M.num_dof_pos, "nv": M.num_dof_vel,
                                            "nu": M.num_actuators + len(self._site_acts),
                                            "nbody": nb, "njnt": len(self._layout.joints),
                                            "nsensordata": sum(dims.values())}, self._source.compiled())
        warn_stiff_contacts(path, mj, self.sim_dt)
        self._collidable = collidable_bodies(mj)
        dt = self.np_dtype
        self._qpos = np.zeros((N, M.num_dof_pos), dt)
        self._qvel = np.zeros((N, M.num_dof_vel), dt)
        self._xpos = np.zeros((N, nb, 3), dt)
        self._xquat = np.zeros((N, nb, 4), dt)
        self._xquat[:, 0, 0] = 1.0
        self._xlin = np.zeros((N, nb, 3), dt)
        self._xang = np.zeros((N, nb, 3), dt)
        self._q_g, self._v_g = self._layout.qpos_gather, self._layout.qvel_gather
        self._v_identity = self._layout.identity_qvel
        self._ctrl32 = np.zeros((N, M.num_actuators), np.float32)
        self._forces: dict[int, tuple[np.ndarray, np.ndarray | None]] = {}
        self._origin = np.zeros((N, 3))
        self._time = np.zeros(N)  # s, per env: MotrixSim keeps no simulation time
        self._snapshots = SnapshotMemory(N)
        self._stale_state = self._stale_body = self._stale_sens = True
        self._fk_fresh = True
        # which links move (a mass/inertia override on a link welded to the world is ignored)
        moving = np.zeros(nb, bool)
        has_joint = {r.link for r in self._layout.joints}
        for i, ln in enumerate(self._links):
            p = ln.parent.index + 1 if ln.parent is not None else 0
            moving[i + 1] = (i in has_joint) or moving[p]
        self._moving = moving
        principal = _model.principal_inertias(M, self._nominal_scene_data())
        warn_inertia(path, self._links, [p if moving[i + 1] else None for i, p in enumerate(principal)], mj)
        self._root_signs = [(r.link + 1, int(a)) for r, a in zip(self._layout.joints, self._layout.qposadr)
                            if r.type == "free"]
        self._root_signs = [(b, a + 3) for b, a in self._root_signs]

    def _new_data(self, M) -> Any:
        """The model's options set and its batched ``SceneData`` (forward kinematics run)."""
        import motrixsim

        with engine_call("options"):
            M.options.timestep = self.sim_dt
            if self.options.max_iterations is not None:
                M.options.max_iterations = self.options.max_iterations
            D = motrixsim.SceneData(M, batch=[self._num_envs])
            M.forward_kinematic(D)
        enable_contact_report(M)
        return D

    def _install(self, M, D) -> None:
        """Use the engine model ``M`` and data ``D``: links, state layout, compiled query programs."""
        from motrixsim import query as mq

        self._M, self._D = M, D
        self._nominal_data = None
        self._links = list(M.links)
        self._layout = _model.build_layout(M)
        with engine_call("compile_query"):
            self._q_state = M.compile_query({"q": mq.DofPosition(), "v": mq.DofVelocity()}).allocate(D)
            self._q_state_rows = self._q_state.buffer  # (N, nq + nv) float32, rewritten by every execute
            self._q_body = M.compile_query({"p": mq.LinkPosition(), "r": mq.LinkRotation(),
                                            "lv": mq.LinkLinearVelocity(), "av": mq.LinkAngularVelocity()}).allocate(D)
            self._q_sens = (M.compile_query({"s": mq.SensorValues([s.name for s in self._engine_sensors])}).allocate(D)
                            if self._engine_sensors else None)
            names = [pair_sensor_name(i) for i in range(len(self._pair_sensors))]
            self._q_pairs = M.compile_query({"s": mq.SensorValues(names)}).allocate(D) if names else None
        self._generation += 1

    def _nominal_scene_data(self) -> Any:
        """One unbatched ``SceneData`` of the current model, made once, whose overrides stay the model's
        nominal values (model tables read from it). MotrixSim never frees a ``SceneData`` (docs/motrix.md,
        "Memory"): a backend makes this one and its batched one, no more."""
        import motrixsim

        if self._nominal_data is None:
            with engine_call("SceneData"):
                self._nominal_data = motrixsim.SceneData(self._M)
        return self._nominal_data

    def _load_model(self, contact_pairs: tuple[tuple[str, str], ...] = ()) -> Any:
        """``motrixsim.load_model`` of the scene as :class:`EngineMjcf` rewrites it (with contact
        sensors for ``contact_pairs``); a file its parser rejects is refused or an ``EngineError``."""
        import motrixsim

        path = self.scene.model_file
        with self._source.file(contact_pairs) as file:
            try:
                with engine_call(f"load_model({path!r})"):
                    return motrixsim.load_model(file)
            except EngineError as exc:
                raise load_error(self.name, path, exc, file) from exc.__cause__

    @property
    def model(self) -> Any:
        """The ``motrixsim.SceneModel``."""
        return self._M

    @property
    def data(self) -> Any:
        """The batched ``motrixsim.SceneData``."""
        return self._D

    def _load_model_info(self) -> ModelInfo:
        with engine_call("model introspection"):
            return _model.build_model_info(self._M, self._layout, self._facts, self._sensor_dims_by_name,
                                           self._body_sensors, self._site_acts, self._nominal_scene_data())

    def _close(self) -> None:
        self._forces.clear()

    # ------------------------------------------------------------------ refresh
    def _ensure_fk(self) -> None:
        if not self._fk_fresh:
            with engine_call("forward_kinematic"):
                self._M.forward_kinematic(self._D)
            self._fk_fresh = True

    def _refresh_state(self) -> None:
        with engine_call("query(dof state)"):
            self._q_state.execute(self._D)
        _gather(self._q_state["q"], self._q_g, self._qpos)
        if self._v_identity:
            np.copyto(self._qvel, self._q_state["v"])
        else:
            _gather(self._q_state["v"], self._v_g, self._qvel)
        self._stale_state = False

    def _refresh_bodies(self) -> None:
        self._ensure_fk()
        p = self._q_body
        with engine_call("query(link state)"):
            p.execute(self._D)
        self._xpos[:, 1:] = p["p"]
        self._xquat[:, 1:] = p["r"][..., _WXYZ]
        self._xlin[:, 1:] = p["lv"]
        self._xang[:, 1:] = p["av"]
        if self._root_signs:  # q and -q are one rotation: report a free body's sign as in qpos
            if self._stale_state:
                self._refresh_state()
            for body, col in self._root_signs:
                flip = np.einsum("ij,ij->i", self._xquat[:, body], self._qpos[:, col:col + 4]) < 0
                self._xquat[flip, body] *= -1
        self._stale_body = False

    def _mark_stale(self) -> None:
        self._stale_state = self._stale_body = self._stale_sens = True

    def _diverged_mask(self) -> np.ndarray | None:
        # one test over the query's packed (N, nq + nv) [dof_pos, dof_vel] rows, which the getters
        # then gather from
        if self._stale_state:
            self._refresh_state()
        return diverged_rows(self.MAX_ABS_VALUE, self._q_state_rows)

    # ------------------------------------------------------------------ state primitives
    def get_qpos(self) -> np.ndarray:
        if self._stale_state:
            self._refresh_state()
        return self._qpos.copy()

    def get_qvel(self) -> np.ndarray:
        if self._stale_state:
            self._refresh_state()
        return self._qvel.copy()

    def _body_pos_w(self, body_ids: np.ndarray) -> np.ndarray:
        if self._stale_body:
            self._refresh_bodies()
        return np.take(self._xpos, body_ids, axis=1)

    def _body_quat_w(self, body_ids: np.ndarray) -> np.ndarray:
        if self._stale_body:
            self._refresh_bodies()
        return np.take(self._xquat, body_ids, axis=1)

    def _body_lin_vel_w(self, body_ids: np.ndarray) -> np.ndarray:
        if self._stale_body:
            self._refresh_bodies()
        return np.take(self._xlin, body_ids, axis=1)

    def _body_ang_vel_w(self, body_ids: np.ndarray) -> np.ndarray:
        if self._stale_body:
            self._refresh_bodies()
        return np.take(self._xang, body_ids, axis=1)

    def _step(self, ctrl: np.ndarray, nsteps: int) -> None:
        M, D = self._M, self._D
        if len(self._site_acts):  # the engine's actuators; the site ones are wrenches
            self._step_site_actuators(ctrl, nsteps)
            return
        try:  # engine_call inlined: the hot path (a contextmanager costs ~2 µs at N=1)
            if self._ctrl32.shape[1]:
                if ctrl.dtype != np.float32:  # validated: C-contiguous, (N, nu)
                    np.copyto(self._ctrl32, ctrl, casting="same_kind")
                    ctrl = self._ctrl32
                D.actuator_ctrls = ctrl
            if self._forces:
                # MotrixSim clears external forces after every step: re-apply before each substep.
                for _ in range(nsteps):
                    self._apply_staged_forces(D)
                    M.step(D)
            elif nsteps == 1:
                M.step(D)
            else:
                M.step_n(D, nsteps)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - PanicException derives from BaseException
            err = engine_error("step", exc)
            if err is exc:
                raise
            raise err from exc
        self._fk_fresh = False
        self._mark_stale()
        for _ in range(nsteps):  # per substep, as MuJoCo accumulates it: one step of n == n steps of 1
            self._time += self.sim_dt

    def _apply_staged_forces(self, D) -> None:
        """Stage the wrenches of ``apply_body_force`` for the next substep (MotrixSim clears external
        forces after every step): forces at the body origins, torques, world frame."""
        for b, (f, t) in self._forces.items():
            link = self._links[b - 1]
            link.add_external_force(D, f, point=self._origin, local=False)
            if t is not None:
                link.add_external_torque(D, t, local=False)

    def _step_site_actuators(self, ctrl: np.ndarray, nsteps: int) -> None:
        """``_step`` for a model with site-transmission actuators (:mod:`._site_actuators`): before every
        substep, their wrenches from the site poses of that substep, with the staged ones."""
        M, D = self._M, self._D
        with engine_call("step"):
            if self._ctrl32.shape[1]:
                self._ctrl32[:] = ctrl[:, self._site_acts.engine_columns]
                D.actuator_ctrls = self._ctrl32
            for _ in range(nsteps):
                if self._stale_body:
                    self._refresh_bodies()
                for b, force, point, torque in self._site_acts.wrenches(ctrl, self._xquat):
                    link = self._links[b - 1]
                    link.add_external_force(D, force, point=point, local=False)
                    link.add_external_torque(D, torque, local=False)
                self._apply_staged_forces(D)
                M.step(D)
                self._fk_fresh = False
                self._mark_stale()
                self._time += self.sim_dt

    def _sub(self, env_ids: np.ndarray):
        """``(sub-data, row order)``: the worlds ``env_ids`` (ascending) and the permutation that
        puts caller rows (in ``env_ids`` order) into sub-data order."""
        order = np.argsort(env_ids, kind="stable")
        if len(env_ids) == self._num_envs:
            return self._D, order
        mask = np.zeros(self._num_envs, bool)
        mask[env_ids] = True
        return self._D.get(mask), order

    def _set_state(self, env_ids: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> None:
        lay = self._layout
        sub, order = self._sub(env_ids)
        q = np.ascontiguousarray(qpos[order][:, lay.qpos_scatter], np.float32)
        v = np.ascontiguousarray(qvel[order][:, lay.qvel_scatter], np.float32)
        with engine_call("set_state"):
            if q.shape[1]:  # a jointless model has no dof to write (the engine asserts on empty rows)
                sub.set_dof_pos(q, self._M)
            if v.shape[1]:
                sub.set_dof_vel(v)
            self._M.forward_kinematic(sub)
        self._fk_fresh = self._fk_fresh or len(env_ids) == self._num_envs
        self._mark_stale()

    # ------------------------------------------------------------------ sensors
    def _refresh_sensors(self) -> None:
        self._ensure_fk()
        info = self.model_info
        if not hasattr(self, "_sens"):
            self._sens = np.zeros((self._num_envs, int(info.sensor_dims.sum())), self.np_dtype)
            start, adr = {}, 0
            for s in self._sensor_decl:
                start[s.name] = adr
                adr += self._sensor_dims_by_name[s.name]
            cols = []  # the full-row column of each engine query column (quaternions turned wxyz)
            for s in self._engine_sensors:
                d, a = self._sensor_dims_by_name[s.name], start[s.name]
                cols += list(a + _WXYZ_FROM_XYZW if s.kind in _QUAT_SENSORS and d == 4 else range(a, a + d))
            self._sens_cols = np.array(cols, np.int64)
            self._derived_start = {name: start[name] for name in self._derived.dims}
        n_model = sum(self._sensor_dims_by_name[s.name] for s in self._sensor_decl)
        if self._q_sens is not None:
            with engine_call("query(sensors)"):
                self._q_sens.execute(self._D)
            self._sens[:, self._sens_cols] = self._q_sens["s"]
        if self._derived.rows:
            if self._stale_state:
                self._refresh_state()
            if self._stale_body:
                self._refresh_bodies()
            for name, value in self._derived.values(self._qpos, self._qvel, self._xquat).items():
                a = self._derived_start[name]
                self._sens[:, a:a + value.shape[1]] = value
        if self._body_sensors:
            if self._stale_body:
                self._refresh_bodies()
            nb = len(self._links)
            blk = np.concatenate([self._xpos[:, 1:], self._xquat[:, 1:], self._xlin[:, 1:], self._xang[:, 1:]], axis=2)
            self._sens[:, n_model:] = blk.reshape(self._num_envs, nb * 13)
        self._stale_sens = False

    def _read_sensor(self, index: int) -> np.ndarray:
        if self._stale_sens:
            self._refresh_sensors()
        a = int(self.model_info.sensor_adr[index])
        return self._sens[:, a:a + int(self._sensor_dims[index])].copy()

    def _read_sensors(self, indices: np.ndarray) -> np.ndarray:
        if self._stale_sens:
            self._refresh_sensors()
        adr, dims = self.model_info.sensor_adr, self._sensor_dims
        cols = np.concatenate([np.arange(adr[i], adr[i] + dims[i]) for i in indices])
        return np.take(self._sens, cols, axis=1)

    # ------------------------------------------------------------------ forces
    def _bind_contact_forces(self, body_ids: np.ndarray, against_ids: np.ndarray | None) -> MotrixContactFill:
        if against_ids is not None and self._contact_fill_width == 6:
            raise self._unsupported(Capability.CONTACT_TORQUES, (
                "with against=: MotrixSim's contact sensors give a body pair's net force but not its moment "
                "(one point per pair, the unweighted mean of the contact points, and no torque; see "
                "unisim_motrix._contacts); bind the torques without against="))
        return MotrixContactFill(self, body_ids, against_ids)

    def _contact_pair_columns(self, pairs: list[tuple[int, int]]) -> dict[tuple[int, int], int]:
        """The contact-filter sensor column of each body pair ``(a, b)``, ``a < b``; pairs without a
        sensor yet rebuild the engine model with them (:mod:`._rebuild`), and every env reads as
        unstepped until the next step (as after ``set_physics_state``)."""
        new = [p for p in pairs if p not in self._pair_sensors]
        if new:
            for p in new:
                self._pair_sensors[p] = len(self._pair_sensors)
            try:
                rebuild(self, list(self._pair_sensors))
            except BaseException:
                for p in new:
                    del self._pair_sensors[p]
                raise
            self._fk_fresh = True
            self._mark_stale()
            self._contacts_reset(None)
        return {p: self._pair_sensors[p] for p in pairs}

    def _contact_pair_forces(self, columns: np.ndarray) -> np.ndarray:
        """``(N, len(columns), 3)`` float64 forces of pair sensors, as the last step left them
        (:func:`~unisim_motrix._contacts.pair_forces`)."""
        _, width = CONTACT_DATA
        if not len(columns):
            return np.zeros((self._num_envs, 0, 3))
        with engine_call("query(contact sensors)"):
            self._q_pairs.execute(self._D)
        readings = self._q_pairs["s"].reshape(self._num_envs, -1, width)[:, columns]
        return pair_forces(readings.reshape(self._num_envs, -1))

    def _apply_body_force(self, body_ids: np.ndarray, force: np.ndarray, torque: np.ndarray | None) -> None:
        if np.any(body_ids == 0):
            raise InvalidInputError("body_ids: body 0 is the world; it cannot take an external force")
        for col, b in enumerate(body_ids):
            f = np.ascontiguousarray(force[:, col], np.float64)
            t = None if torque is None else np.ascontiguousarray(torque[:, col], np.float64)
            self._forces[int(b)] = (f, t)

    def _clear_body_forces(self) -> None:
        self._forces.clear()

    # ------------------------------------------------------------------ kinematics, terrain
    def _site_jacobian(self, site_id: int, dof_indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self._ensure_fk()
        site = self._M.sites[site_id]
        with engine_call("Site.get_jacobian"):
            J = np.asarray(site.get_jacobian(self._D), np.float64).reshape(self._num_envs, 6, -1)
            cols = self._layout.qvel_scatter[np.asarray(site.dof_vel_indices, np.int64)]
        full = np.zeros((self._num_envs, 6, self.nv))
        full[:, :, cols] = J  # MotrixSim: rows 0-2 angular, 3-5 linear; columns leaf-to-root
        jacp = np.ascontiguousarray(full[:, 3:6][:, :, dof_indices], self.np_dtype)
        jacr = np.ascontiguousarray(full[:, 0:3][:, :, dof_indices], self.np_dtype)
        return jacp, jacr

    def _moved_kinematically(self) -> None:
        """After a mocap pose write: bodies, sensors and sites below it need forward kinematics."""
        self._fk_fresh = False
        self._stale_body = self._stale_sens = True

    def _bind_mocap_pose(self, body_id: int) -> MotrixMocapPoseBinding:
        return MotrixMocapPoseBinding(self, self.model_info.body_names[body_id], body_id)

    def _create_hfield_scanner(self, hfield_geom_id, offsets, frame_body_id, alignment, output):
        return MotrixHeightScanner(self, hfield_geom_id, offsets, frame_body_id, alignment, output)

    def _terrain_spawn_data(self) -> BackendTerrainSpawnData:
        return terrain_spawn_data(self)

    # ------------------------------------------------------------------ snapshots
    def _mocap_bodies(self) -> np.ndarray:
        info = self.model_info
        return np.array([info.body_names.index(n) for n in info.mocap_body_names], np.int64)

    def _reads(self) -> tuple[np.ndarray, ...]:
        """Every cached read of the current state (refreshed): the tables the getters serve."""
        if self._stale_state:
            self._refresh_state()
        if self._stale_body:
            self._refresh_bodies()
        if self._stale_sens:
            self._refresh_sensors()
        return self._qpos, self._qvel, self._xpos, self._xquat, self._xlin, self._xang, self._sens

    def _get_physics_state(self) -> np.ndarray:
        """Rows ``[time, qpos, qvel, mocap_pos, mocap_quat]`` (float64 copies of the float32 engine
        state). Each row's reads (bodies, sensors: an accelerometer is only computed by a step) are
        remembered, so restoring a row taken here reads back bit for bit (``SNAPSHOT_TIER`` "state")."""
        reads = self._reads()
        mocap = self._mocap_bodies()
        rows = np.concatenate([self._time[:, None], reads[0], reads[1],
                               reads[2][:, mocap].reshape(self._num_envs, -1),
                               reads[3][:, mocap].reshape(self._num_envs, -1)], axis=1, dtype=np.float64)
        self._snapshots.remember(rows, (tuple(t[i].copy() for t in reads) for i in range(self._num_envs)))
        return rows

    def _set_physics_state(self, state: np.ndarray) -> None:
        nq, nv, n = self.nq, self.nv, self._num_envs
        mocap = self._mocap_bodies()
        ids = np.arange(n)
        self._set_state(ids, state[:, 1:1 + nq], state[:, 1 + nq:1 + nq + nv])
        adr = 1 + nq + nv
        for k, b in enumerate(mocap):
            write_mocap_poses(self, int(b), ids, state[:, adr + 3 * k:adr + 3 * k + 3],
                              state[:, adr + 3 * len(mocap) + 4 * k:adr + 3 * len(mocap) + 4 * k + 4])
        self._time = state[:, 0].copy()
        known = [(i, self._snapshots.recall(state[i])) for i in range(n)]
        known = [(i, extra) for i, extra in known if extra is not None]
        if known:
            tables = self._reads()  # rows this backend did not take keep what the engine computes
            for i, extra in known:
                for table, row in zip(tables, extra):
                    table[i] = row

    # ------------------------------------------------------------------ model randomization
    def _link(self, b: int, term: str):
        if b == 0 or not self._moving[b]:
            raise InvalidInputError(f"{term}.target_ids: body {self.model_info.body_names[b]!r} is welded to the "
                                    "world; MotrixSim ignores mass/inertia/COM overrides there")
        return self._links[b - 1]

    def _dof_joint(self, d: int, term: str):
        for r, vadr in zip(self._layout.joints, self._layout.dofadr):
            if r.type in ("hinge", "slide") and vadr == d:
                return r.obj
        raise InvalidInputError(f"{term}.target_ids: dof {d} is not a hinge/slide dof; MotrixSim overrides "
                                f"{term.split('_', 1)[1]} per single-DoF joint only")

    def _engine_actuator(self, a: int):
        """The engine's actuator behind contract actuator ``a`` (``None``: a site actuator of the backend)."""
        columns = self._site_acts.engine_columns
        if not len(self._site_acts):
            return self._M.actuators[a]
        hit = np.flatnonzero(columns == a)
        return self._M.actuators[int(hit[0])] if len(hit) else None

    def _position_actuator(self, a: int, term: str):
        act = self._engine_actuator(a)
        if act is None:
            raise InvalidInputError(f"{term}.target_ids: actuator {self.model_info.actuator_names[a]!r} has a site "
                                    "transmission (a thruster); it has no kp/kd")
        if type(act).__name__ != "PositionActuator":
            raise InvalidInputError(f"{term}.target_ids: actuator {act.name!r} is a {type(act).__name__}; "
                                    "MotrixSim overrides kp/kd of position actuators only")
        return act

    def _inertia_axes(self, link) -> np.ndarray:
        """xyzw rotation of the nominal principal axes in the link frame."""

        if not hasattr(self, "_axes_cache"):
            self._axes_cache: dict[int, np.ndarray] = {}
        if link.index not in self._axes_cache:
            I6 = np.asarray(link.get_inertia_override(self._nominal_scene_data()), np.float64).reshape(6)
            full = np.array([[I6[0], I6[3], I6[4]], [I6[3], I6[1], I6[5]], [I6[4], I6[5], I6[2]]])
            if np.allclose(I6[3:], 0.0):
                R = np.eye(3)
            else:
                w, R = np.linalg.eigh(full)
                R = R[:, np.argsort(w)[::-1]]
                if np.linalg.det(R) < 0:
                    R[:, 2] *= -1
            self._axes_cache[link.index] = Q.quat_wxyz_to_xyzw(Q.quat_from_matrix(R))
        return self._axes_cache[link.index]

    def _model_targets(self, term: str, target_ids: np.ndarray | None) -> list:
        """The engine objects a term writes; raises for targets MotrixSim cannot override."""
        M = self._M
        if term in ("body_mass", "body_inertia", "body_com_offset"):
            return [self._link(int(b), term) for b in target_ids]
        if term == "geom_friction":
            return [M.geoms[int(g)] for g in target_ids]
        if term in ("dof_armature", "dof_frictionloss"):
            return [self._dof_joint(int(d), term) for d in target_ids]
        if term in ("actuator_kp", "actuator_kd"):
            return [self._position_actuator(int(a), term) for a in target_ids]
        if term == "gravity":
            return []
        raise InvalidInputError(f"{term}: not supported by MotrixSim")  # pragma: no cover - undeclared

    def _check_model_values(self, term: str, env_ids: np.ndarray, target_ids: np.ndarray | None,
                            values: np.ndarray) -> None:
        self._model_targets(term, target_ids)
        if term == "body_inertia":
            s = np.sort(values, axis=-1)
            if np.any(s[..., 0] + s[..., 1] < s[..., 2] * (1 - 1e-9)):
                raise InvalidInputError("body_inertia: principal moments must satisfy the triangle inequality "
                                        "(I1 + I2 >= I3); MotrixSim silently ignores such values")

    def _write_model_field(self, term: str, env_ids: np.ndarray, target_ids: np.ndarray | None,
                           values: np.ndarray) -> None:
        sub, order = self._sub(env_ids)
        v = np.ascontiguousarray(values[order], np.float64)
        M = self._M
        objs = self._model_targets(term, target_ids)  # validated by _check_model_values before any write
        with engine_call(f"randomization({term})"):
            if term == "gravity":
                M.set_gravity_override(sub, v)
                return
            for col, obj in enumerate(objs):
                x = np.ascontiguousarray(v[:, col])
                if term == "body_mass":
                    obj.set_mass_override(sub, x)
                elif term == "body_inertia":
                    axes = np.tile(self._inertia_axes(obj), (len(x), 1))
                    obj.set_principal_inertia_override(sub, x, axes)
                elif term == "body_com_offset":
                    obj.set_center_of_mass_override(sub, x)
                elif term == "geom_friction":
                    obj.set_friction_override(sub, x)
                elif term == "dof_armature":
                    obj.set_armature_override(sub, x)
                elif term == "dof_frictionloss":
                    obj.set_frictionloss_override(sub, x)
                elif term == "actuator_kp":
                    obj.set_kp_override(sub, x)
                elif term == "actuator_kd":
                    obj.set_damping_override(sub, x)

    def _read_model_field(self, term: str) -> np.ndarray:
        info, D, N = self.model_info, self._D, self._num_envs

        def col(getter, n, width=()):
            return np.asarray(getter(D), np.float64).reshape((N,) + width)

        with engine_call(f"read model field {term}"):
            if term == "gravity":
                return col(self._M.get_gravity_override, 0, (3,)).astype(self.np_dtype)
            if term in ("body_mass", "body_inertia", "body_com_offset"):
                nom = {"body_mass": info.body_mass, "body_inertia": info.body_inertia,
                       "body_com_offset": info.body_ipos}[term]
                out = np.broadcast_to(nom, (N,) + nom.shape).copy()
                for b in range(1, len(info.body_names)):
                    if not self._moving[b]:
                        continue
                    ln = self._links[b - 1]
                    if term == "body_mass":
                        out[:, b] = col(ln.get_mass_override, b)
                    elif term == "body_com_offset":
                        out[:, b] = col(ln.get_center_of_mass_override, b, (3,))
                    else:
                        I6 = col(ln.get_inertia_override, b, (6,))
                        full = np.stack([I6[:, [0, 3, 4]], I6[:, [3, 1, 5]], I6[:, [4, 5, 2]]], axis=1)
                        R = Q.matrix_from_quat(Q.quat_xyzw_to_wxyz(self._inertia_axes(ln)))
                        out[:, b] = np.diagonal(R.T @ full @ R, axis1=1, axis2=2)
                return out.astype(self.np_dtype)
            if term == "geom_friction":
                return np.stack([col(g.get_friction_override, 0, (3,)) for g in self._M.geoms], axis=1
                                ).astype(self.np_dtype)
            if term in ("dof_armature", "dof_frictionloss"):
                out = np.broadcast_to(getattr(info, term), (N, self.nv)).copy()
                for r, vadr in zip(self._layout.joints, self._layout.dofadr):
                    if r.type in ("hinge", "slide"):
                        g = r.obj.get_armature_override if term == "dof_armature" else r.obj.get_frictionloss_override
                        out[:, vadr] = col(g, 0)
                return out.astype(self.np_dtype)
            if term in ("actuator_kp", "actuator_kd"):
                out = np.broadcast_to(getattr(info, term), (N, self.num_actuators)).copy()
                for a in range(self.num_actuators):
                    act = self._engine_actuator(a)
                    if type(act).__name__ == "PositionActuator":
                        out[:, a] = col(act.get_kp_override if term == "actuator_kp" else act.get_kd_override, 0)
                return out.astype(self.np_dtype)
        from unisim_core.contract.errors import UnsupportedCapabilityError

        raise UnsupportedCapabilityError(self._label, Capability.INIT_RANDOMIZATION,
                                         f"model term {term!r} has no per-env override in MotrixSim")
