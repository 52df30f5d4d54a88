"""Fixtures of the kit's checks: the backend factory, capability selection, bookkeeping."""

from __future__ import annotations

import pytest

from unisim_conformance import plugin
from unisim_conformance._support import Kit


def pytest_ignore_collect(collection_path, config):
    # Belt and braces: never collect the checks when the kit plugin is not active
    # (e.g. ``-p no:unisim_conformance`` and a path that reaches this folder).
    if not plugin.is_active(config):
        return True
    return None


@pytest.fixture
def kit(request):
    """The backend under test (``kit.make(scene, num_envs)``) plus declared capabilities."""
    state = request.config.stash[plugin.KIT]
    k = Kit(request, state)
    yield k
    k.close_all()


@pytest.fixture(autouse=True)
def _unisim_select(request, kit):
    """Skip by ``requires``/``contract`` markers; apply fixture-declared expected failures."""
    kit.select(request.node)
    yield
