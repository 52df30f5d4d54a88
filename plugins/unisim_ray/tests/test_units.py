"""Pure parts of unisim-ray, no Ray instance: layout, options, scene transfer, plugin hooks,
and the shard host driven in-process (real inner backend: the engine-free ``fake``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import unisim_core
from unisim_core import SceneCfg, create_backend
from unisim_core.contract.errors import InvalidInputError, InvalidTypeError
from unisim_ray import RayOptions, split_envs, unisim_backend_spec, unisim_diagnostics
from unisim_ray._layout import describe_layout, route
from unisim_ray._scene import materialize_scene, pack_scene
from unisim_ray._shard import ShardHost

QUADRUPED = Path(unisim_core.__file__).parent / "scenes" / "quadruped.xml"


# ----------------------------------------------------------------------------- layout
@pytest.mark.parametrize(("n", "k", "expected"), [
    (6, 2, [(0, 3), (3, 6)]),
    (10, 3, [(0, 4), (4, 7), (7, 10)]),
    (5, 5, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]),
    (7, 1, [(0, 7)]),
])
def test_split_envs_is_contiguous_and_front_loads_the_remainder(n, k, expected):
    assert split_envs(n, k) == expected


def test_split_envs_rejects_more_shards_than_envs():
    with pytest.raises(ValueError, match="3 envs over 4 shards"):
        split_envs(3, 4)


def test_route_maps_env_ids_to_shard_local_ids_keeping_caller_order():
    ranges = split_envs(10, 3)  # [0:4) [4:7) [7:10)
    ids = np.array([8, 1, 5, 0, 9])
    got = [(k, rows.tolist(), local.tolist()) for k, rows, local in route(ids, ranges)]
    assert got == [(0, [1, 3], [1, 0]), (1, [2], [1]), (2, [0, 4], [1, 2])]
    assert describe_layout(10, 3) == "[0:4) [4:7) [7:10)"


# ----------------------------------------------------------------------------- options
def test_options_defaults_and_validation():
    o = RayOptions()
    assert (o.inner, o.shards, o.inner_options, o.address, o.call_timeout_s) == ("mujoco", 2, {}, None, 60.0)
    with pytest.raises(InvalidInputError, match="shards"):
        RayOptions(shards=0)
    with pytest.raises(InvalidInputError, match="cannot shard itself"):
        RayOptions(inner="ray")
    with pytest.raises(InvalidInputError, match="forwarded"):
        RayOptions(inner_options={"np_dtype": np.float64})
    with pytest.raises(InvalidTypeError):
        RayOptions(inner_options=[("threads", 1)])
    with pytest.raises(InvalidInputError, match="scene_transfer"):
        RayOptions(scene_transfer="nfs")
    with pytest.raises(InvalidInputError, match="call_timeout_s"):
        RayOptions(call_timeout_s=0)


def test_reuse_actors_is_a_real_bool_and_pool_keys_tell_actor_keywords_apart():
    """``reuse_actors`` takes a bool only; the idle pool's key is order-independent plain data of the
    actor keywords in one Ray session, and ``None`` (never pooled) for a placement group or keywords
    that are not plain data."""
    from unisim_ray import _pool

    assert RayOptions().reuse_actors is True and RayOptions(reuse_actors=False).reuse_actors is False
    for bad in (1, "yes", None):
        with pytest.raises(InvalidInputError, match="reuse_actors: expected a bool"):
            RayOptions(reuse_actors=bad)

    class Session:  # stands in for the ray module: one connected session
        @staticmethod
        def is_initialized():
            return True

        @staticmethod
        def get_runtime_context():
            class Ctx:
                gcs_address = "127.0.0.1:6379"
                get_job_id = staticmethod(lambda: "01000000")
                get_node_id = staticmethod(lambda: "abc")
            return Ctx

    base = {"num_cpus": 0.0, "max_restarts": 0, "runtime_env": {"env_vars": {"A": "1", "B": "2"}}}
    same = {"runtime_env": {"env_vars": {"B": "2", "A": "1"}}, "max_restarts": 0, "num_cpus": 0.0}
    assert _pool.pool_key(Session, base) == _pool.pool_key(Session, same) is not None
    assert _pool.pool_key(Session, base) != _pool.pool_key(Session, {**base, "num_cpus": 1.0})
    assert _pool.pool_key(Session, {**base, "scheduling_strategy": "SPREAD"}) is not None
    assert _pool.pool_key(Session, {**base, "scheduling_strategy": object()}) is None  # a placement group
    assert _pool.pool_key(Session, {**base, "runtime_env": {"x": object()}}) is None
    assert not _pool._reserves(_pool.pool_key(Session, base))
    assert _pool._reserves(_pool.pool_key(Session, {**base, "resources": {"big": 1}}))


def test_unknown_option_is_a_type_error_listing_valid_ones_before_ray_starts():
    with pytest.raises(TypeError, match="valid options: .*shards"):
        create_backend("ray", SceneCfg(QUADRUPED), 2, 0.01, inner="fake", shard=2)


def test_bad_inner_option_is_rejected_on_the_host_before_ray_starts():
    # The host validates inner_options against the inner backend's options class (from its
    # registry spec, no engine import), so a typo never reaches a cluster.
    with pytest.raises(TypeError, match="backend 'fake' got unknown option"):
        create_backend("ray", SceneCfg(QUADRUPED), 2, 0.01, inner="fake", inner_options={"thread": 1})
    with pytest.raises(unisim_core.BackendNotFoundError, match="no backend named 'nope'"):
        create_backend("ray", SceneCfg(QUADRUPED), 2, 0.01, inner="nope")


# ----------------------------------------------------------------------------- scene transfer
def _scene_dir(tmp_path: Path) -> Path:
    d = tmp_path / "model"
    (d / "parts").mkdir(parents=True)
    (d / "parts" / "body.xml").write_text("<mujoco/>")
    (d / "robot.xml").write_text("<mujoco><include file='parts/body.xml'/></mujoco>")
    (d / "__pycache__").mkdir()
    (d / "__pycache__" / "junk.pyc").write_bytes(b"x")
    return d / "robot.xml"


def test_directory_transfer_sends_the_model_directory_and_rebuilds_it(tmp_path):
    model = _scene_dir(tmp_path)
    payload, how = pack_scene(SceneCfg(model, default_keyframe="home"), "auto", 32.0)
    assert how == "directory"
    assert sorted(payload["files"]) == ["model/parts/body.xml", "model/robot.xml"]  # __pycache__ skipped
    out = tmp_path / "shard"
    out.mkdir()
    scene = materialize_scene(payload, str(out))
    assert Path(scene.model_file) == out / "model" / "robot.xml"
    assert (out / "model" / "parts" / "body.xml").read_text() == "<mujoco/>"
    assert scene.default_keyframe == "home"


def test_auto_falls_back_to_the_file_alone_when_the_directory_is_too_large(tmp_path, caplog):
    model = _scene_dir(tmp_path)
    (model.parent / "big.bin").write_bytes(b"\0" * 4096)
    payload, how = pack_scene(SceneCfg(model), "auto", 1 / 1024)  # 1 KiB limit
    assert how == "file" and list(payload["files"]) == ["model/robot.xml"]
    assert "will not resolve" in caplog.text
    with pytest.raises(InvalidInputError, match="scene_dir_limit_mb"):
        pack_scene(SceneCfg(model), "directory", 1 / 1024)


def test_path_transfer_sends_the_path_and_payload_paths_cannot_escape(tmp_path):
    payload, how = pack_scene(SceneCfg(QUADRUPED), "path", 32.0)
    assert how == "path" and materialize_scene(payload, "").model_file == str(QUADRUPED)
    evil = {"kind": "files", "files": {"../evil.xml": b"x"}, "model": "../evil.xml", "visual": None,
            "default_keyframe": None, "terrain": None}
    (tmp_path / "w").mkdir()
    with pytest.raises(InvalidInputError, match="escapes"):
        materialize_scene(evil, str(tmp_path / "w"))


# ----------------------------------------------------------------------------- plugin hooks
def test_spec_and_diagnostics_without_importing_ray():
    code = ("import sys, unisim_core, unisim_ray; from unisim_core.contract.registry import get_backend_spec, "
            "plugin_diagnostics; s = get_backend_spec('ray'); d = plugin_diagnostics('ray'); "
            "print(s.backend, 'layout' in ' '.join(d), 'ray' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "RAY_ADDRESS": ""})
    assert out.stdout.split() == ["unisim_ray._backend:RayBackend", "True", "False"]
    spec = unisim_backend_spec()
    assert spec.name == "ray" and spec.options_cls is RayOptions and spec.required_modules == ("ray",)
    assert "render" not in {c.value for c in spec.capabilities}
    diag = unisim_diagnostics()
    assert {"ray version", "cluster", "default layout"} <= set(diag)
    assert "[0:6) [6:11)" in diag["default layout"]


# ----------------------------------------------------------------------------- shard host in-process
def test_shard_host_packs_the_inner_state_exactly():
    payload, _ = pack_scene(SceneCfg(QUADRUPED), "auto", 32.0)
    host = ShardHost(1, 3, 6)
    try:
        res = host.start("fake", payload, 0.005, {"np_dtype": np.float32})
        ref = create_backend("fake", SceneCfg(QUADRUPED), 3, 0.005)
        ctrl = np.linspace(-1, 1, 3 * ref.num_actuators, dtype=np.float32).reshape(3, -1)
        rows, diverged = host.step(ctrl, 3, False, True, True)
        assert diverged is None
        ref.step(ctrl, 3)
        nq, nv = ref.nq, ref.nv
        nb = ref.num_bodies
        assert res["widths"][:6] == (nq, nv, 3 * nb, 4 * nb, 3 * nb, 3 * nb)
        assert rows.dtype == np.float32
        assert np.array_equal(rows[:, :nq], ref.get_qpos())
        assert np.array_equal(rows[:, nq:nq + nv], ref.get_qvel())
        xquat = rows[:, nq + nv + 3 * nb:nq + nv + 7 * nb].reshape(3, nb, 4)
        assert np.array_equal(xquat, ref.get_body_quat_w(np.arange(nb)))
        names = list(ref.model_info.sensor_names)
        assert np.array_equal(rows[:, -res["widths"][6]:], ref.get_sensor_data_batch(names))
        workdir = host._workdir
        assert workdir and Path(workdir).is_dir()
    finally:
        host.close()
    assert not Path(workdir).exists()  # the shard's scene copy is removed on close


class ThirdPartyError(NotImplementedError):
    """An exception of a module that is neither UniSim's nor the standard library's."""


def test_exceptions_cross_as_records_and_only_unisim_and_stdlib_classes_are_rebuilt():
    """A shard's exception crosses as the servant's error record: a UniSim class whose ``__init__``
    takes other arguments than its message (it does not pickle) is rebuilt as its own class; a
    class of another module is not imported or rebuilt on the host (#39): the record's text is
    carried by the RemoteError, which the backend treats as a fault (``ShardCallError``)."""
    import pickle

    from unisim_core import Capability, UnsupportedCapabilityError
    from unisim_core.plugin.servant import RemoteError
    from unisim_ray._shard import ShardActor, remote_cause

    actor = ShardActor(0, 0, 3)
    for exc in (UnsupportedCapabilityError("thirdparty", Capability.MOCAP, "no mocap bodies"),
                ThirdPartyError("backend 'thirdparty': no mocap bodies")):
        actor.host.scan = lambda key, exc=exc: (_ for _ in ()).throw(exc)
        with pytest.raises(RemoteError) as info:
            actor.call("scan", 0)
        carried = pickle.loads(pickle.dumps(info.value))  # what crosses to the host
        rebuilt = remote_cause(carried)
        if isinstance(exc, UnsupportedCapabilityError):
            assert type(rebuilt) is UnsupportedCapabilityError and rebuilt.capability is Capability.MOCAP
            assert str(rebuilt) == str(exc)
        else:
            assert type(rebuilt) is RemoteError and "ThirdPartyError: backend 'thirdparty': no mocap bodies" in str(
                rebuilt)


def test_placement_resource_and_restart_options_are_validated_naming_the_argument():
    o = RayOptions(placement="spread", shard_resources={"sim_node": 1}, max_shard_restarts=2)
    assert (o.placement, o.shard_resources, o.max_shard_restarts) == ("spread", {"sim_node": 1}, 2)
    assert RayOptions().max_shard_restarts == 0  # recovery costs per step: opt-in
    cases = [
        ({"placement": "scatter"}, r"placement: expected None or one of \['pack', 'spread'\], got 'scatter'"),
        ({"shard_resources": {"CPU": 1}}, "shard_resources: 'CPU' is not a custom resource; use actor_num_cpus"),
        ({"shard_resources": {"sim_node": 0}}, r"shard_resources\['sim_node'\]: expected a positive number, got 0"),
        ({"max_shard_restarts": -1}, "max_shard_restarts: expected an int >= 0, got -1"),
        ({"max_shard_restarts": True}, "max_shard_restarts: expected an int >= 0, got True"),
        ({"placement": "pack", "actor_options": {"scheduling_strategy": "SPREAD"}},
         r"actor_options: \['scheduling_strategy'\] conflict with placement='pack'"),
    ]
    for kwargs, message in cases:
        with pytest.raises(InvalidInputError, match=message):
            RayOptions(**kwargs)


def test_recovery_record_folds_model_writes_to_the_latest_value_per_cell():
    from unisim_ray._recovery import RecoveryRecord

    rec = RecoveryRecord([(0, 3), (3, 6)])
    rec.record_field(1, "body_mass", np.array([0, 2]), np.array([1, 4]), np.array([[1.0, 2.0], [3.0, 4.0]]))
    rec.record_field(1, "gravity", np.array([1]), None, np.array([[0.0, 0.0, -5.0]]))
    rec.record_field(1, "body_mass", np.array([2]), np.array([1]), np.array([[9.0]]))
    writes = [(t, ids.tolist(), None if tg is None else tg.tolist(), v.tolist())
              for t, ids, tg, v in rec.field_writes(1)]
    assert writes == [("body_mass", [0, 2], [1], [[1.0], [9.0]]), ("body_mass", [0, 2], [4], [[2.0], [4.0]]),
                      ("gravity", [1], None, [[0.0, 0.0, -5.0]])]
    assert rec.field_writes(0) == []
    force = np.arange(6 * 2 * 3, dtype=float).reshape(6, 2, 3)
    rec.stage_forces(False, np.array([1, 2]), force, None)
    assert np.array_equal(rec.forces(1)[0][1], force[3:6])
    rec.stage_forces(True, np.array([1]), force[:, :1], None)  # cleared the earlier wrench first
    assert len(rec.forces(0)) == 1
    rec.clear_forces()
    assert rec.forces(0) == []


@pytest.mark.parametrize(("inner", "tier", "options"), [
    ("mujoco", "exact", {"threads": 1}),  # the batch's integration state, warm start included
    ("fake", "snapshot", {}),  # the contract's physics snapshot (the fake has no hidden state)
])
def test_a_shard_rebuilt_from_restore_rows_continues_bit_for_bit(inner, tier, options):
    """Shard host in-process, recovery on: a second host built from the first one's restore rows
    and model writes steps on exactly like the first."""
    if inner == "mujoco":
        pytest.importorskip("unisim_mujoco")
    scene = SceneCfg(QUADRUPED, default_keyframe="home")
    payload, _ = pack_scene(scene, "auto", 32.0)
    hosts = [ShardHost(0, 0, 3), ShardHost(0, 0, 3)]
    kwargs = {"np_dtype": np.float64, **options}
    try:
        first = hosts[0].start(inner, payload, 0.005, kwargs, track=True)
        assert first["restore_tier"] == tier
        ctrl = np.tile(hosts[0].backend.model_info.qpos0[7:], (3, 1)).astype(np.float32)
        write = ("body_mass", np.array([1]), np.array([2]), np.array([[3.5]]))
        hosts[0].write_model_field(*write)
        for _ in range(20):  # into contact: MuJoCo's warm start matters from here on
            (_, _), rows = hosts[0].step(ctrl, 2, False, True, False)
        hosts[1].start(inner, payload, 0.005, kwargs, track=True)
        hosts[1].recover([write], [], [], rows)
        for _ in range(20):
            (a, _), _ = hosts[0].step(ctrl, 2, False, True, True)
            (b, _), _ = hosts[1].step(ctrl, 2, False, True, True)
            assert np.array_equal(a, b)
    finally:
        for h in hosts:
            h.close()
