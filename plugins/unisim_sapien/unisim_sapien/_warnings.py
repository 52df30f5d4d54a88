"""Warnings of the SAPIEN backend (importable without sapien)."""

from __future__ import annotations

__all__ = ["SapienModellingWarning"]


class SapienModellingWarning(UserWarning):
    """A model value PhysX gives otherwise than MuJoCo, named with both values (the scene still builds)."""
