"""The reader's error (defined with the contract's MJCF tree reader, :mod:`unisim_core.contract.mjcf_tree`)."""

from __future__ import annotations

from unisim_core.contract.mjcf_tree import MjcfLiteError

__all__ = ["MjcfLiteError"]
