"""The ``make`` fixture of a backend distribution's own tests, written once.

``make = backend_fixture(MjwarpBackend, device="cpu", np_dtype=np.float64)`` in a ``conftest.py``
gives its tests ``make(scene, num_envs=2, sim_dt=0.002, **options)``: the backend on ``scene`` (a
kit scene name, see :func:`unisim_conformance.scene_path`, or an MJCF path), ``options`` over the
defaults given; every backend a test made is closed after it. :func:`backend_factory` is the same
as a context manager.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from unisim_core import SceneCfg

from . import scene_path

__all__ = ["backend_factory", "backend_fixture"]


@contextlib.contextmanager
def backend_factory(cls: type, **defaults: Any) -> Iterator[Callable[..., Any]]:
    """Yields ``make(scene, num_envs=2, sim_dt=0.002, **options)``; closes what it made on exit."""
    made = []

    def make(scene, num_envs: int = 2, sim_dt: float = 0.002, **options):
        path = scene if Path(str(scene)).suffix == ".xml" else scene_path(scene)
        sim = cls(SceneCfg(str(path)), num_envs, sim_dt, **{**defaults, **options})
        made.append(sim)
        return sim

    try:
        yield make
    finally:
        for sim in made:
            sim.close()


def backend_fixture(cls: type, *, name: str = "make", **defaults: Any):
    """A function-scoped pytest fixture ``name`` yielding :func:`backend_factory`'s ``make``."""

    def fixture():
        with backend_factory(cls, **defaults) as make:
            yield make

    fixture.__doc__ = (f"``{name}(scene, num_envs=2, sim_dt=0.002, **options)``: a {cls.__name__} "
                       f"(defaults {defaults}) on a kit scene name or a path, closed after the test.")
    return pytest.fixture(name=name)(fixture)
