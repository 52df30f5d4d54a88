"""STUB ``isaaclab.sim.converters``: ``MjcfConverter`` / ``MjcfConverterCfg``.

Isaac Lab 2.3.2 (``isaaclab/sim/converters/mjcf_converter.py``): ``file_basename, _ =
os.path.basename(cfg.asset_path).split(".")`` (exactly one dot), ``MJCFCreateAsset`` with
``prim_path=f"/{file_basename}"``, a command that exists only once ``isaacsim.asset.importer.mjcf``
is enabled (``omni.kit.commands.execute`` then does nothing); output ``<usd_dir>/<stem>.usd``
(``asset_converter_base.py``). Isaac Lab 3.0.0: ``os.path.splitext``, the importer enabled by the
converter, output ``<usd_dir>/<stem>/<stem>.usda``. The USD is written by the STUB importer
(:func:`isaacsim_testing.stub_sdk.engine.write_importer_usd`).
"""

from __future__ import annotations

import os
from typing import Any

from isaacsim_testing.stub_sdk import lab_major
from isaacsim_testing.stub_sdk.engine import write_importer_usd

import isaaclab.app as app
from isaaclab._cfg import MISSING, cfg_class

EXT = "isaacsim.asset.importer.mjcf"
_BASE = {"asset_path": MISSING, "usd_dir": None, "usd_file_name": None, "force_usd_conversion": False,
         "make_instanceable": True}
if lab_major() == 2:
    MjcfConverterCfg = cfg_class("MjcfConverterCfg", {**_BASE, "link_density": 0.0, "import_inertia_tensor": True,
                                                      "fix_base": MISSING, "import_sites": True,
                                                      "self_collision": False})
else:
    MjcfConverterCfg = cfg_class("MjcfConverterCfg", {**_BASE, "fix_base": False, "self_collision": False,
                                                      "merge_mesh": False, "link_density": 0.0})


class MjcfConverter:
    def __init__(self, cfg: Any) -> None:
        if not os.path.isfile(cfg.asset_path):
            raise ValueError(f"The asset path does not exist: {cfg.asset_path}")
        self.usd_dir = cfg.usd_dir
        os.makedirs(self.usd_dir, exist_ok=True)
        manager = app.APP.get_extension_manager()
        if lab_major() == 2:
            file_basename, _ = os.path.basename(cfg.asset_path).split(".")
            self.usd_path = os.path.join(self.usd_dir, f"{file_basename}.usd")
            if manager.is_extension_enabled(EXT):  # else: MJCFCreateAsset is not a registered command
                write_importer_usd(cfg.asset_path, self.usd_path, file_basename)
        else:
            file_basename = os.path.splitext(os.path.basename(cfg.asset_path))[0]
            manager.set_extension_enabled_immediate(EXT, True)  # Isaac Lab 3.0 enables it; no check
            self.usd_path = os.path.join(self.usd_dir, file_basename, f"{file_basename}.usda")
            os.makedirs(os.path.dirname(self.usd_path), exist_ok=True)
            if not manager.is_extension_enabled(EXT):
                raise ModuleNotFoundError(f"No module named '{EXT}'")
            write_importer_usd(cfg.asset_path, self.usd_path, file_basename)
