"""The version of unisim-core (the distribution's pyproject.toml carries the same string)."""

__version__ = "0.1.0"
