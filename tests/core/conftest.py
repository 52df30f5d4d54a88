"""Fixtures for the core tests (helpers live in ``core_helpers``)."""

from __future__ import annotations

import pytest
from core_helpers import make

from unisim_core.plugin.fake import FakeBackend


@pytest.fixture
def free_body() -> FakeBackend:
    return make("free_body", 3)


@pytest.fixture
def quad() -> FakeBackend:
    return make("quadruped", 3)


@pytest.fixture
def arm() -> FakeBackend:
    return make("fixed_arm", 3)
