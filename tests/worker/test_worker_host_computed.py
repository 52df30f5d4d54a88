"""A worker-hosted backend offers the hosted backend's capabilities: what the inner computes with the
core's shared code from its model and the contract's state (height scans and terrain from its
height-field sampler, the site Jacobian, video frames) the host computes from the state in shared
memory; native versions and mocap bindings are forwarded as ops. Answers are compared bit for bit
with the backend run in-process and the ops the host sent are recorded. The whole kit runs through a
worker-hosted MuJoCo in plugins/unisim_mujoco/tests/test_kit_on_mujoco.py (these capabilities included)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from unisim_core import Capability, SceneCfg, TerrainCfg, create_backend
from unisim_core.contract.errors import UnsupportedCapabilityError
from unisim_core.plugin.fake import FakeBackend
from unisim_core.plugin.worker.backend import WorkerBackend
from unisim_core.scenes import scene_path

HERE = Path(__file__).resolve().parent
HFIELD = SceneCfg(scene_path("quadruped_hfield"), terrain=TerrainCfg(hfield_geom="terrain", rows=2, cols=2))


@pytest.fixture(autouse=True)
def importable(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.syspath_prepend(str(HERE))


class FewerOps(WorkerBackend):
    """The hosted fake seen as a worker of another kind, serving no ``height_field``, ``create_scanner``,
    ``bind_mocap`` or ``site_jacobian`` op."""

    def __init__(self, scene: SceneCfg, n: int) -> None:
        super().__init__(scene, n, 0.005, target="fake", target_cls=FakeBackend)

    def _setup(self, desc):
        hidden = {"height_field", "create_scanner", "bind_mocap", "site_jacobian"}
        self._client.ops = [op for op in self._client.ops if op not in hidden]
        super()._setup(desc)


def _pair(target: str, scene: SceneCfg, n: int):
    """``(worker-hosted, in-process)`` backends and the list of ops the host sends to the worker."""
    b = create_backend(target, scene, n, 0.005, isolation="subprocess")
    sent: list[str] = []
    call = b._call
    b._call = lambda op, **args: (sent.append(op), call(op, **args))[1]
    return b, create_backend(target, scene, n, 0.005), sent


def _turned_states(ref, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-env different states: base shifted and yawed, legs bent."""
    qpos = np.tile(ref.get_default_qpos(), (n, 1))
    yaw = np.linspace(0.3, 2.0, n)
    qpos[:, 0] = np.linspace(-0.4, 0.6, n)
    qpos[:, 3], qpos[:, 6] = np.cos(yaw / 2), np.sin(yaw / 2)
    qpos[:, 7:] += np.linspace(-0.2, 0.2, ref.nq - 7)
    return qpos, np.zeros((n, ref.nv))


def test_shared_scans_terrain_and_jacobian_are_computed_in_the_host_bit_for_bit():
    """The fake scans, spawns and differentiates with the core's shared code: the host does too, from the
    sampler (one ``height_field`` op) and the body poses in shared memory, with no other op."""
    b, ref, sent = _pair("fake", HFIELD, 3)
    try:
        assert b.capabilities == ref.capabilities
        qpos, qvel = _turned_states(ref, 3)
        for x in (b, ref):
            x.set_state(np.array([2, 0, 1]), qpos[[2, 0, 1]], qvel)
        tb, tr = b.get_terrain_spawn_data(), ref.get_terrain_spawn_data()
        assert np.array_equal(tb.origins, tr.origins) and tb.size == tr.size and tb.hfield_geom_id == tr.hfield_geom_id
        xy = np.array([[0.3, -0.2], [1.0, 2.0], [-9.0, 0.0]])
        assert np.array_equal(tb.sample_height(xy), tr.sample_height(xy))
        kw = dict(hfield_geom_id=ref.get_geom_id("terrain"), offsets=np.array([[2.0, 0.0], [-1.5, 1.0], [0.0, -3.0]]),
                  frame_body_id=ref.base_body_id, alignment="yaw")
        scanners = [x.create_hfield_scanner(**kw) for x in (b, ref)]
        dofs = np.arange(ref.nv)
        ctrl = np.full((3, ref.num_actuators), 0.2, np.float32)
        for _ in range(2):
            got, want = scanners[0].scan(), scanners[1].scan()
            assert got.dtype == want.dtype and np.array_equal(got, want)
            assert np.ptp(want) > 0.01  # the points lie on different heights
            for j_got, j_want in zip(b.get_site_jacobian_w(0, dofs), ref.get_site_jacobian_w(0, dofs)):
                assert j_got.dtype == j_want.dtype and np.array_equal(j_got, j_want)
            for x in (b, ref):
                x.step(ctrl, 5)
        assert sent.count("height_field") == 1  # the sampler crossed once, for the scanner and the terrain
        crossed = {"scan", "create_scanner", "terrain_spawn_data", "sample_height", "site_jacobian"}
        assert not crossed & set(sent), sent
    finally:
        b.close()
        ref.close()


def test_native_jacobian_scanner_and_terrain_are_forwarded_and_equal_in_process():
    b, ref, sent = _pair("sample_backends:NativeFake", HFIELD, 3)
    try:
        assert {Capability.HEIGHT_SCAN, Capability.TERRAIN, Capability.SITE_JACOBIAN} <= b.capabilities
        qpos, qvel = _turned_states(ref, 3)
        for x in (b, ref):
            x.set_state(np.arange(3), qpos, qvel)
        tb, tr = b.get_terrain_spawn_data(), ref.get_terrain_spawn_data()
        assert np.array_equal(tb.origins, tr.origins) and tb.size == tr.size
        xy = np.array([[0.3, -0.2], [1.0, 2.0]])
        assert np.array_equal(tb.sample_height(xy), tr.sample_height(xy))
        kw = dict(hfield_geom_id=ref.get_geom_id("terrain"), offsets=np.array([[0.3, 0.0], [-0.2, 0.4]]),
                  frame_body_id=ref.base_body_id, alignment="full")
        got, want = (x.create_hfield_scanner(**kw).scan() for x in (b, ref))
        assert got.dtype == want.dtype and np.array_equal(got, want)
        dofs = np.arange(ref.nv)
        for j_got, j_want in zip(b.get_site_jacobian_w(0, dofs), ref.get_site_jacobian_w(0, dofs)):
            assert np.array_equal(j_got, j_want)
        assert all(sent.count(op) == 1 for op in ("create_scanner", "scan", "terrain_spawn_data", "sample_height",
                                                   "site_jacobian")), sent
        assert "height_field" not in sent
    finally:
        b.close()
        ref.close()


def test_a_worker_without_the_ops_offers_only_what_the_host_can_do():
    """A worker of another kind serving no ``height_field``, ``create_scanner``, ``bind_mocap`` or
    ``site_jacobian`` op: the fake's height scans and terrain need the sampler and are not offered
    (refused by name); its site Jacobian is the core's, computed in the host, and stays."""
    with FewerOps(HFIELD, 2) as b:
        assert Capability.SITE_JACOBIAN in b.capabilities
        assert not {Capability.HEIGHT_SCAN, Capability.TERRAIN} & b.capabilities
        with pytest.raises(UnsupportedCapabilityError, match="height_scan"):
            b.create_hfield_scanner(hfield_geom_id=b.get_geom_id("terrain"), offsets=np.zeros((1, 2)),
                                    frame_body_id=b.base_body_id)
        assert b.get_terrain_spawn_data() is None
        jacp, _ = b.get_site_jacobian_w(0, np.arange(b.nv))
        np.testing.assert_array_equal(jacp[:, :, :3], np.broadcast_to(np.eye(3), (2, 3, 3)))  # free root: identity


def test_shared_capabilities_name_what_the_core_computes_for_the_backend():
    """What a host may compute itself: the capabilities whose primitives are the core's shared ones."""
    from sample_backends import NativeFake

    from unisim_core.contract._playback import Playback
    from unisim_core.plugin.servant.ops import shared_capabilities_of

    C = Capability

    class Frames(FakeBackend):  # declares video: the core's renderer draws its frames
        CAPABILITIES = FakeBackend.CAPABILITIES | {C.VIDEO_CAPTURE, C.PLAYBACK}

    class OwnFrames(Frames):  # a renderer of its own
        def _capture_frame(self):
            return Playback._capture_frame(self)

    with FakeBackend(HFIELD, 1, 0.005) as fake, NativeFake(HFIELD, 1, 0.005) as native, \
            Frames(HFIELD, 1, 0.005) as frames, OwnFrames(HFIELD, 1, 0.005) as own:
        assert shared_capabilities_of(fake) == {C.SITE_JACOBIAN, C.HEIGHT_SCAN, C.TERRAIN}
        assert shared_capabilities_of(native) == frozenset()
        assert shared_capabilities_of(own) == {C.SITE_JACOBIAN, C.HEIGHT_SCAN, C.TERRAIN}
        assert shared_capabilities_of(frames) == shared_capabilities_of(own) | {C.VIDEO_CAPTURE, C.PLAYBACK}

