"""The version of unisim-contract (the distribution's pyproject.toml carries the same string)."""

__version__ = "0.1.0"
