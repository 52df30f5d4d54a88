"""STUB ``isaaclab`` (see ``isaacsim_testing.stub_sdk``): Isaac Lab 2.3.2 reports its extension's
version (``isaaclab/__init__.py``: ``config/extension.toml`` 0.54.2), Isaac Lab 3.0.0 its distribution's."""

from isaacsim_testing.stub_sdk import lab_major

__version__ = "0.54.2" if lab_major() == 2 else "3.0.0"
