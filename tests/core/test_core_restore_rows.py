"""The restore-rows hooks' defaults (what a rebuilt Ray shard is loaded with): the physics snapshot
row, or qpos and qvel for a backend without snapshots."""

from __future__ import annotations

import numpy as np
from core_helpers import make

from unisim_core.contract.capabilities import Capability
from unisim_core.plugin.fake import FakeBackend


class NoSnapshotFake(FakeBackend):
    CAPABILITIES = FakeBackend.CAPABILITIES - {Capability.PHYSICS_SNAPSHOT}


def _pair(cls):
    """Two fresh double pendulums of ``cls``; the first swung for 15 substeps."""
    scene = make("double_pendulum").scene
    a, b = (cls(scene, 2, 0.002, np_dtype=np.float64) for _ in range(2))
    a.set_state(np.arange(2), a.get_qpos(), np.random.default_rng(0).normal(0, 1.0, (2, a.nv)))
    for _ in range(5):
        a.step(np.zeros((2, a.num_actuators)), 3)
    return a, b


def test_snapshot_tier_rows_are_the_physics_snapshot_and_restore_every_read():
    a, b = _pair(FakeBackend)
    assert a.restore_tier == "snapshot"
    rows = a._restore_rows()
    np.testing.assert_array_equal(rows, a.get_physics_state())
    np.testing.assert_array_equal(a._restore_rows(np.array([1])), rows[1:])
    b._load_restore_rows(rows)
    np.testing.assert_array_equal(b.get_physics_state(), a.get_physics_state())
    ids = np.arange(a.num_bodies)
    np.testing.assert_array_equal(b.get_body_pos_w(ids), a.get_body_pos_w(ids))


def test_backends_without_snapshots_restore_qpos_and_qvel():
    a, b = _pair(NoSnapshotFake)
    assert a.restore_tier == "qpos_qvel"
    rows = a._restore_rows()
    assert rows.shape == (2, a.nq + a.nv) and rows.dtype == np.float64
    b._load_restore_rows(rows)
    np.testing.assert_array_equal(b.get_qpos(), a.get_qpos())
    np.testing.assert_array_equal(b.get_qvel(), a.get_qvel())
