"""Worker-side contact sensing: net forces (``contact_forces``) on Isaac Lab's ``ContactSensor``, forces
against chosen bodies (``contact_filters``) and their moments (``contact_torques``) on PhysX's rigid
contact views.

:class:`ContactMapping`: one sensor covers every robot body (the rigid bodies
:func:`~unisim_isaacsim._usd_helpers.apply_contact_report` gave ``PhysxContactReportAPI`` on env 0 before
cloning): ``ContactSensorCfg(prim_path=<bodies' parent in every env>/.*, update_period=0,
history_length=0, track_air_time=False)``, built before ``sim.reset()`` (a sensor initializes on PLAY)
and updated after every substep. An unfiltered binding without torques selects columns of
``data.net_forces_w`` ``(num_envs, B, 3)``: world frame, N, the force on each body summed over its
contacts, rows in the articulation's env order (both views match ``env_.*`` alike: to be confirmed on a
GPU).

:class:`PairContacts`: Isaac Lab's sensor filters many-to-one only (one sensor body per env, its
filters fixed before PLAY), while the contract binds any bodies against any bodies at run time. A
binding with ``against`` or with torques gets, per bound body, one rigid contact view of the worker's
simulation view (``omni.physics.tensors``, ``create_rigid_contact_view(sensor paths, filter_patterns=
[per sensor: that env's counterpart paths], max_contact_data_count)``): the sensors are the body in
each engine row's env, the filters the bodies of ``against`` in the same env (the world, 0, is every
static collider of the env: the MJCF world geoms and the height fields), or every other body and
static collider without ``against``. The force is the row of ``get_contact_force_matrix`` summed over
its filters; the moment about the contract's origin (each env's) is ``sum (p - o) x f`` over the
contact points of ``get_contact_data`` (normal force magnitudes, points, normals, per-pair counts and
start indices), each pair's normals oriented so that their sum is the pair's force on the sensor (the
force matrix's row). Contact state and air time are the core's (:mod:`unisim_core.contract.contacts`).

PhysX's contact forces are their normal part (Isaac Lab: "PhysX ... cannot compute the aggregate
friction component"; the views' friction data is not read), so a body held by static friction reads
no tangential force and no moment of it, as on SAPIEN.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["ContactMapping", "PairContacts", "static_collider_paths"]


class ContactMapping:
    """``ContactSensor`` over the bodies under one parent prim; ``bind`` / ``read`` serve the worker ops."""

    @classmethod
    def create(cls, body_paths: list[str], env_ns: str) -> ContactMapping | None:
        """The mapping, or ``None`` (``contact_forces`` not declared) unless the bodies share one
        parent prim below env 0 (one sensor expression ``<parent>/.*`` reaches them all)."""
        parents = {p.rsplit("/", 1)[0] for p in body_paths}
        env0 = f"{env_ns}/env_0"
        if len(parents) != 1 or not next(iter(parents)).startswith(env0 + "/"):
            return None
        return cls(f"{env_ns}/env_.*{next(iter(parents))[len(env0):]}/.*")

    def __init__(self, expr: str) -> None:
        from isaaclab.sensors import ContactSensor, ContactSensorCfg

        self.sensor = ContactSensor(ContactSensorCfg(prim_path=expr, update_period=0.0, history_length=0,
                                                     track_air_time=False))
        self.columns: dict[int, int] = {}
        self._keys: list[Any] = []

    def resolve(self, body_names: list[str]) -> None:
        """After ``sim.reset()``: the sensor column of each MJCF body id it reports."""
        from ._layout import mjcf_usd_name

        index = {name: i for i, name in enumerate(self.sensor.body_names)}
        self.columns = {b: index[mjcf_usd_name(n)] for b, n in enumerate(body_names) if mjcf_usd_name(n) in index}

    def update(self, dt: float) -> None:
        self.sensor.update(dt)

    def covers(self, body_ids: list[int]) -> bool:
        """Whether every body is a column of the sensor (a robot body)."""
        return all(b in self.columns for b in body_ids)

    def bind(self, body_ids: list[int]) -> int:
        """A key for :meth:`read` (every body :meth:`covers`)."""
        self._keys.append([self.columns[b] for b in body_ids])
        return len(self._keys) - 1

    def read(self, key: int, to_numpy) -> Any:
        """``(num_envs, n, 3)`` float64, N, world frame, engine rows (``to_numpy``: a sensor tensor as numpy)."""
        return to_numpy(self.sensor.data.net_forces_w)[:, self._keys[key]]


def static_collider_paths(stage: Any, root: str) -> list[str]:
    """The colliders under ``root`` that no rigid body carries (PhysX static actors: MuJoCo's world geoms),
    sorted; a collider under an instanceable prim fails closed (its instance proxy is no PhysX path)."""
    from pxr import Usd, UsdPhysics

    out, proxies = [], []
    for prim in Usd.PrimRange(stage.GetPrimAtPath(root), Usd.TraverseInstanceProxies()):
        if not prim.HasAPI(UsdPhysics.CollisionAPI):
            continue
        up = prim
        while up and not up.HasAPI(UsdPhysics.RigidBodyAPI):
            up = up.GetParent()
        if not up:
            (proxies if prim.IsInstanceProxy() else out).append(str(prim.GetPath()))
    if proxies:
        raise ValueError(f"static colliders {proxies} are instance proxies; make them authorable first")
    return sorted(out)


class PairContacts:
    """Per-pair contact forces and moments of the bodies of a binding (see the module docstring)."""

    #: Contact points kept per (sensor, filter) pair by ``get_contact_data`` (a binding with torques);
    #: a full buffer fails closed rather than drop points.
    POINTS_PER_PAIR = 32

    def __init__(self, session: Any, body_paths: dict[int, str], world_paths: list[str]) -> None:
        """``body_paths``: ``{MuJoCo body id: rigid body prim path in env 0}`` (links and mocap bodies);
        ``world_paths``: env 0's static colliders."""
        self._s = session
        self._bodies, self._world = dict(body_paths), list(world_paths)
        self._keys: list[tuple[list, int]] = []

    def _at(self, path: str, r: int) -> str:
        """``path`` (in env 0) in the env of engine row ``r``."""
        s = self._s
        env0 = s.row_env_paths[0].rsplit("/", 1)[0] + "/env_0"
        return s.row_env_paths[r] + path[len(env0):]

    def _counterparts(self, b: int, against_ids: list[int] | None) -> list[str]:
        ids = sorted(self._bodies) if against_ids is None else against_ids
        out = [] if against_ids is not None and 0 not in against_ids else list(self._world)
        return out + [self._bodies[x] for x in ids if x not in (0, b)]

    def bind(self, body_ids: list[int], against_ids: list[int] | None, width: int, names: list[str]) -> int:
        """A key for :meth:`read`: one rigid contact view per body (``width`` 6: with contact data)."""
        from unisim_core.contract.errors import UnsupportedCapabilityError

        missing = [names[b] for b in list(body_ids) + list(against_ids or []) if b and b not in self._bodies]
        if missing:
            raise UnsupportedCapabilityError("isaacsim", "contact_forces", f"bodies {missing} are not PhysX rigid "
                                             f"bodies of the scene")
        s, views = self._s, []
        for b in body_ids:
            filters = self._counterparts(int(b), against_ids)
            if not filters:
                views.append(None)
                continue
            sensors = [self._at(self._bodies[int(b)], r) for r in range(s.n)]
            cap = s.n * len(filters) * self.POINTS_PER_PAIR if width == 6 else 0
            view = s.physx_view.create_rigid_contact_view(
                sensors, filter_patterns=[[self._at(f, r) for f in filters] for r in range(s.n)],
                max_contact_data_count=cap)
            if list(view.sensor_paths) != sensors or view.filter_count != len(filters):
                raise RuntimeError(f"the PhysX rigid contact view of body {names[b]!r} has sensors "
                                   f"{list(view.sensor_paths)} and {view.filter_count} filters; expected {sensors} "
                                   f"and {len(filters)}")
            views.append((view, len(filters), cap))
        self._keys.append((views, width))
        return len(self._keys) - 1

    def read(self, key: int) -> np.ndarray:
        """``(num_envs, n, width)`` float64, engine rows: forces (N, world) and, with width 6, their moments
        about each env's origin (N m, world)."""
        s = self._s
        views, width = self._keys[key]
        out = np.zeros((s.n, len(views), width))
        for i, entry in enumerate(views):
            if entry is None:
                continue
            view, F, cap = entry
            matrix = np.asarray(s.torch_numpy(view.get_contact_force_matrix(dt=s.dt)), np.float64).reshape(s.n, F, 3)
            out[:, i, :3] = matrix.sum(axis=1)
            if width == 6:
                out[:, i, 3:] = self._moments(view, matrix, cap)
        return out

    def _moments(self, view: Any, matrix: np.ndarray, cap: int) -> np.ndarray:
        """``(n, 3)`` moment of the contact points' normal forces about each env's origin."""
        from unisim_core.contract.errors import EngineError

        s = self._s
        forces, points, normals, _, counts, starts = (np.asarray(s.torch_numpy(x)) for x in
                                                      view.get_contact_data(dt=s.dt))
        counts, starts = counts.reshape(-1).astype(np.int64), starts.reshape(-1).astype(np.int64)
        total = int(counts.sum())
        if total >= cap:
            raise EngineError(f"the PhysX contact data buffer is full ({total} points, {self.POINTS_PER_PAIR} per body "
                              f"pair): contact moments would miss points")
        out = np.zeros((s.n, 3))
        if total == 0:
            return out
        pair = np.repeat(np.arange(counts.size), counts)
        first = np.repeat(np.cumsum(counts) - counts, counts)
        idx = starts[pair] + np.arange(total) - first
        f = np.asarray(forces, np.float64).reshape(-1, 1)[idx] * np.asarray(normals, np.float64).reshape(-1, 3)[idx]
        summed = np.zeros((counts.size, 3))
        np.add.at(summed, pair, f)
        sign = np.where(np.einsum("ij,ij->i", summed, matrix.reshape(-1, 3)) < 0.0, -1.0, 1.0)
        env = pair // matrix.shape[1]
        p = np.asarray(points, np.float64).reshape(-1, 3)[idx] - s.row_origins[env]
        np.add.at(out, env, np.cross(p, f * sign[pair, None]))
        return out
