"""STUB ``isaaclab_physx.physics``: ``PhysxCfg`` (Isaac Lab 3.0.0 ``isaaclab_physx/physics/physx_manager_cfg.py``)."""

from isaaclab._cfg import PHYSX_FIELDS, cfg_class
from isaacsim_testing.stub_sdk import lab_major

if lab_major() != 3:
    raise ImportError("isaaclab_physx exists from Isaac Lab 3.0")

PhysxCfg = cfg_class("PhysxCfg", PHYSX_FIELDS)
