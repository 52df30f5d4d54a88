"""Helpers shared by the MotrixSim plugin tests (not fixtures)."""

from __future__ import annotations

import os

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CONF = os.path.join(ROOT, "conformance", "unisim_conformance", "scenes")
CORE = os.path.join(ROOT, "unisim_core", "scenes")


def scene_path(name: str) -> str:
    for d in (CONF, CORE):
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    raise FileNotFoundError(name)


def home_state(b, n=None):
    n = b.num_envs if n is None else n
    return np.tile(b.get_default_qpos().astype(np.float64), (n, 1)), np.zeros((n, b.nv))
