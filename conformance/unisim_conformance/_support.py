"""Shared machinery of the checks: backend construction, capability selection, state snapshots."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

from unisim_core import CONTRACT_VERSION, Capability, UnsupportedCapabilityError
from unisim_core.contract.capabilities import parse_version, version_in_range

from . import _xfail, scene_cfg, scene_dt
from ._props import READS
from ._rules import declared_rules

PROBE_SCENES = ("free_body", "pendulum", "quadruped")


def refused_feature(exc: UnsupportedCapabilityError) -> str:
    """The scene feature (or capability) a constructor's ``UnsupportedCapabilityError`` names."""
    return str(getattr(exc.capability, "value", exc.capability))


class Kit:
    """What a check sees: ``make()`` builds backends (closed after the test), ``caps`` lists
    the declared capabilities, ``label`` names the backend in messages."""

    def __init__(self, request, state) -> None:
        self._request = request
        self._state = state
        self._open: list[Any] = []
        self._factory = state.factory
        if self._factory is None:
            try:
                self._factory = request.getfixturevalue("unisim_backend_factory")
            except pytest.FixtureLookupError:
                pytest.fail("unisim-conformance: no backend: pass --unisim-backend=NAME or define a "
                            "'unisim_backend_factory' fixture in a conftest.py", pytrace=False)
            if not callable(self._factory):
                pytest.fail(f"unisim-conformance: fixture 'unisim_backend_factory' returned "
                            f"{type(self._factory).__name__}, expected a callable factory(scene, num_envs, sim_dt)",
                            pytrace=False)
        self._probe()

    # -- probing -----------------------------------------------------------------------------
    def _probe(self) -> None:
        cache = self._state.cache
        if "capabilities" in cache:
            return
        errors = []
        for name in PROBE_SCENES:
            try:
                backend = self._factory(scene_cfg(name), 1, scene_dt(name))
            except UnsupportedCapabilityError as exc:
                errors.append(f"{name}: {exc}")
                continue
            try:
                cache["capabilities"] = frozenset(backend.capabilities)
                cache["np_dtype"] = np.dtype(backend.np_dtype).type
                cache["precision"] = measured_precision(backend)
                cache["label"] = backend.name or type(backend).__name__
                cache["cls"] = type(backend)
                # read from the instance: a wrapper (worker, Ray) forwards its inner backend's
                cache["unsupported"] = dict(getattr(backend, "UNSUPPORTED_SCENE_FEATURES", {}))
                cache["known_deviations"] = dict(getattr(backend, "KNOWN_KIT_DEVIATIONS", {}))
                cache["kit_rules"] = declared_rules(backend)
            finally:
                backend.close()
            return
        pytest.fail("unisim-conformance: the backend loads none of the probe scenes "
                    f"{PROBE_SCENES}: " + "; ".join(errors), pytrace=False)

    @property
    def caps(self) -> frozenset:
        return self._state.cache["capabilities"]

    @property
    def label(self) -> str:
        return self._state.cache["label"]

    @property
    def dtype(self):
        return self._state.cache["np_dtype"]

    @property
    def precision(self):
        """The precision the engine keeps values in (``np.float32`` or ``np.float64``), measured at
        the probe: tolerances in ``eps`` follow it, not ``np_dtype`` (a float32 engine may return
        float64 arrays of float32 values)."""
        return self._state.cache["precision"]

    @property
    def backend_cls(self) -> type:
        return self._state.cache["cls"]

    @property
    def has_reference(self) -> bool:
        return self._state.reference_factory is not None

    @property
    def reference_spec(self) -> str | None:
        return self._state.reference_spec

    # -- selection ---------------------------------------------------------------------------
    def select(self, item) -> None:
        for mark in item.iter_markers("contract"):
            version = str(mark.args[0])
            if parse_version(version) > parse_version(CONTRACT_VERSION):
                pytest.skip(f"check introduced in contract {version}; unisim-contract implements {CONTRACT_VERSION}")
            rng = getattr(self.backend_cls, "contract_range", ">=1.0")
            if not version_in_range(version, rng):
                pytest.skip(f"check introduced in contract {version}; backend {self.label!r} implements {rng}")
        for mark in item.iter_markers("requires"):
            for cap in mark.args:
                cap = Capability(cap)
                if cap not in self.caps:
                    pytest.skip(f"backend {self.label!r} does not declare capability {cap.value!r} "
                                f"(required by this check)")
        # expected failures: the backend class's KNOWN_KIT_DEVIATIONS (read from the probed instance)
        entries = self._state.cache["known_deviations"]
        if entries:
            self._state.declared.update(entries)
            key = _xfail.match(item, entries)
            if key is not None:
                item.add_marker(pytest.mark.xfail(reason=f"expected failure ({self.label}): {entries[key]}",
                                                  strict=True))

    # -- shared simulations ------------------------------------------------------------------
    def shared(self, key: str, run):
        """``run(kit)`` once per session, its result (plain arrays, never a backend) cached under
        ``key``: the checks of one scenario each assert one property of the same simulation. An
        outcome (failure, skip, error) is cached too and raised again by every check that uses it."""
        store = self._state.cache.setdefault("shared", {})
        if key not in store:
            try:
                store[key] = (True, run(self))
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:  # noqa: BLE001 - pytest outcomes (skip/fail) are BaseExceptions
                store[key] = (False, exc)
        ok, value = store[key]
        if not ok:
            raise value
        return value

    # -- construction ------------------------------------------------------------------------
    def make(self, scene: str | Any = "free_body", num_envs: int = 2, sim_dt: float | None = None,
             reference: bool = False, options: dict | None = None, refusable: tuple[str, ...] = (),
             **scene_kwargs):
        """A backend on a kit scene (name) or a ``SceneCfg``; skipped when the backend refuses the
        scene for a declared feature (failed when undeclared), or for one of ``refusable`` (the
        feature a check is about: refusing it by name is the honest answer, declared or not).
        ``options`` adds backend options to the kit's (``--unisim-backend`` mode only; skipped with a
        fixture factory)."""
        if isinstance(scene, str):
            dt = scene_dt(scene) if sim_dt is None else sim_dt
            cfg = scene_cfg(scene, **scene_kwargs)
            label = scene
        else:
            cfg, dt, label = scene, (sim_dt if sim_dt is not None else 0.002), str(scene.model_file)
        factory = self._state.reference_factory if reference else self._factory
        if options:
            if self._state.factory is None:
                pytest.skip("backend provided by a fixture factory: options are the factory's business")
            from unisim_core.contract.factory import create_backend

            merged = {**self._state.options, **options}
            factory = lambda c, n, d: create_backend(self._state.spec, c, n, d, **merged)  # noqa: E731
        try:
            backend = factory(cfg, num_envs, dt)
        except UnsupportedCapabilityError as exc:
            if reference:
                pytest.skip(f"reference backend {self._state.reference_spec!r} cannot load scene {label!r}: {exc}")
            feature = refused_feature(exc)
            if feature in refusable:
                pytest.skip(f"backend {self.label!r} refused {feature} (scene {label!r}): {exc}")
            declared = self.unsupported_features()
            if feature not in declared:
                pytest.fail(f"backend {self.label!r} refused scene {label!r} for feature {feature!r}, which it does "
                            f"not declare unsupported (UNSUPPORTED_SCENE_FEATURES): {exc}", pytrace=False)
            pytest.skip(f"backend {self.label!r} declares scene feature {feature!r} unsupported "
                        f"({declared[feature]}); scene {label!r} needs it")
        self._open.append(backend)
        return backend

    def unsupported_features(self) -> dict[str, str]:
        """``{feature: reason}`` the backend declares it refuses: its class's ``UNSUPPORTED_SCENE_FEATURES``."""
        return {str(k): str(v) for k, v in self._state.cache["unsupported"].items()}

    def record_coverage(self, outcome: dict) -> None:
        """Keep ``{scene: refused feature or None}`` for the summary and the JSON report."""
        self._state.cache["coverage"] = dict(outcome)

    def try_load(self, scene: str):
        """Build then close a 1-env backend on ``scene``: ``None`` when it loads, else the refused feature."""
        try:
            backend = self._factory(scene_cfg(scene), 1, scene_dt(scene))
        except UnsupportedCapabilityError as exc:
            return refused_feature(exc)
        backend.close()
        return None

    def close_all(self) -> None:
        for b in self._open:
            try:
                b.close()
            except Exception:  # noqa: BLE001 - closing is best effort at teardown
                pass
        self._open.clear()


# ----------------------------------------------------------------------------------------------
class Props:
    """The properties of one shared scenario, each asserted on its own: ``with props("name"):``
    records the block's ``AssertionError`` (or ``pytest.fail``) under that name (the first one, so a loop over terms
    keeps going) instead of raising; ``props.skip(name, why)`` marks a property that does not
    apply. ``props.verdict(name)`` (in the check of that property) re-raises its failure, skips,
    or fails when the scenario never reached the property."""

    def __init__(self) -> None:
        self.failed: dict[str, BaseException] = {}
        self.skipped: dict[str, str] = {}
        self.seen: set[str] = set()

    @contextmanager
    def __call__(self, name: str):
        self.seen.add(name)
        try:
            yield
        except (AssertionError, pytest.fail.Exception) as exc:
            self.failed.setdefault(name, exc)

    def skip(self, name: str, why: str) -> None:
        self.skipped.setdefault(name, why)

    def verdict(self, name: str) -> None:
        if name in self.failed:
            raise self.failed[name]
        if name in self.seen:
            return
        if name in self.skipped:
            pytest.skip(self.skipped[name])
        pytest.fail(f"property {name!r} was not evaluated (the scenario stopped before it; failed: "
                    f"{sorted(self.failed) or 'none'})", pytrace=False)


def measured_precision(backend) -> type:
    """``np.float64`` when a value written with ``set_state`` reads back to float64 precision, else
    ``np.float32`` (always for ``np_dtype=float32``): qpos[0] + 0.1 + 2^-35 reads back within 1e-17 in
    float64 and off by ~1e-9 in float32 (its spacing near 0.3 is 3e-8)."""
    if np.dtype(backend.np_dtype) != np.float64:
        return np.float32
    try:
        qpos = np.array(backend.get_qpos(), dtype=np.float64)
        qpos[:, 0] += 0.1 + 2.0 ** -35
        backend.set_state(np.arange(backend.num_envs), qpos, np.zeros((backend.num_envs, backend.nv)))
        err = abs(float(backend.get_qpos()[0, 0]) - qpos[0, 0])
    except Exception:  # noqa: BLE001 - a probe that cannot write a state keeps np_dtype's precision
        return np.float64
    return np.float64 if err < 1e-12 else np.float32


def eps(dtype) -> float:
    return float(np.finfo(dtype).eps)


def home_ctrl(backend) -> np.ndarray:
    """Position targets of the quadruped's ``home`` keyframe for every env."""
    q = np.asarray(backend.get_keyframe_qpos("home"), dtype=np.float64)
    cols = backend.get_joint_state_qpos_indices(list(backend.get_actuator_joint_names()))
    return np.tile(q[cols], (backend.num_envs, 1))


def varied_quadruped_state(backend, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Distinct per-env states around ``home`` (different base pose, joints and velocities)."""
    rng = np.random.default_rng(seed)
    n = backend.num_envs
    q0 = np.asarray(backend.get_keyframe_qpos("home"), dtype=np.float64)
    qpos = np.tile(q0, (n, 1))
    qpos[:, 0:2] += rng.uniform(-1, 1, (n, 2))
    qpos[:, 2] += 0.05 + 0.02 * np.arange(n)
    yaw = rng.uniform(-1, 1, n)
    qpos[:, 3:7] = np.stack([np.cos(yaw / 2), 0 * yaw, 0 * yaw, np.sin(yaw / 2)], axis=1)
    qpos[:, 7:] += rng.uniform(-0.1, 0.1, (n, backend.nq - 7))
    qvel = rng.uniform(-0.5, 0.5, (n, backend.nv))
    return qpos, qvel


def all_getters(backend) -> dict[str, np.ndarray]:
    """Every state read of the contract (base, dof, all bodies in both frames, sensors)."""
    from unisim_core import Capability as C

    ids = np.arange(backend.num_bodies, dtype=np.int32)
    out = {
        "get_qpos": backend.get_qpos(), "get_qvel": backend.get_qvel(),
        "get_base_pos": backend.get_base_pos(), "get_base_quat": backend.get_base_quat(),
        "get_base_lin_vel": backend.get_base_lin_vel(), "get_base_ang_vel": backend.get_base_ang_vel(),
        "get_dof_pos": backend.get_dof_pos(), "get_dof_vel": backend.get_dof_vel(),
        "get_body_pos_w": backend.get_body_pos_w(ids), "get_body_quat_w": backend.get_body_quat_w(ids),
        "get_body_lin_vel_w": backend.get_body_lin_vel_w(ids), "get_body_ang_vel_w": backend.get_body_ang_vel_w(ids),
        "get_body_pos_b": backend.get_body_pos_b(ids), "get_body_quat_b": backend.get_body_quat_b(ids),
        "get_body_lin_vel_b": backend.get_body_lin_vel_b(ids), "get_body_ang_vel_b": backend.get_body_ang_vel_b(ids),
    }
    if C.SENSORS in backend.capabilities:
        for name in backend.model_info.sensor_names:
            out[f"get_sensor_data({name!r})"] = backend.get_sensor_data(name)
    if C.PHYSICS_SNAPSHOT in backend.capabilities:
        out["get_physics_state"] = backend.get_physics_state()
    return out


#: The capability a read of ``READS`` needs.
READ_NEEDS = {"get_sensor_data": "sensors", "get_physics_state": "physics_snapshot"}


def diff_by_read(a: dict[str, np.ndarray], b: dict[str, np.ndarray], rows=None) -> dict[str, list[str]]:
    """``diff_report`` of two ``all_getters`` results grouped by the names of ``READS``."""
    out: dict[str, list[str]] = {name: [] for name in READS}
    for line in diff_report(a, b, rows):
        out[line.split("(", 1)[0].split(" ", 1)[0]].append(line)
    return out


def assert_read_equal(kit, diffs: dict[str, list[str]], read: str, what: str) -> None:
    """The check of one read of ``READS``: skipped when the backend does not declare what it
    needs, failed with ``what`` and the differing reads when ``diffs[read]`` is not empty."""
    need = READ_NEEDS.get(read)
    if need is not None and need not in {c.value for c in kit.caps}:
        pytest.skip(f"backend {kit.label!r} does not declare {need!r} ({read})")
    assert not diffs[read], f"{what} in: {', '.join(diffs[read])}"


def diff_report(a: dict[str, np.ndarray], b: dict[str, np.ndarray], rows=None) -> list[str]:
    """Names of the reads whose (selected) rows differ bitwise, with the max deviation."""
    bad = []
    for k in a:
        x, y = np.asarray(a[k]), np.asarray(b[k])
        if rows is not None:
            x, y = x[rows], y[rows]
        if x.shape != y.shape or not np.array_equal(x, y):
            dev = float(np.max(np.abs(x.astype(np.float64) - y.astype(np.float64)))) if x.shape == y.shape else "shape"
            bad.append(f"{k} (max |diff| {dev})")
    return bad


def yaw_quat(yaw: float) -> np.ndarray:
    return np.array([np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])
