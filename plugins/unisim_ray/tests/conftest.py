"""Fixtures shared by the unisim-ray tests."""

from __future__ import annotations

import logging

import pytest


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray instance for the module (4 logical CPUs, so a 3-shard layout fits on 2 cores)."""
    ray = pytest.importorskip("ray")
    ray.init(address="local", num_cpus=4, include_dashboard=False, log_to_driver=False,
             logging_level=logging.WARNING)
    yield
    ray.shutdown()


@pytest.fixture
def made():
    """Backends a test builds, closed after it."""
    backends = []
    yield backends
    for b in backends:
        b.close()
