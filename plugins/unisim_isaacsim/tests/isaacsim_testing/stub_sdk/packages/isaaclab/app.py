"""STUB ``isaaclab.app.AppLauncher`` and the Kit app with its extension manager."""

from __future__ import annotations

import os

from isaacsim_testing.stub_sdk import FAIL_EXT_ENV


class ExtensionManager:
    """STUB of ``omni.ext.ExtensionManager``: ``set_extension_enabled_immediate`` returns whether it enabled."""

    def __init__(self) -> None:
        self.enabled: set[str] = set()

    def set_extension_enabled_immediate(self, name: str, enabled: bool) -> bool:
        if name in os.environ.get(FAIL_EXT_ENV, "").split(","):
            return False
        (self.enabled.add if enabled else self.enabled.discard)(name)
        return True

    def is_extension_enabled(self, name: str) -> bool:
        return name in self.enabled


class KitApp:
    """STUB of ``omni.kit.app.IApp``."""

    def __init__(self) -> None:
        self.manager = ExtensionManager()
        self.updates = 0

    def get_extension_manager(self) -> ExtensionManager:
        return self.manager

    def update(self) -> None:
        self.updates += 1


APP: KitApp | None = None


class AppLauncher:
    """STUB: the keywords the worker passes (Isaac Lab 2.3.2 / 3.0.0 ``isaaclab/app/app_launcher.py``)."""

    def __init__(self, *, headless: bool, device: str, enable_cameras: bool) -> None:
        global APP
        if not isinstance(headless, bool) or not isinstance(enable_cameras, bool):
            raise TypeError("AppLauncher: headless and enable_cameras are booleans")
        APP = self.app = KitApp()
        self.device = device
